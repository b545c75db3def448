"""Reading the ``thinkseal`` command's input files: UTF-8, then JSON, then a
stored conversation, each failure a one-line ``InputError`` naming the file;
and the request settings the commands share."""

from __future__ import annotations

import json
import sys
from collections.abc import Iterable
from importlib import resources
from pathlib import Path
from typing import Any

from .._binding import Origin
from .._conversation import Conversation
from .._errors import ValidationError
from .._messages import AssistantMessage

__all__ = [
    "BUNDLED",
    "InputError",
    "default_target",
    "load_conversation",
    "read_json",
    "read_text",
    "request_options",
    "target_text",
]

BUNDLED = "the bundled example"
_CLAUDE = ("anthropic", "vertex-anthropic")


class InputError(Exception):
    """A usage or input error: the command prints ``thinkseal: <message>`` and exits with status 2."""


def _read(path: str) -> bytes:
    if path == "-":
        return sys.stdin.buffer.read()
    try:
        return Path(path).read_bytes()
    except FileNotFoundError:
        from ._args import COMMANDS  # noqa: PLC0415

        hint = f" (commands: {', '.join(COMMANDS)})" if "/" not in path and "." not in path else ""
        raise InputError(f"{path}: no such file{hint}") from None
    except OSError as err:
        raise InputError(f"{path}: cannot read: {err.strerror or err}") from None


def _text(data: bytes, name: str) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as err:
        bad = data[err.start : err.start + 1].hex()
        raise InputError(f"{name}: not UTF-8 text (byte 0x{bad} at offset {err.start})") from None


def read_text(path: str) -> str:
    """The UTF-8 text of the file at ``path`` (``-``: stdin)."""
    return _text(_read(path), path)


def read_json(path: str, text: str | None = None) -> Any:
    """The JSON value of the file at ``path`` (``-``: stdin), or of its ``text`` when read already."""
    if text is None:
        text = read_text(path)
    try:
        return json.loads(text)
    except json.JSONDecodeError as err:
        raise InputError(f"{path}: not JSON ({err.msg} at line {err.lineno} column {err.colno})") from None
    except RecursionError:
        raise InputError(f"{path}: not JSON this program can read (nested too deeply)") from None


def load_conversation(path: str | None) -> tuple[Conversation, str]:
    """The conversation stored at ``path`` (None: the bundled example) and its name."""
    if path is None:
        data = resources.files("thinkseal.examples").joinpath("weather.json").read_bytes()
        return Conversation.from_json(data), BUNDLED
    text = _text(_read(path), path)
    try:
        return Conversation.from_json(text), path
    except ValidationError as err:
        if err.path == "$" and str(err).startswith("$: not valid JSON"):
            try:
                json.loads(text)
            except json.JSONDecodeError as bad:
                raise InputError(f"{path}: not JSON ({bad.msg} at line {bad.lineno} column {bad.colno})") from None
            except RecursionError:
                pass
        raise InputError(f"{path}: not a stored thinkseal conversation: {err}") from None


def default_target(conversation: Conversation) -> Origin:
    """The origin of the first bound turn (Claude Sonnet 4.5 when none is bound)."""
    for message in conversation:
        if isinstance(message, AssistantMessage) and message.thinking_binding is not None:
            return message.thinking_binding.origin
    return Origin("anthropic", "claude-sonnet-4-5")


def request_options(target: Origin, pairs: Iterable[tuple[str, Any]]) -> dict[str, Any]:
    """The ``--option`` pairs as ``prepare`` options; Claude's required
    ``max_tokens`` defaults to 4096."""
    options = dict(pairs)
    if target.provider in _CLAUDE:
        options.setdefault("max_tokens", 4096)
    return options


def target_text(target: Origin) -> str:
    """``PROVIDER:MODEL[:ACCOUNT]``, as ``--target`` takes it."""
    text = f"{target.provider}:{target.model}"
    return f"{text}:{target.account}" if target.account else text


def attached(conversation: Conversation, ledger: str | None, account: str | None) -> tuple[Conversation, str | None]:
    """``conversation`` attached to the ledger at URL ``ledger`` (as it is
    without one), and a line saying what the ledger recognised."""
    if ledger is None:
        if account is not None:
            raise InputError("--account goes with --ledger")
        return conversation, None
    from ..ledger import open_ledger  # noqa: PLC0415

    with open_ledger(ledger) as opened:
        result = opened.attach(conversation, account=account)
    counts = {
        status: sum(1 for t in result.turns if t.status == status) for status in ("recognised", "changed", "unknown")
    }
    return result.conversation, ", ".join(f"{n} {status}" for status, n in counts.items())
