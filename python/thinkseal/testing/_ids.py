"""Tool-call ids made the way each provider makes them (deterministic, so a
scripted conversation is reproducible)."""

from __future__ import annotations

import hashlib
import string

_ALPHANUMERIC = string.ascii_letters + string.digits


def random_part(seed: str, length: int, alphabet: str = _ALPHANUMERIC) -> str:
    """``length`` characters of ``alphabet`` derived from ``seed``."""
    out: list[str] = []
    counter = 0
    while len(out) < length:
        for byte in hashlib.sha256(f"{seed}/{counter}".encode()).digest():
            out.append(alphabet[byte % len(alphabet)])
        counter += 1
    return "".join(out[:length])


def tool_call_id(provider: str, seed: str) -> str:
    """A tool-call id as ``provider`` issues one."""
    if provider in ("anthropic", "vertex-anthropic"):
        return "toolu_01" + random_part(seed, 22)
    if provider == "bedrock":
        return "tooluse_" + random_part(seed, 22)
    if provider == "mistral":
        return random_part(seed, 9)
    if provider == "deepseek":
        return "call_00_" + random_part(seed, 24)
    if provider == "openrouter":
        return "toolu_vrtx_01" + random_part(seed, 22)
    if provider == "zai":
        return "call_" + random_part(seed, 24, string.digits + "abcdef")
    return "call_" + random_part(seed, 24)  # openai, openai-responses
