"""Rows of a stored session, and the checks made when they are read back.

A message row holds the message's dict form (docs/persistence.md) as compact
JSON, the message's own fingerprint digest (``Message.digest``, computed by the
native core) and the chain value after it: ``chain[i+1] = H_chain(chain[i] ‖
digest[i])`` from ``CHAIN_START``, the chain step of docs/fingerprint.md taken
over the messages' own digests. A context row holds the tools and the response
format as written by ``to_json`` and their context digest. The session row
holds the length, the chain value after the last message, the number of
context rows, the fingerprint version the digests were made under, an epoch
(changed by every ``replace``, so that a write conditional on a head read
before it fails) and the metadata (a small JSON object). Every backend stores
these same values; only the layout differs.

Everything read back is checked here before it is used: a value of the wrong
type or size, a missing row, text that is not UTF-8 is a ``ValidationError``
naming the session and the position, never the content.
"""

from __future__ import annotations

import itertools
import json
import logging
import re
import uuid
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final, NamedTuple

from .. import _core
from .._binding import FINGERPRINT_VERSION
from .._conversation import Conversation, _check_messages
from .._errors import ConflictError, ThinksealError, ValidationError
from .._json import freeze_json, require_object
from .._load import message_of, native_messages, strict_loads
from .._messages import Message
from .._reader import Reader, reroot
from .._tool import Tool, tool_from_dict, tool_to_dict
from .._walk import CHAIN_START, ensure_digests

__all__ = [
    "CHAIN_START",
    "Integrity",
    "Session",
    "SessionInfo",
    "SessionNotFoundError",
    "VersionMismatchError",
]

log: Final = logging.getLogger("thinkseal.store")

_SESSION_ID: Final = re.compile(r"[A-Za-z0-9_.:@=+-]{1,200}")
# A number stored as text (Redis hash fields): canonical decimal only, so the
# value compared in a script is the one written.
_DECIMAL: Final = re.compile(rb"0|-?[1-9][0-9]{0,17}")

# The largest metadata object, as compact JSON.
MAX_METADATA: Final = 64 * 1024

# Rows are read in slices of about this many bytes of JSON (or rows): each
# slice is one native call, so a worker thread decoding a large session gives
# the GIL back between slices and an event loop waiting for it stalls for a
# few milliseconds at most (docs/store.md). At this size a slice's digests are
# hashed on the calling thread (the core starts hashing threads only past 128
# KB), which on a busy machine beats waiting for a new thread to be scheduled.
SLICE_BYTES: Final = 128 * 1024
SLICE_ROWS: Final = 512


class SessionNotFoundError(ThinksealError, LookupError):
    """No session with this id is stored. ``session_id`` names it."""

    def __init__(self, session_id: str) -> None:
        super().__init__(f"session {session_id!r}: no such session")
        self.session_id = session_id


class VersionMismatchError(ThinksealError):
    """A write to a session stored under another fingerprint version
    (``version``; this release writes ``current``, ``thinkseal.FINGERPRINT_VERSION``).
    Nothing was written. ``store.migrate(session_id)`` re-encodes the session
    under the current version (docs/store.md)."""

    def __init__(self, session_id: str, version: int) -> None:
        super().__init__(
            f"session {session_id!r} was stored under fingerprint version {version}, and this release writes "
            f"version {FINGERPRINT_VERSION}: nothing was written; store.migrate(session_id) re-encodes it"
        )
        self.session_id = session_id
        self.version = version
        self.current = FINGERPRINT_VERSION


@dataclass(frozen=True, slots=True)
class Integrity:
    """What ``verify`` found in a stored session (positions only, never content).

    ``length`` is the number of stored messages; ``mismatched`` the positions
    of message rows whose stored digest is not the digest of their stored JSON,
    plus the first position where the stored chain values stop matching the
    chain over the stored digests; ``context_mismatched`` the versions of
    context rows whose digest does not match; ``session_mismatched`` whether the
    session row's chain value is not the one stored with its last message (the
    session row was edited). ``version`` is the fingerprint version the session
    was stored under: when it is not ``thinkseal.FINGERPRINT_VERSION``
    (``version_mismatch``), digests of another version cannot be recomputed, so
    no row is checked against them.

    ``status`` sums it up: ``"tampered"`` when anything is mismatched,
    ``"version-mismatch"`` for a session of another version, else ``"ok"``;
    ``ok`` is ``status == "ok"``.
    """

    session_id: str
    length: int
    mismatched: tuple[int, ...]
    context_mismatched: tuple[int, ...]
    session_mismatched: bool = False
    version: int = FINGERPRINT_VERSION

    @property
    def version_mismatch(self) -> bool:
        return self.version != FINGERPRINT_VERSION

    @property
    def status(self) -> str:
        if self.mismatched or self.context_mismatched or self.session_mismatched:
            return "tampered"
        return "version-mismatch" if self.version_mismatch else "ok"

    @property
    def ok(self) -> bool:
        return self.status == "ok"


@dataclass(frozen=True, slots=True)
class SessionInfo:
    """A session's row: its id, its number of messages, its metadata (a
    read-only JSON object) and the fingerprint version it was stored under."""

    session_id: str
    length: int
    metadata: Mapping[str, Any]
    version: int

    @property
    def version_mismatch(self) -> bool:
        return self.version != FINGERPRINT_VERSION


class Session(NamedTuple):
    """``load_session``'s answer: the conversation and the session's row, read together."""

    conversation: Conversation
    info: SessionInfo


class MessageRow(NamedTuple):
    position: int
    body: str | bytes  # JSON: a str, or UTF-8 bytes (checked when it is read)
    digest: bytes
    chain: bytes


class ContextRow(NamedTuple):
    version: int
    position: int
    body: str | bytes
    digest: bytes


class Head(NamedTuple):
    """A session's row: its length, the chain value after its last message
    (``CHAIN_START`` when empty), how many context rows it has and the latest,
    the fingerprint version and epoch, the metadata as stored (JSON text, read
    only when asked for, so that a bad one never stands in the way of the
    messages), and the chain value stored with its last message row
    (``CHAIN_START`` when empty; None when that row is missing or malformed),
    which ``chain`` must equal."""

    length: int
    chain: bytes
    contexts: int
    context: ContextRow | None
    version: int
    epoch: int
    metadata: object
    last_chain: bytes | None


# -- arguments ------------------------------------------------------------------------------


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


def encode_metadata(metadata: object) -> str:
    """``metadata`` (None: an empty object) as compact JSON text, key order
    kept. It must be a JSON object within the package's limits and at most
    ``MAX_METADATA`` bytes as JSON (``ValidationError`` naming ``metadata``)."""
    if metadata is None:
        return "{}"
    require_object(metadata, "metadata")
    freeze_json(metadata, "metadata")  # JSON values only, nested at most Limits.max_depth
    text = _core.wire_json(metadata, "metadata")
    if len(text) > MAX_METADATA:
        raise ValidationError(f"metadata: {len(text)} bytes as JSON, over the limit of {MAX_METADATA}", path="metadata")
    return text.decode()


def check_new_messages(messages: object) -> list[Message]:
    if isinstance(messages, Message):
        return [messages]
    return _check_messages(messages)


# -- errors ---------------------------------------------------------------------------------


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


def missing_row(session_id: str, position: int) -> ValidationError:
    return ValidationError(
        f"session {session_id!r}: message row {position} is missing or out of place", path=f"$.messages[{position}]"
    )


def bad_row(session_id: str, position: int, problem: str) -> ValidationError:
    return ValidationError(f"session {session_id!r} message {position}: {problem}", path=f"$.messages[{position}]")


def bad_session_row(session_id: str, field: str, problem: str) -> ValidationError:
    return ValidationError(f"session {session_id!r}: the session row's {field} {problem}", path=f"$.session.{field}")


def tampered_head(session_id: str, head: Head) -> ValidationError:
    """The session row's chain value is not the one its last message row holds."""
    if head.last_chain is None:
        return missing_row(session_id, head.length - 1)
    last = "the chain value of an empty session" if head.length == 0 else f"message row {head.length - 1}'s"
    return ValidationError(
        f"session {session_id!r}: the session row's chain value does not match {last} (the session row was "
        "edited in the database); nothing was written. store.verify reports it; store.replace rewrites the session",
        path="$.session.chain",
    )


def check_writable(session_id: str, head: Head) -> None:
    """An append or save may extend this head: the session is of this
    fingerprint version and its row agrees with its last message row."""
    if head.version != FINGERPRINT_VERSION:
        raise VersionMismatchError(session_id, head.version)
    if head.chain != head.last_chain:
        raise tampered_head(session_id, head)


def lost_race(session_id: str, head: Head, now: Head | None) -> ThinksealError:
    """The error for a conditional write that found the session changed since
    ``head`` was read (``now``: the session's row now, None when it is gone)."""
    if now is None:
        return SessionNotFoundError(session_id)
    if now.length != head.length:
        return conflict(session_id, head.length, now.length)
    if now.epoch != head.epoch:
        return conflict(
            session_id,
            head.length,
            now.length,
            f"session {session_id!r}: another writer replaced the session first; refresh and retry",
        )
    if now.contexts != head.contexts:
        return conflict(
            session_id,
            head.length,
            now.length,
            f"session {session_id!r}: another writer stored a new context (tools or response format) first; "
            "refresh and retry",
        )
    if now.version != head.version:
        return VersionMismatchError(session_id, now.version)
    if now.chain != now.last_chain:
        return tampered_head(session_id, now)
    return conflict(
        session_id,
        head.length,
        now.length,
        f"session {session_id!r}: the stored chain value changed since it was read; refresh and retry",
    )


# -- values read back -----------------------------------------------------------------------


def _int(value: object) -> int | None:
    """An integer as stored: an int, or (Redis) its canonical decimal text."""
    if type(value) is int:
        return value
    if isinstance(value, str):
        value = value.encode()
    if isinstance(value, bytes) and _DECIMAL.fullmatch(value):
        return int(value)
    return None


def digest_of(value: object) -> bytes | None:
    """A stored 32-byte value (digest or chain value) as bytes; None for anything else."""
    if type(value) is bytes:
        return value if len(value) == 32 else None
    if isinstance(value, (bytes, bytearray, memoryview)):
        value = bytes(value)
        return value if len(value) == 32 else None
    return None


def text_of(session_id: str, value: object, what: str, path: str) -> str:
    """A stored text (a str, or bytes that must be UTF-8) as a str."""
    if isinstance(value, str):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        try:
            return bytes(value).decode("utf-8")
        except UnicodeDecodeError:
            raise ValidationError(f"session {session_id!r}: {what} is not valid UTF-8", path=path) from None
    raise ValidationError(f"session {session_id!r}: {what} is not text", path=path)


def context_row_of(session_id: str, contexts: int, raw: Sequence[Any] | None) -> ContextRow | None:
    """The session's latest context row, checked (``raw``: version, position,
    body, digest as stored; None when no row was found)."""
    if contexts == 0:
        return None
    expected = contexts - 1
    path = f"$.contexts[{expected}]"
    if raw is None or len(raw) != 4 or _int(raw[0]) != expected:
        raise ValidationError(f"session {session_id!r}: context row {expected} is missing", path=path)
    _, position, body, digest = raw
    where = f"session {session_id!r} context {expected}"
    number = _int(position)
    if number is None or number < 0:
        raise ValidationError(f"{where}: its position is not a non-negative integer", path=path)
    if not isinstance(body, (str, bytes)):
        raise ValidationError(f"{where}: the stored JSON is not text", path=path)
    checked = digest_of(digest)
    if checked is None:
        raise ValidationError(f"{where}: the stored digest is not 32 bytes", path=path)
    return ContextRow(expected, number, body, checked)


def head_of(
    session_id: str,
    *,
    length: object,
    chain: object,
    contexts: object,
    version: object,
    epoch: object,
    metadata: object,
    last_chain: object,
    context: Sequence[Any] | None,
) -> Head:
    """A session row read back, checked field by field (``last_chain``: the
    chain value stored with row ``length - 1``, as read; ignored when empty)."""
    n = _int(length)
    if n is None or n < 0:
        raise bad_session_row(session_id, "length", "is not a non-negative integer")
    checked_chain = digest_of(chain)
    if checked_chain is None:
        raise bad_session_row(session_id, "chain", "is not 32 bytes")
    count = _int(contexts)
    if count is None or count < 0:
        raise bad_session_row(session_id, "contexts", "is not a non-negative integer")
    number = _int(version)
    if number is None or number < 1:
        raise bad_session_row(session_id, "version", "is not a positive integer")
    generation = _int(epoch)
    if generation is None:
        raise bad_session_row(session_id, "epoch", "is not an integer")
    return Head(
        n,
        checked_chain,
        count,
        context_row_of(session_id, count, context),
        number,
        generation,
        metadata,
        CHAIN_START if n == 0 else digest_of(last_chain),
    )


def sql_row(session_id: str, position: int, item: Any) -> MessageRow:
    """Message row ``position`` as read (position, body, digest, chain),
    checked: at its position (a row deleted behind the store's back is an
    error: what followed it cannot be placed), its body text, its digest and
    chain value 32 bytes each."""
    # Indexed, not unpacked: PostgreSQL's rows carry the session row's columns after these.
    stored, body, digest, chain = item[0], item[1], item[2], item[3]
    if type(stored) is not int or stored != position:
        raise missing_row(session_id, position)
    if type(body) is not str and type(body) is not bytes:
        raise bad_row(session_id, position, "the stored JSON is not text")
    if type(digest) is not bytes or len(digest) != 32:
        digest = digest_of(digest)
        if digest is None:
            raise bad_row(session_id, position, "the stored digest is not 32 bytes")
    if type(chain) is not bytes or len(chain) != 32:
        chain = digest_of(chain)
        if chain is None:
            raise bad_row(session_id, position, "the stored chain value is not 32 bytes")
    return MessageRow(position, body, digest, chain)


RowOf = Callable[[str, int, Any], MessageRow]


def row_slices(session_id: str, start: int, end: int, raw: list[Any], row_of: RowOf) -> Iterator[list[MessageRow]]:
    """Rows ``start..end`` from ``raw`` (as the backend read them; ``row_of``
    checks one) in slices of about ``SLICE_BYTES`` of JSON. Each item of
    ``raw`` is dropped as it is read, so a large read is freed a slice at a
    time rather than all at once at the end (which would hold the GIL for as
    long). A row missing at the end is found after the slices before it."""
    part: list[MessageRow] = []
    size = 0
    position = start
    for i in range(len(raw)):
        row = row_of(session_id, position, raw[i])
        raw[i] = None
        part.append(row)
        size += len(row.body)
        position += 1
        if size >= SLICE_BYTES or len(part) >= SLICE_ROWS:
            yield part
            part, size = [], 0
    if part:
        yield part
    if position != end:
        raise missing_row(session_id, position)


FragmentIndex = tuple[bytes, str, int, int, bytes]
# A session row read with the fragment index, its first position read and its
# message rows from there, as the backend returns them (``Store._fragment_index_and_tail``).
Tail = tuple[Head, int, list[Any]]
# (wire key, start, stop, entry, the data's parts as read: one on SQLite)
FragmentRow = tuple[str, int, int, bytes, list[bytes]]


def fragment_index_of(row: Sequence[Any]) -> FragmentIndex | None:
    """A fragment row's index columns (target, wire key, start, stop, entry)
    with their types checked (a wire key may come back as bytes: SQLite keeps
    what was written, PostgreSQL in an ``SQL_ASCII`` database), or None:
    fragments are a cache, so a row that does not read is passed over and its
    fragment prepared again rather than failing the load."""
    target, wire_key, start, stop, entry = row
    if type(wire_key) is bytes:
        try:
            wire_key = wire_key.decode()
        except UnicodeDecodeError:
            return None
    if type(target) is not bytes or type(wire_key) is not str or type(entry) is not bytes:
        return None
    if type(start) is not int or type(stop) is not int:
        return None
    return target, wire_key, start, stop, entry


def fragment_rows(target: bytes, rows: Iterable[Sequence[Any]]) -> list[FragmentRow]:
    """The rows ``(wire key, start, stop, entry, data parts)`` of ``target``
    that read (``fragment_index_of``; the data a list of bytes, ``data_parts``)."""
    found: list[FragmentRow] = []
    for wire_key, start, stop, entry, data in rows:
        index = fragment_index_of((target, wire_key, start, stop, entry))
        if index is not None and type(data) is list:
            found.append((index[1], start, stop, entry, data))
    return found


# A fragment row's data is stored in parts of at most this many bytes on
# PostgreSQL and Redis: their clients read one value of megabytes into a
# buffer they grow as it arrives, and 25 MB read as one value took 60 ms on
# PostgreSQL (20-26 on Redis) where parts of 256 KiB took 30 (11 in parts of
# 1 MB), joined afterwards included on PostgreSQL.
FRAGMENT_PART = 256 * 1024
# The most parts a row's data is read in (2 GiB): a stored count past it (a
# row written by something else) passes the row over rather than asking for
# millions of parts.
FRAGMENT_MAX_PARTS = 8192


def fragment_parts(data: bytes) -> list[bytes]:
    """``data`` cut into the parts it is stored in (one, empty, for no data)."""
    return [data[i : i + FRAGMENT_PART] for i in range(0, len(data), FRAGMENT_PART)] or [b""]


def data_parts(parts: Iterable[tuple[int, object]]) -> list[bytes] | None:
    """The parts of a fragment row's data from ``(number, bytes)`` in order,
    or None unless they are exactly parts 0, 1, 2, ... of bytes (a part
    missing or of another type: the row is passed over, as any that does not
    read). They are checked and read as they are, never joined
    (``_fragments.read_data``)."""
    pieces: list[bytes] = []
    for number, part in parts:
        if number != len(pieces) or type(part) is not bytes:
            return None
        pieces.append(part)
    return pieces or None


def metadata_of(session_id: str, stored: object) -> Mapping[str, Any]:
    """The stored metadata (text, or bytes that must be UTF-8) as a read-only JSON object."""
    path = "$.metadata"
    text = text_of(session_id, stored, "the stored metadata", path)
    try:
        value = strict_loads(text)
    except (ValueError, RecursionError):  # ValidationError too
        raise ValidationError(f"session {session_id!r}: the stored metadata is not valid JSON", path=path) from None
    if not isinstance(value, dict):
        raise ValidationError(f"session {session_id!r}: the stored metadata is not a JSON object", path=path)
    try:
        frozen, _ = freeze_json(value, path)
    except ValidationError as err:
        raise ValidationError(f"session {session_id!r}: {err}", path=err.path) from None
    return frozen  # type: ignore[no-any-return]


def listed_id(raw: object, index: int) -> str:
    """A session id as listed (``index``: its place in the list)."""
    path = f"$.sessions[{index}]"
    if isinstance(raw, (bytes, bytearray, memoryview)):
        try:
            raw = bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            raw = None
    if not isinstance(raw, str) or not _SESSION_ID.fullmatch(raw):
        raise ValidationError(
            f"session number {index} (oldest first): its stored id is not a valid session id", path=path
        )
    return raw


def listed_info(raw_id: object, index: int, length: object, version: object, metadata: object) -> SessionInfo:
    """A ``SessionInfo`` from a listing of session rows, checked."""
    session_id = listed_id(raw_id, index)
    n = _int(length)
    if n is None or n < 0:
        raise bad_session_row(session_id, "length", "is not a non-negative integer")
    number = _int(version)
    if number is None or number < 1:
        raise bad_session_row(session_id, "version", "is not a positive integer")
    return SessionInfo(session_id, n, metadata_of(session_id, metadata), number)


def info_of(session_id: str, head: Head) -> SessionInfo:
    return SessionInfo(session_id, head.length, metadata_of(session_id, head.metadata), head.version)


# -- writing --------------------------------------------------------------------------------


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
        head.epoch,
    )


def replace_params(
    session_id: str, head: Head, rows: Sequence[MessageRow], chain: bytes, context: ContextRow | None
) -> tuple[Any, ...]:
    """The conditional update of a session's row for ``replace``: the new length,
    chain, context count, version and epoch, then the head as read."""
    return (
        len(rows),
        chain,
        0 if context is None else 1,
        FINGERPRINT_VERSION,
        head.epoch + 1,
        session_id,
        head.length,
        head.chain,
        head.contexts,
        head.epoch,
    )


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
        return now != _core.canonical_json(strict_loads(stored.body))
    except (ValueError, RecursionError, ThinksealError):  # a malformed stored context: replace it
        return True


def chain_of(conversation: Conversation, length: int) -> bytes:
    """The chain value after the first ``length`` messages of ``conversation``
    (remembered on its message storage: asked again after an append, it
    hashes only the new messages)."""
    return conversation._log.chain_after(length)


# -- reading --------------------------------------------------------------------------------


def _json_values(session_id: str, rows: Sequence[MessageRow]) -> list[Any]:
    """The JSON values of ``rows`` read by Python's ``json``: all bodies at once,
    else row by row, which names the first row that does not parse."""
    texts = [text_of(session_id, r.body, f"message {r.position}", f"$.messages[{r.position}]") for r in rows]
    try:
        values = strict_loads("[" + ",".join(texts) + "]")
        if isinstance(values, list) and len(values) == len(rows):
            return values
    except (ValueError, RecursionError):  # ValidationError too: located below
        pass
    values = []
    for r, text in zip(rows, texts, strict=True):
        try:
            values.append(strict_loads(text))
        except ThinksealError as err:
            raise bad_row(session_id, r.position, str(err)) from None
        except (ValueError, RecursionError) as err:
            raise bad_row(session_id, r.position, f"not valid JSON: {err}") from None
    return values


def _parse_rows(session_id: str, rows: Sequence[MessageRow]) -> list[Message]:
    """The messages of ``rows``: one native read of all bodies (``_load``), else
    Python's ``json`` (a row that does not parse is named by its position)."""
    values = native_messages([r.body for r in rows])  # type: ignore[arg-type]
    if values is None:
        values = _json_values(session_id, rows)
    messages = []
    for value, r in zip(values, rows, strict=True):
        path = f"$.messages[{r.position}]"
        try:
            messages.append(message_of(value, path))
        except ValidationError as err:
            raise ValidationError(f"session {session_id!r} message {r.position}: {err}", path=err.path) from None
    return messages


def decode_messages(
    session_id: str, slices: Iterable[Sequence[MessageRow]], chain_before: bytes, *, check: bool = True
) -> tuple[list[Message], tuple[int, ...]]:
    """The messages of the rows in ``slices`` (positions consecutive, after the
    chain value ``chain_before``), their digests computed and cached on them,
    and (with ``check``) the positions that do not check (see ``Integrity``). A
    row that does not check is kept as stored: its binding no longer matches,
    so the replay rules unseal that turn and every later sealed turn. One
    native read per slice: between slices the GIL is free for other threads."""
    messages: list[Message] = []
    bad: list[int] = []
    broken: int | None = None
    chain = chain_before
    for part in slices:
        decoded = _parse_rows(session_id, part)
        ensure_digests(decoded)
        messages.extend(decoded)
        if not check:
            continue
        stored = b"".join([r.digest for r in part])
        if b"".join([m.digest for m in decoded]) != stored:
            bad.extend(r.position for r, m in zip(part, decoded, strict=True) if m.digest != r.digest)
        if broken is None:
            chains = _core.chain(chain, stored)
            if chains != b"".join([r.chain for r in part]):
                broken = next(r.position for i, r in enumerate(part) if chains[32 * i : 32 * i + 32] != r.chain)
            chain = chains[-32:]
    if broken is not None and broken not in bad:
        bad.append(broken)
    if not bad:
        return messages, ()
    positions = tuple(sorted(bad))
    log.warning(
        "session %r: stored rows at positions %s do not match their digests or chain values; "
        "loaded as stored (their sealed turns, and every later one, will go out unsealed)",
        session_id,
        list(positions),
    )
    return messages, positions


def decode_context(
    session_id: str, row: ContextRow | None, *, check: bool = True
) -> tuple[tuple[Tool, ...], Any, bool]:
    """The tools and response format of a context row (none: no tools, no
    format), and whether its digest checks (True when not ``check``ed)."""
    if row is None:
        return (), None, True
    path = f"$.contexts[{row.version}]"
    where = f"session {session_id!r} context {row.version}"
    text = text_of(session_id, row.body, f"context {row.version}", path)
    try:
        value = strict_loads(text)
    except ThinksealError as err:
        raise ValidationError(f"{where}: {err}", path=path) from None
    except (ValueError, RecursionError) as err:
        raise ValidationError(f"{where}: not valid JSON: {err}", path=path) from None
    try:
        r = Reader(value, path)
        tools = tuple(tool_from_dict(t, f"{path}.tools[{i}]") for i, t in enumerate(r.get("tools", kind=list)))
        response_format = r.get("response_format", default=None, kind=(dict, type(None)))
        try:
            probe = Conversation((), tools, response_format)
        except ValidationError as err:
            raise reroot(path, err) from err
    except ValidationError as err:
        raise ValidationError(f"session {session_id!r}: {err}", path=err.path) from None
    ok = not check or context_digest_of(probe) == row.digest
    if not ok:
        log.warning(
            "session %r: context version %d does not match its digest; loaded as stored", session_id, row.version
        )
    return tools, probe.response_format, ok


def head_checks(session_id: str, head: Head) -> tuple[bool, bool]:
    """Whether ``head`` is of this fingerprint version, and whether its chain
    value agrees with its last message row (each logged when it does not)."""
    current = head.version == FINGERPRINT_VERSION
    if not current:
        log.info(
            "session %r: stored under fingerprint version %d (this release: %d); its digests are not checked "
            "and its sealed turns go out unsealed (version-mismatch) until it is migrated and re-bound",
            session_id,
            head.version,
            FINGERPRINT_VERSION,
        )
    consistent = head.last_chain is not None and head.chain == head.last_chain
    if not consistent:
        log.warning(
            "session %r: the session row's chain value does not match its last message row's "
            "(the session row was edited); appends are refused until it is rewritten",
            session_id,
        )
    return current, consistent


def build(session_id: str, head: Head, slices: Iterable[Sequence[MessageRow]]) -> tuple[Conversation, Integrity]:
    """The conversation of a whole session (its head, then its rows ``0..length`` in slices)."""
    current, consistent = head_checks(session_id, head)
    messages, bad = decode_messages(session_id, slices, CHAIN_START, check=current)
    tools, response_format, ok = decode_context(session_id, head.context, check=current)
    bad_context = () if ok or head.context is None else (head.context.version,)
    integrity = Integrity(session_id, head.length, bad, bad_context, not consistent, head.version)
    conversation = Conversation(messages, tools, response_format)
    if current and consistent and not bad:  # every row checked against its chain value: known
        conversation._log.know_chain(head.length, head.chain)
    return conversation, integrity


def extend(
    session_id: str, held: Conversation, head: Head, slices: Iterable[Sequence[MessageRow]]
) -> Conversation | None:
    """``held`` brought up to date with the rows in ``slices``, from position
    ``len(held) - 1`` (one row of overlap) on, or None when ``held`` is not a
    prefix of the stored session (the caller then loads it whole): the chain
    value stored after the overlap row must be the chain over ``held``'s own
    digests (cached on its messages: one native call), so a conversation that
    differs anywhere, or a session replaced since, is loaded whole."""
    n = len(held)
    if head.length < n or head.version != FINGERPRINT_VERSION:
        return None
    rows = iter(slices)
    chain_before = CHAIN_START
    if n:
        first = next(rows, None)
        if not first or first[0].position != n - 1 or first[0].chain != chain_of(held, n):
            return None
        chain_before = first[0].chain
        rows = itertools.chain([first[1:]], rows)
    current, consistent = head_checks(session_id, head)
    new, bad = decode_messages(session_id, rows, chain_before, check=current)
    conversation = held.append(*new) if new else held
    if current and consistent and not bad:  # the new rows checked against their chain values
        conversation._log.know_chain(head.length, head.chain)
    if context_changed(conversation, head.context):
        tools, response_format, _ = decode_context(session_id, head.context)
        conversation = conversation.with_tools(tools).with_response_format(response_format)
    return conversation


def import_document(text: str | bytes) -> Conversation:
    return Conversation.from_json(text)
