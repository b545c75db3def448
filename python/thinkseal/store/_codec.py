"""Rows of a stored session, and the checks made when they are read back.

A message row holds the message's dict form (docs/persistence.md) as compact
JSON, the message's own fingerprint digest (``Message.digest``, computed by the
native core) and the chain value after it: ``chain[i+1] = H_chain(chain[i] ‖
digest[i])`` from ``CHAIN_START``, the chain step of docs/fingerprint.md taken
over the messages' own digests. A context row holds the tools and the response
format as canonical JSON (RFC 8785) and their context digest. Every backend
stores these same values; only the layout differs.
"""

from __future__ import annotations

import json
import logging
import re
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from .. import _core
from .._conversation import Conversation, _check_messages
from .._errors import ConflictError, ThinksealError, ValidationError
from .._load import message_of, native_messages, strict_loads
from .._messages import Message
from .._reader import Reader, reroot
from .._tool import Tool, tool_from_dict, tool_to_dict
from .._walk import CHAIN_START, ensure_digests

__all__ = ["CHAIN_START", "Integrity", "SessionNotFoundError"]

log: Final = logging.getLogger("thinkseal.store")

_SESSION_ID: Final = re.compile(r"[A-Za-z0-9_.:@=+-]{1,200}")


class SessionNotFoundError(ThinksealError, LookupError):
    """No session with this id is stored. ``session_id`` names it."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r}: no such session")
        self.session_id = session_id


@dataclass(frozen=True, slots=True)
class Integrity:
    """What ``verify`` found in a stored session (positions only, never content).

    ``length`` is the number of stored messages; ``mismatched`` the positions
    of message rows whose stored digest is not the digest of their stored JSON,
    plus the first position where the stored chain values stop matching the
    chain over the stored digests; ``context_mismatched`` the versions of
    context rows whose digest does not match. ``ok`` is True when both are empty.
    """

    session_id: str
    length: int
    mismatched: tuple[int, ...]
    context_mismatched: tuple[int, ...]

    @property
    def ok(self) -> bool:
        return not self.mismatched and not self.context_mismatched


class MessageRow(NamedTuple):
    position: int
    body: str
    digest: bytes
    chain: bytes


class ContextRow(NamedTuple):
    version: int
    position: int
    body: str
    digest: bytes


class Head(NamedTuple):
    """A session's row: its length, the chain value after its last message
    (``CHAIN_START`` when empty), how many context rows it has, and the latest."""

    length: int
    chain: bytes
    contexts: int
    context: ContextRow | None


def new_session_id(session_id: str | None) -> str:
    if session_id is None:
        return uuid.uuid4().hex
    if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
        raise ValidationError(
            "session_id: expected 1 to 200 characters of A-Z a-z 0-9 and _ . : @ = + -", path="session_id"
        )
    return session_id


def check_session_id(session_id: object) -> str:
    if not isinstance(session_id, str) or not _SESSION_ID.fullmatch(session_id):
        raise ValidationError("session_id: not a valid session id", path="session_id")
    return session_id


def check_length(value: object, name: str) -> int:
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationError(f"{name}: expected a non-negative int", path=name)
    return value


def conflict(session_id: str, expected: int | None, actual: int | None, why: str = "") -> ConflictError:
    if expected is None:
        message = f"session {session_id!r} already exists"
    elif actual is None:
        message = f"session {session_id!r}: no such session"
    else:
        message = (
            why
            or f"session {session_id!r}: expected {expected} stored messages, the store has {actual} "
            "(another writer appended first); refresh and retry"
        )
    return ConflictError(message, session_id=session_id, expected_length=expected, actual_length=actual)


def advance_params(
    session_id: str, head: Head, rows: Sequence[MessageRow], chain: bytes, context: ContextRow | None
) -> tuple[Any, ...]:
    """The parameters of the conditional update of a session's row (SQLite and
    PostgreSQL): the new length, chain and context count, then the session id
    and the head the writer read, which must still be there."""
    return (
        head.length + len(rows),
        chain,
        head.contexts + (context is not None),
        session_id,
        head.length,
        head.chain,
        head.contexts,
    )


def lost_race(session_id: str, head: Head, actual: int | None) -> ThinksealError:
    """The error for a conditional write that found the session changed since
    ``head`` was read (``actual``: its length now, None when it is gone)."""
    if actual is None:
        return SessionNotFoundError(session_id)
    if actual == head.length:
        return conflict(
            session_id,
            head.length,
            actual,
            f"session {session_id!r}: another writer stored a new context (tools or response format) first; "
            "refresh and retry",
        )
    return conflict(session_id, head.length, actual)


def _dumps(value: object) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def encode_messages(messages: Sequence[Message], start: int, chain_before: bytes) -> tuple[list[MessageRow], bytes]:
    """Rows for ``messages`` stored from position ``start`` after the chain value
    ``chain_before``, and the chain value after the last one."""
    if not messages:
        return [], chain_before
    ensure_digests(messages)
    digests = [m.digest for m in messages]
    chains = _core.chain(chain_before, b"".join(digests))
    rows = [
        MessageRow(start + i, _dumps(m.to_dict()), d, chains[32 * i : 32 * i + 32])
        for i, (m, d) in enumerate(zip(messages, digests, strict=True))
    ]
    return rows, chains[-32:]


def _context_value(tools: Sequence[Tool], response_format: object) -> dict[str, Any]:
    return {"tools": [tool_to_dict(t) for t in tools], "response_format": response_format}


def context_digest_of(conversation: Conversation) -> bytes:
    tools = [(t.name, t.description, t._parameters_jcs) for t in conversation.tools]
    return _core.context_digest([], tools, conversation._rf_jcs)


def encode_context(conversation: Conversation, version: int, position: int) -> ContextRow:
    """The context row: the tools and response format as written by ``to_json``
    (key order kept, so a loaded conversation sends the same bytes)."""
    text = _dumps(_context_value(conversation.tools, conversation.response_format))
    return ContextRow(version, position, text, context_digest_of(conversation))


def context_changed(conversation: Conversation, stored: ContextRow | None) -> bool:
    """Whether the tools or response format differ from the stored ones (in
    canonical form: a different key order is no change)."""
    now = _core.canonical_json(_context_value(conversation.tools, conversation.response_format))
    if stored is None:
        return now != _core.canonical_json(_context_value((), None))
    try:
        return now != _core.canonical_json(json.loads(stored.body))
    except (ValueError, ThinksealError):  # a malformed stored context: replace it
        return True


def chain_of(conversation: Conversation, length: int) -> bytes:
    """The chain value after the first ``length`` messages of ``conversation``
    (digests are cached on the messages, so this is one native call)."""
    if length == 0:
        return CHAIN_START
    prefix = conversation.messages[:length]
    ensure_digests(prefix)
    return _core.chain(CHAIN_START, b"".join([m.digest for m in prefix]))[-32:]


def check_new_messages(messages: object) -> list[Message]:
    if isinstance(messages, Message):
        return [messages]
    return _check_messages(messages)


# -- reading ------------------------------------------------------------------------


def _parse_rows(session_id: str, rows: Sequence[MessageRow]) -> list[Message]:
    """The messages of ``rows``: one native read of all bodies (``_load``), else
    one JSON parse of all bodies at once; a row that does not parse alone (or
    that holds more than one value) is found by parsing row by row, and named
    by its position in the ``ValidationError``."""
    if not rows:
        return []
    values = native_messages([r.body for r in rows])
    if values is None:
        try:
            values = strict_loads("[" + ",".join([r.body for r in rows]) + "]")
            if len(values) != len(rows):
                values = None
        except (ValueError, RecursionError):  # ValidationError too: located below
            values = None
    if values is None:
        values = []
        for r in rows:
            try:
                values.append(strict_loads(r.body))
            except ThinksealError as err:
                raise ValidationError(
                    f"session {session_id!r} message {r.position}: {err}", path=f"$.messages[{r.position}]"
                ) from None
            except (ValueError, RecursionError) as err:
                raise ValidationError(
                    f"session {session_id!r} message {r.position}: not valid JSON: {err}",
                    path=f"$.messages[{r.position}]",
                ) from None
    return [message_of(v, f"$.messages[{r.position}]") for v, r in zip(values, rows, strict=True)]


def check_positions(session_id: str, rows: Sequence[MessageRow], start: int, end: int) -> None:
    """Rows ``start..end`` are all there, in order (a row deleted behind the
    store's back is an error: what followed it cannot be placed)."""
    if len(rows) != end - start or any(r.position != start + i for i, r in enumerate(rows)):
        have = {r.position for r in rows}
        missing = next((p for p in range(start, end) if p not in have), end)
        raise ValidationError(
            f"session {session_id!r}: message row {missing} is missing or out of place", path=f"$.messages[{missing}]"
        )


def decode_messages(
    session_id: str, rows: Sequence[MessageRow], chain_before: bytes
) -> tuple[list[Message], tuple[int, ...]]:
    """The messages of ``rows`` (positions consecutive, after the chain value
    ``chain_before``), their digests computed and cached on them, and the
    positions that do not check (see ``Integrity``). A row that does not check
    is kept as stored: its binding no longer matches, so the replay rules
    unseal that turn and every later sealed turn."""
    messages = _parse_rows(session_id, rows)
    if not messages:
        return messages, ()
    ensure_digests(messages)
    computed = b"".join([m.digest for m in messages])
    stored = b"".join([r.digest for r in rows])
    bad: set[int] = set()
    if computed != stored:
        bad.update(r.position for r, m in zip(rows, messages, strict=True) if m.digest != r.digest)
    chains = _core.chain(chain_before, stored)
    if chains != b"".join([r.chain for r in rows]):
        bad.add(next(r.position for i, r in enumerate(rows) if chains[32 * i : 32 * i + 32] != r.chain))
    if bad:
        positions = tuple(sorted(bad))
        log.warning(
            "session %r: stored rows at positions %s do not match their digests or chain values; "
            "loaded as stored (their sealed turns, and every later one, will go out unsealed)",
            session_id,
            list(positions),
        )
        return messages, positions
    return messages, ()


def decode_context(session_id: str, row: ContextRow | None) -> tuple[tuple[Tool, ...], Any, bool]:
    """The tools and response format of a context row (none: no tools, no
    format), and whether its digest checks."""
    if row is None:
        return (), None, True
    path = f"$.contexts[{row.version}]"
    try:
        value = strict_loads(row.body)
    except ThinksealError as err:
        raise ValidationError(f"session {session_id!r} context {row.version}: {err}", path=path) from None
    except (ValueError, RecursionError) as err:
        raise ValidationError(
            f"session {session_id!r} context {row.version}: not valid JSON: {err}", path=path
        ) from None
    r = Reader(value, path)
    tools = tuple(tool_from_dict(t, f"{path}.tools[{i}]") for i, t in enumerate(r.get("tools", kind=list)))
    response_format = r.get("response_format", default=None, kind=(dict, type(None)))
    try:
        probe = Conversation((), tools, response_format)
    except ValidationError as err:
        raise reroot(path, err) from err
    ok = context_digest_of(probe) == row.digest
    if not ok:
        log.warning(
            "session %r: context version %d does not match its digest; loaded as stored", session_id, row.version
        )
    return tools, probe.response_format, ok


def build(
    session_id: str, head: Head, rows: Sequence[MessageRow]
) -> tuple[Conversation, tuple[int, ...], tuple[int, ...]]:
    """The conversation of a whole session (its head, then its rows)."""
    check_positions(session_id, rows, 0, head.length)
    messages, bad = decode_messages(session_id, rows, CHAIN_START)
    tools, response_format, ok = decode_context(session_id, head.context)
    bad_context = () if ok or head.context is None else (head.context.version,)
    return Conversation(messages, tools, response_format), bad, bad_context


def extend(session_id: str, held: Conversation, head: Head, rows: Sequence[MessageRow]) -> Conversation | None:
    """``held`` brought up to date with ``rows``, the rows from position
    ``len(held) - 1`` (one row of overlap) on, or None when ``held`` is not a
    prefix of the stored session (the caller then loads it whole)."""
    n = len(held)
    if head.length < n:
        return None
    if n:
        if not rows or rows[0].position != n - 1 or rows[0].digest != held[n - 1].digest:
            return None
        chain_before, rows = rows[0].chain, rows[1:]
    else:
        chain_before = CHAIN_START
    check_positions(session_id, rows, n, head.length)
    new, _ = decode_messages(session_id, rows, chain_before)
    conversation = held.append(*new) if new else held
    if context_changed(conversation, head.context):
        tools, response_format, _ = decode_context(session_id, head.context)
        conversation = conversation.with_tools(tools).with_response_format(response_format)
    return conversation


def import_document(text: str | bytes) -> Conversation:
    return Conversation.from_json(text)
