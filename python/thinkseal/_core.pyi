"""Type stubs of the native module (rust/python/src/lib.rs)."""

from collections.abc import Sequence
from typing import Any, Final

__all__ = [
    "CHAIN_DOMAIN",
    "CHAIN_START",
    "FINGERPRINT_VERSION",
    "MESSAGE_DOMAIN",
    "PREFIX_DOMAIN",
    "REQUEST_DOMAIN",
    "canonical_json",
    "chain",
    "claude_turn",
    "claude_turns",
    "context_digest",
    "encode_message",
    "fragment_check",
    "fragment_key",
    "frozen_json",
    "ledger_check",
    "ledger_entry_key",
    "ledger_keys",
    "load_document",
    "member_elements",
    "member_span",
    "member_spans",
    "message_digest",
    "message_digests",
    "prefix_digest",
    "sent_run",
    "walk_run",
    "wire_json",
]

FINGERPRINT_VERSION: Final[int]
CHAIN_START: Final[bytes]
MESSAGE_DOMAIN: Final[str]
CHAIN_DOMAIN: Final[str]
REQUEST_DOMAIN: Final[str]
PREFIX_DOMAIN: Final[str]

def canonical_json(value: object, root: str = "$", max_depth: int = 256, max_string: int = ...) -> bytes: ...
def wire_json(value: object, root: str = "$") -> bytes: ...
def encode_message(message: object) -> bytes: ...
def message_digest(message: object) -> bytes: ...
def message_digests(messages: Sequence[object], threads: int = 1) -> list[bytes]: ...
def chain(start: bytes, digests: bytes) -> bytes: ...
def context_digest(
    system: list[str], tools: list[tuple[str, str, bytes]], response_format_jcs: bytes | None
) -> bytes: ...
def prefix_digest(
    version: int, provider: str, model: str, account: str | None, context: bytes, chain_before: bytes
) -> bytes: ...
def claude_turn(role: str, group: list[Any], kit: tuple[type, ...]) -> bytes | None: ...
def claude_turns(
    sent: list[Any], keys: tuple[str, str], kit: tuple[type, ...]
) -> tuple[list[bytes], list[int]] | None: ...
def sent_run(
    items: list[Any],
    bounds: tuple[int, int, int],
    open_calls: set[str],
    codes: bytes,
    first: int,
    kit: tuple[type, ...],
) -> int: ...
def walk_run(
    items: list[Any],
    start: int,
    end: int,
    total: int,
    open_calls: set[str],
    chain: bytes,
    target: object,
    context: bytes,
    kit: tuple[type, ...],
) -> tuple[int, bytes, bytes, list[int]]: ...
def load_document(
    text: object, kit: tuple[object, ...], max_depth: int, max_string: int, max_parts: int
) -> object | None: ...
def frozen_json(text: object, frozen_dict: type, frozen_list: type) -> object | None: ...
def ledger_keys(account: str | None, data: Sequence[tuple[str, str | None, str]]) -> list[bytes]: ...
def fragment_key(secret: bytes) -> bytes: ...
def fragment_check(key: bytes, header: bytes, parts: list[bytes]) -> bytes: ...
def ledger_entry_key(secret: bytes) -> bytes: ...
def ledger_check(entry_key: bytes, key: bytes, binding: str) -> bytes: ...
def member_spans(text: bytes, key: str) -> list[tuple[int, int]] | None: ...
def member_span(text: bytes, key: str) -> tuple[int, int] | None: ...
def member_elements(text: bytes, key: str) -> tuple[tuple[int, int], list[tuple[int, int]], list[bytes]] | None: ...
