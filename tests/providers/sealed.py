"""The sealed thinking each provider returns, as test data for the
cross-provider tests: ``SEALED[provider_id](k)`` is the k-th reply's thinking
as that provider returns it, and the secrets in it (signatures, redacted or
opaque data) as they appear in a request body. A test asserts it covers
``thinkseal.providers.PROVIDER_IDS`` exactly.
"""

from __future__ import annotations

import base64
import json
from collections.abc import Callable, Mapping
from types import MappingProxyType

from thinkseal import Native, ThinkingBlock
from thinkseal.testing import EMULATOR_IDS, emulator

Sealed = Callable[[int], tuple[list[ThinkingBlock], list[str]]]


def _claude_sealed(k: int) -> tuple[list[ThinkingBlock], list[str]]:
    redacted = base64.b64encode(f"RED-{k}~".encode()).decode()
    return [ThinkingBlock.Text(f"think {k}", f"SIG-{k}~"), ThinkingBlock.Redacted(redacted)], [f"SIG-{k}~", redacted]


def _openrouter_sealed(k: int) -> tuple[list[ThinkingBlock], list[str]]:
    item = json.dumps({"type": "reasoning.encrypted", "data": f"OPQ-{k}~", "index": 0}, separators=(",", ":"))
    return [ThinkingBlock.Text(f"think {k}"), ThinkingBlock.Opaque("openrouter", item)], [f"OPQ-{k}~"]


def _mistral_sealed(k: int) -> tuple[list[ThinkingBlock], list[str]]:
    return [ThinkingBlock.Text(f"think {k}", f"MSIG-{k}~")], [f"MSIG-{k}~"]


def _gemini_sealed(provider: str) -> Sealed:
    # A thought summary and the signature that goes on the part after it.
    def sealed(k: int) -> tuple[list[ThinkingBlock], list[str]]:
        signature = f"GSIG{k}x{provider[0]}"
        marker = json.dumps({"thoughtSignature": signature}, separators=(",", ":"))
        return [ThinkingBlock.Text(f"think {k}"), ThinkingBlock.Opaque(provider, marker)], [signature]

    return sealed


def _gemini_openai_sealed(k: int) -> tuple[list[ThinkingBlock], list[str]]:
    # A thought summary and the message's own signature (its extra_content).
    signature = f"GOSIG{k}x"
    extra = json.dumps({"extra_content": {"google": {"thought_signature": signature}}}, separators=(",", ":"))
    return [ThinkingBlock.Text(f"think {k}"), ThinkingBlock.Opaque("gemini-openai", extra)], [signature]


def _openai_responses_sealed(k: int) -> tuple[list[ThinkingBlock], list[str]]:
    # A reasoning item with its summary and its encrypted content.
    item = {"encrypted_content": f"ENC{k}~", "id": f"rs_{k}", "summary": [], "type": "reasoning"}
    return [ThinkingBlock.Text(f"think {k}"), ThinkingBlock.Opaque("openai-responses", json.dumps(item))], [f"ENC{k}~"]


def _unsigned(k: int) -> tuple[list[ThinkingBlock], list[str]]:
    return [ThinkingBlock.Text(f"think {k}")], []  # plain-text reasoning: nothing sealed


SEALED: Mapping[str, Sealed] = MappingProxyType(
    {
        "anthropic": _claude_sealed,
        "bedrock": _claude_sealed,
        "openrouter": _openrouter_sealed,
        "deepseek": _unsigned,
        "zai": _unsigned,
        "ollama": _unsigned,
        "mistral": _mistral_sealed,
        "vertex-anthropic": _claude_sealed,
        "gemini": _gemini_sealed("gemini"),
        "vertex-gemini": _gemini_sealed("vertex-gemini"),
        "gemini-openai": _gemini_openai_sealed,
        "openai": _unsigned,
        "openai-responses": _openai_responses_sealed,
    }
)


def _native(provider: str, block: Callable[[str], dict[str, object]]) -> Callable[[int], tuple[Native, str]]:
    def native(k: int) -> tuple[Native, str]:
        secret = f"NATSEC{k}x{provider}~"
        return Native.of(provider, block(secret)), secret

    return native


def _content_block(secret: str) -> dict[str, object]:
    # A server tool's result as Claude returns it (encrypted, for the same model only).
    return {
        "type": "web_search_tool_result",
        "tool_use_id": "srvtoolu_1",
        "content": [{"type": "web_search_result", "url": "https://e.x", "encrypted_content": secret}],
    }


def _gemini_part(secret: str) -> dict[str, object]:
    return {"executableCode": {"language": "PYTHON", "code": f"print({secret!r})"}}


def _responses_item(secret: str) -> dict[str, object]:
    return {"type": "compaction", "id": "cmp_1", "encrypted_content": secret}


NATIVE: Mapping[str, Callable[[int], tuple[Native, str]] | None] = MappingProxyType(
    {
        "anthropic": _native("anthropic", _content_block),
        "bedrock": _native("bedrock", lambda s: {"citationsContent": {"content": [{"text": s}], "citations": []}}),
        "openrouter": _native("openrouter", _content_block),
        "deepseek": _native("deepseek", _content_block),
        "zai": _native("zai", _content_block),
        "ollama": None,  # Ollama's messages have no blocks to carry one
        "mistral": _native("mistral", lambda s: {"type": "reference", "reference_ids": [1], "note": s}),
        "vertex-anthropic": _native("vertex-anthropic", _content_block),
        "gemini": _native("gemini", _gemini_part),
        "vertex-gemini": _native("vertex-gemini", _gemini_part),
        "openai": _native("openai", _content_block),
        "openai-responses": _native("openai-responses", _responses_item),
        "gemini-openai": _native("gemini-openai", _content_block),
    }
)
"""A native block each provider's reply may carry (a block of a kind the
adapter keeps verbatim), with the secret in it; None where none can come."""

OPTIONS: Mapping[str, Mapping[str, object]] = MappingProxyType({pid: emulator(pid).options for pid in EMULATOR_IDS})
"""The least options a request to each provider needs (its emulator's ``options``)."""
