"""Redis through redis-py (the ``store-redis`` extra), sync and asyncio.

A session is three keys sharing the hash tag ``{session id}``: a hash
(``length``, ``chain``, ``contexts``, ``version``, ``epoch``, ``metadata``), a
list of message entries and a list of context entries. Every write is one Lua
script, which Redis runs atomically: the append script compares the hash with
what the writer read and pushes the new entries only when they match; the
replace script does the same comparison, then swaps the lists and takes a new
epoch. Reads are one script as well (the hash, the latest context, the last
entry's chain value and the entries asked for). Its prepared fragments are
two more hashes under the same hash tag (``_PUT_FRAGMENT``), emptied with the
lists by the delete and replace scripts.

The scripts never trust a stored value to be well formed (a field that is not
a number, a short entry): they hand it back as it is, and ``_codec`` names what
is wrong. A hash written before ``version``, ``epoch`` and ``metadata`` existed
reads as version 1, epoch 0 and no metadata.
"""

from __future__ import annotations

import itertools
from collections.abc import Awaitable, Callable, Iterable, Sequence
from functools import partial
from typing import Any, TypeVar

import redis
import redis.asyncio

from .._binding import FINGERPRINT_VERSION
from .._errors import ValidationError
from ._base import AsyncStore, Store
from ._codec import (
    CHAIN_START,
    FRAGMENT_MAX_PARTS,
    ContextRow,
    FragmentIndex,
    FragmentRow,
    Head,
    MessageRow,
    SessionInfo,
    SessionNotFoundError,
    Tail,
    bad_row,
    conflict,
    data_parts,
    fragment_parts,
    head_of,
    listed_id,
    listed_info,
    lost_race,
    missing_row,
)

__all__ = ["AsyncRedisStore", "RedisStore"]

Arg = bytes | str | int
T = TypeVar("T")

# Entries: a message is digest (32 bytes) ‖ chain value (32 bytes) ‖ JSON (UTF-8);
# a context is digest (32 bytes) ‖ position (10 ASCII digits) ‖ JSON (UTF-8).

# A stored count as a Lua number, or nil when it is not a whole number (so no
# script passes a malformed value on to a list command, which would fail).
_COUNT = """
local function count(value)
    local n = tonumber(value)
    if n and n >= 0 and n == math.floor(n) and n < 2^53 then return n end
    return nil
end
"""

_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[6], KEYS[7])
local epoch = redis.call('INCR', KEYS[5])
redis.call('HSET', KEYS[1], 'length', ARGV[2], 'chain', ARGV[3], 'contexts', ARGV[4],
           'version', ARGV[6], 'epoch', epoch, 'metadata', ARGV[7])
for i = 8, #ARGV, 1000 do
    redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
if ARGV[5] ~= '' then redis.call('RPUSH', KEYS[3], ARGV[5]) end
redis.call('ZADD', KEYS[4], epoch, ARGV[1])
return 1
"""

# ARGV: the head as read (length, chain, contexts, epoch), the new length,
# chain and context count, the context entry ('' for none), the entries.
_APPEND = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local h = redis.call('HMGET', KEYS[1], 'length', 'chain', 'contexts', 'epoch')
if h[1] ~= ARGV[1] or h[2] ~= ARGV[2] or h[3] ~= ARGV[3] or (h[4] or '0') ~= ARGV[4] then return 0 end
for i = 9, #ARGV, 1000 do
    redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
if ARGV[8] ~= '' then redis.call('RPUSH', KEYS[3], ARGV[8]) end
redis.call('HSET', KEYS[1], 'length', ARGV[5], 'chain', ARGV[6], 'contexts', ARGV[7])
return 1
"""

# As _APPEND, but the lists (and the fragments, which describe them) are
# emptied first and the session takes a new epoch and this release's
# fingerprint version; returns the epoch.
_REPLACE = """
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local h = redis.call('HMGET', KEYS[1], 'length', 'chain', 'contexts', 'epoch')
if h[1] ~= ARGV[1] or h[2] ~= ARGV[2] or h[3] ~= ARGV[3] or (h[4] or '0') ~= ARGV[4] then return 0 end
redis.call('DEL', KEYS[2], KEYS[3], KEYS[5], KEYS[6])
for i = 10, #ARGV, 1000 do
    redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
if ARGV[8] ~= '' then redis.call('RPUSH', KEYS[3], ARGV[8]) end
local epoch = redis.call('INCR', KEYS[4])
redis.call('HSET', KEYS[1], 'length', ARGV[5], 'chain', ARGV[6], 'contexts', ARGV[7],
           'version', ARGV[9], 'epoch', epoch)
return epoch
"""

# The session's hash, its latest context and last entry's chain value, and
# up to ``batch`` entries from ``start`` (a function ``_READ`` and
# ``_READ_LAZY`` call), or false when there is no such session.
_READ_FROM = (
    _COUNT
    + """
local function read(start, batch)
    if redis.call('EXISTS', KEYS[1]) == 0 then return false end
    local h = redis.call('HMGET', KEYS[1], 'length', 'chain', 'contexts', 'version', 'epoch', 'metadata')
    local length = count(h[1])
    local n = count(h[3])
    local context = false
    if n and n > 0 then context = redis.call('LINDEX', KEYS[3], n - 1) end
    local last = false
    if length and length > 0 then
        last = redis.call('LINDEX', KEYS[2], length - 1)
        if last then last = string.sub(last, 33, 64) end
    end
    local rows = {}
    if length and start >= 0 and start < length then
        rows = redis.call('LRANGE', KEYS[2], start, math.min(length, start + batch) - 1)
    end
    return {h[1], h[2], h[3], h[4], h[5], h[6], context, last, rows}
end
"""
)

# ARGV[1]: the first position to read, or -1 for the head only; ARGV[2]: at
# most how many entries.
_READ = _READ_FROM + "return read(tonumber(ARGV[1]), tonumber(ARGV[2]))\n"

# A lazy load's first read (KEYS: the session's three keys and its fragment
# entries): every fragment entry, and ``_READ`` from ARGV[1] entries before
# the end of the last fragment row (from 0 when it has none), that first
# position last. The ends are read here only to choose where to start: the
# load checks every entry, and reads again when its run ends earlier.
_READ_LAZY = (
    _READ_FROM
    + """
local fields = redis.call('HGETALL', KEYS[4])
local last = 0
for i = 2, #fields, 2 do
    local stop = count(string.match(fields[i], '^(%d+)'))
    if stop and stop > last then last = stop end
end
local start = math.max(last - tonumber(ARGV[1]), 0)
local found = read(start, tonumber(ARGV[2]))
if not found then return false end
table.insert(found, fields)
table.insert(found, start)
return found
"""
)

# More entries of a session being read (ARGV: its epoch as read, the first and
# last position); false when the session was replaced or deleted meanwhile.
# Within an epoch the entries below the length never change (appends only add
# after it), so entries read batch by batch are those of one snapshot.
_ROWS = """
if (redis.call('HGET', KEYS[1], 'epoch') or '0') ~= ARGV[1] then return false end
return redis.call('LRANGE', KEYS[2], ARGV[2], ARGV[3])
"""

# Entries read per round trip: each reply is parsed by redis-py, which frees
# its buffers when a reply is complete, so one reply per batch keeps that (and
# the event loop's wait for it) short.
_BATCH = 1000


_SET_METADATA = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
redis.call('HSET', KEYS[1], 'metadata', ARGV[1])
return 1
"""

# Returns {1} when forked, {0} when the new id exists, {-1} when the source
# does not, {-2, p} when its entry p is missing or shorter than a digest and a
# chain value, {-3, v} when its context entry v has no position.
_FORK = (
    _COUNT
    + """
if redis.call('EXISTS', KEYS[4]) == 1 then return {0} end
if redis.call('EXISTS', KEYS[1]) == 0 then return {-1} end
local n = tonumber(ARGV[1])
local have = redis.call('LLEN', KEYS[2])
if have < n then return {-2, have} end
local chain = ARGV[3]
if n > 0 then
    local last = redis.call('LINDEX', KEYS[2], n - 1)
    if #last < 64 then return {-2, n - 1} end
    chain = string.sub(last, 33, 64)
end
local contexts = {}
for i, entry in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
    local p = count(string.sub(entry, 33, 42))
    if not p or #entry < 42 then return {-3, i - 1} end
    if p <= n then table.insert(contexts, entry) end
end
local h = redis.call('HMGET', KEYS[1], 'version', 'metadata')
redis.call('DEL', KEYS[5], KEYS[6], KEYS[9], KEYS[10])
for i = 0, n - 1, 1000 do
    redis.call('RPUSH', KEYS[5], unpack(redis.call('LRANGE', KEYS[2], i, math.min(i + 999, n - 1))))
end
for _, entry in ipairs(contexts) do redis.call('RPUSH', KEYS[6], entry) end
local epoch = redis.call('INCR', KEYS[8])
redis.call('HSET', KEYS[4], 'length', n, 'chain', chain, 'contexts', #contexts,
           'version', h[1] or '1', 'epoch', epoch, 'metadata', h[2] or '{}')
redis.call('ZADD', KEYS[7], epoch, ARGV[2])
return {1}
"""
)

_DELETE = """
local found = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2], KEYS[3], KEYS[5], KEYS[6])
redis.call('ZREM', KEYS[4], ARGV[1])
return found
"""

# Fragments (``_fragments``): two hashes per session, ``{ID}:fe`` (per row:
# end ‖ '/' ‖ parts ‖ ':' ‖ entry, what the index reads) and ``{ID}:fd`` (the
# data, read per target, in parts of FRAGMENT_PART bytes: part 0 under the
# row's field, part i under field ‖ '#' ‖ i). A row's field is len(target) ':'
# target len(wire key) ':' wire key start, so the rows of one target (and wire
# key) are exactly the ``:fe`` fields with its prefix. A value without '/'
# (the first form) is a row of one part; a count past FRAGMENT_MAX_PARTS is
# not read. ARGV: that prefix for the target and wire key, start, end, the
# ``:fe`` value, FRAGMENT_MAX_PARTS, then the data's parts. Returns 0 (no such
# session: no orphan rows) or 1.
_PUT_FRAGMENT = """
if redis.call('EXISTS', KEYS[1]) == 0 then return 0 end
local prefix = ARGV[1]
local start = tonumber(ARGV[2])
local stop = tonumber(ARGV[3])
local function drop(field)
    local value = redis.call('HGET', KEYS[2], field)
    local parts = 1
    if value then parts = math.min(tonumber(string.match(value, '^%d+/(%d+):') or '1'), tonumber(ARGV[5])) end
    redis.call('HDEL', KEYS[2], field)
    redis.call('HDEL', KEYS[3], field)
    for i = 1, parts - 1 do redis.call('HDEL', KEYS[3], field .. '#' .. i) end
end
for _, field in ipairs(redis.call('HKEYS', KEYS[2])) do
    if string.sub(field, 1, #prefix) == prefix then
        local s = tonumber(string.sub(field, #prefix + 1))
        if s and s > start and s < stop then drop(field) end
    end
end
local field = prefix .. ARGV[2]
drop(field)
redis.call('HSET', KEYS[2], field, ARGV[4])
redis.call('HSET', KEYS[3], field, ARGV[6])
for i = 7, #ARGV do redis.call('HSET', KEYS[3], field .. '#' .. (i - 6), ARGV[i]) end
return 1
"""


# The fields, ``:fe`` values and data of one target (ARGV[1]: its prefix), flat.
class _Keys:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.index = f"{prefix}sessions"
        self.seq = f"{prefix}seq"

    def session(self, session_id: str) -> list[str]:
        base = f"{self.prefix}{{{session_id}}}"
        return [f"{base}:s", f"{base}:m", f"{base}:c"]

    def fragments(self, session_id: str) -> list[str]:
        base = f"{self.prefix}{{{session_id}}}"
        return [f"{base}:fe", f"{base}:fd"]


def _message_entry(row: MessageRow) -> bytes:
    body = row.body.encode() if isinstance(row.body, str) else row.body
    return row.digest + row.chain + body


def _context_entry(row: ContextRow | None) -> bytes:
    if row is None:
        return b""
    body = row.body.encode() if isinstance(row.body, str) else row.body
    return row.digest + b"%010d" % row.position + body


def _length_prefixed(value: bytes) -> bytes:
    return b"%d:" % len(value) + value


def _fragment_prefix(target: bytes, wire_key: str | None = None) -> bytes:
    prefix = _length_prefixed(target)
    return prefix if wire_key is None else prefix + _length_prefixed(wire_key.encode())


def _canonical_int(value: bytes) -> int | None:
    try:
        number = int(value)
    except ValueError:
        return None
    return number if b"%d" % number == value else None


def _split_prefixed(value: bytes) -> tuple[bytes, bytes] | None:
    size, _, rest = value.partition(b":")
    if not size.isdigit() or len(rest) < int(size):
        return None
    return rest[: int(size)], rest[int(size) :]


def _fragment_of(field: object, value: object) -> tuple[bytes, str, int, int, bytes] | None:
    """A ``:fe`` field and value as ``(target, wire_key, start, end, entry)``,
    or None when either does not parse: fragments are a cache, so a bad one is
    passed over and its fragment prepared again rather than failing the load."""
    read = _fragment_with_parts(field, value)
    return None if read is None else read[0]


def _fragment_with_parts(field: object, value: object) -> tuple[tuple[bytes, str, int, int, bytes], int] | None:
    """``_fragment_of``, and how many parts the row's data is stored in."""
    if type(field) is not bytes or type(value) is not bytes:
        return None
    target = _split_prefixed(field)
    wire = None if target is None else _split_prefixed(target[1])
    head, sep, entry = value.partition(b":")
    if target is None or wire is None or not sep:
        return None
    stop, slash, count = head.partition(b"/")
    start, end, parts = _canonical_int(wire[1]), _canonical_int(stop), _canonical_int(count) if slash else 1
    if start is None or end is None or parts is None or not 1 <= parts <= FRAGMENT_MAX_PARTS:
        return None
    try:
        return (target[0], wire[0].decode(), start, end, entry), parts
    except UnicodeDecodeError:
        return None


def _target_rows(fields: Iterable[tuple[object, object]], target: bytes) -> list[tuple[bytes, FragmentIndex, int]]:
    """The fragment rows of ``target`` among ``:fe`` fields and values: each
    field, its row and how many parts its data is stored in."""
    prefix = _fragment_prefix(target)
    rows: list[tuple[bytes, FragmentIndex, int]] = []
    for field, value in fields:
        if isinstance(field, bytes) and field.startswith(prefix):
            read = _fragment_with_parts(field, value)
            if read is not None and read[0][0] == target:  # see _fragment_of
                rows.append((field, *read))
    return rows


def _data_names(rows: list[tuple[bytes, FragmentIndex, int]]) -> list[bytes]:
    """The ``:fd`` fields of every part of the data of ``rows``."""
    return [f if i == 0 else b"%s#%d" % (f, i) for f, _, parts in rows for i in range(parts)]


def _index(fields: Iterable[tuple[object, object]]) -> list[FragmentIndex]:
    """The fragment rows of ``:fe`` fields and values, in key order (those that do not parse passed over)."""
    found = [f for f in (_fragment_of(k, v) for k, v in fields) if f is not None]
    return sorted(found, key=lambda f: f[:3])


def _wrong_type(session_id: str) -> ValidationError:
    return ValidationError(
        f"session {session_id!r}: a stored key holds the wrong kind of Redis value", path="$.session"
    )


def _decode_head(session_id: str, value: Any) -> tuple[Head, list[bytes]] | None:
    """The head and entries ``_READ`` returned (None: no such session)."""
    if not value:
        return None
    length, chain, contexts, version, epoch, metadata, context, last_chain, entries = value
    raw_context = None
    if context is not None:
        position = context[32:42]
        raw_context = (
            _int_or_none(contexts, -1) - 1,
            int(position) if len(context) >= 42 and position.isdigit() else None,
            context[42:],
            context[:32],
        )
    head = head_of(
        session_id,
        length=length,
        chain=chain,
        contexts=contexts,
        version=b"1" if version is None else version,
        epoch=b"0" if epoch is None else epoch,
        metadata=b"{}" if metadata is None else metadata,
        last_chain=last_chain,
        context=raw_context,
    )
    return head, entries


def _int_or_none(value: object, default: int) -> int:
    return int(value) if isinstance(value, bytes) and value.isdigit() else default


def _row(session_id: str, position: int, item: Any) -> MessageRow:
    """A message entry: digest ‖ chain value ‖ JSON."""
    if type(item) is not bytes or len(item) < 64:
        raise bad_row(session_id, position, "the stored entry is shorter than a digest and a chain value")
    return MessageRow(position, item[64:], item[:32], item[32:64])


def _raw_bytes(raw: Sequence[Any]) -> int:
    return sum(len(e) for e in raw if isinstance(e, bytes))


def _next_batch(head: Head, start: int, rows: list[bytes]) -> list[Arg] | None:
    """The ``_ROWS`` arguments for the entries after ``rows`` (read from
    ``start``), or None when every entry up to the length is read."""
    first = start + len(rows)
    if start < 0 or first >= head.length:
        return None
    return [head.epoch, first, min(first + _BATCH, head.length) - 1]


def _create_args(
    session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None, metadata: str
) -> list[Arg]:
    args: list[Arg] = [session_id, len(rows), chain, 0 if context is None else 1, _context_entry(context)]
    args += [FINGERPRINT_VERSION, metadata]
    args += [_message_entry(r) for r in rows]
    return args


def _condition(head: Head) -> list[Arg]:
    return [head.length, head.chain, head.contexts, head.epoch]


def _append_args(head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None) -> list[Arg]:
    return [
        *_condition(head),
        head.length + len(rows),
        chain,
        head.contexts + (context is not None),
        _context_entry(context),
        *[_message_entry(r) for r in rows],
    ]


def _replace_args(rows: list[MessageRow], chain: bytes, context: ContextRow | None, head: Head) -> list[Arg]:
    return [
        *_condition(head),
        len(rows),
        chain,
        0 if context is None else 1,
        _context_entry(context),
        FINGERPRINT_VERSION,
        *[_message_entry(r) for r in rows],
    ]


def _forked(source: str, session_id: str, result: Any) -> None:
    status = int(result[0])
    if status == 0:
        raise conflict(session_id, None, None)
    if status == -1:
        raise SessionNotFoundError(source)
    if status == -2:
        raise missing_row(source, int(result[1]))
    if status == -3:
        raise ValidationError(
            f"session {source!r} context {int(result[1])}: the stored entry has no position",
            path=f"$.contexts[{int(result[1])}]",
        )


def _info(session_id: str, index: int, fields: Any) -> SessionInfo | None:
    if isinstance(fields, redis.ResponseError):
        raise _wrong_type(session_id) if "WRONGTYPE" in str(fields) else fields
    if isinstance(fields, Exception):
        raise fields
    length, version, metadata = fields
    if length is None and version is None and metadata is None:
        return None  # deleted while the list was read
    return listed_info(
        session_id, index, length, b"1" if version is None else version, b"{}" if metadata is None else metadata
    )


def _infos(ids: list[str], fields: list[Any]) -> list[SessionInfo]:
    infos = [_info(s, i, f) for i, (s, f) in enumerate(zip(ids, fields, strict=True))]
    return [info for info in infos if info is not None]


def _script(session_id: str, call: Callable[[], T]) -> T:
    try:
        return call()
    except redis.ResponseError as err:
        if "WRONGTYPE" in str(err):
            raise _wrong_type(session_id) from None
        raise


async def _ascript(session_id: str, call: Callable[[], Awaitable[T]]) -> T:
    try:
        return await call()
    except redis.ResponseError as err:
        if "WRONGTYPE" in str(err):
            raise _wrong_type(session_id) from None
        raise


class RedisStore(Store):
    """Sessions in Redis (redis-py). ``url`` as for ``redis.Redis.from_url``
    (``redis://host:port/db``); keys start with ``prefix``. Thread-safe
    (redis-py's connection pool). A single Redis server or a primary with
    replicas; the scripts touch one session's keys and the session index."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "thinkseal:",
        fragment_secret: bytes | str | None = None,
        **client_kwargs: Any,
    ) -> None:
        super().__init__(fragment_secret)
        self._client: redis.Redis = redis.Redis.from_url(url, decode_responses=False, **client_kwargs)
        self._keys = _Keys(prefix)
        register = self._client.register_script
        self._create = register(_CREATE)
        self._append = register(_APPEND)
        self._replace = register(_REPLACE)
        self._read_script = register(_READ)
        self._read_lazy_script = register(_READ_LAZY)
        self._rows_script = register(_ROWS)
        self._metadata_script = register(_SET_METADATA)
        self._fork_script = register(_FORK)
        self._delete_script = register(_DELETE)
        self._put_fragment_script = register(_PUT_FRAGMENT)

    @staticmethod
    def _row(session_id: str, position: int, item: Any) -> MessageRow:
        return _row(session_id, position, item)

    def _head_or_none(self, session_id: str) -> Head | None:
        found = self._read_raw(session_id, -1)
        return None if found is None else found[0]

    def _read_raw(self, session_id: str, start: int) -> tuple[Head, list[bytes]] | None:
        keys = self._keys.session(session_id)
        while True:
            found = _decode_head(session_id, _script(session_id, lambda: self._read_script(keys, [start, _BATCH])))
            if found is None:
                return None
            head, rows = found
            if self._rest(session_id, head, start, rows):
                return head, rows
            # replaced or deleted meanwhile: read it again

    def _rest(self, session_id: str, head: Head, start: int, rows: list[bytes]) -> bool:
        """Read the entries after ``rows`` (read from ``start``) into it, up to
        the length; False when the session was replaced or deleted meanwhile.
        Fewer when entries are missing (named when the rows are read)."""
        keys = self._keys.session(session_id)[:2]
        while (args := _next_batch(head, start, rows)) is not None:
            batch = _script(session_id, partial(self._rows_script, keys, args))
            if batch is None:
                return False
            rows += batch
            if len(batch) < _BATCH and start + len(rows) < head.length:
                break
        return True

    def _head(self, session_id: str) -> Head:
        return self._read(session_id, -1)[0]

    def _read(self, session_id: str, start: int) -> tuple[Head, list[bytes]]:
        found = self._read_raw(session_id, start)
        if found is None:
            raise SessionNotFoundError(session_id)
        return found

    def _insert(
        self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None, metadata: str
    ) -> None:
        args = _create_args(session_id, rows, chain, context, metadata)
        keys = [*self._keys.session(session_id), self._keys.index, self._keys.seq, *self._keys.fragments(session_id)]
        if not _script(session_id, lambda: self._create(keys, args)):
            raise conflict(session_id, None, None)

    def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        args = _append_args(head, rows, chain, context)
        keys = self._keys.session(session_id)
        if int(_script(session_id, lambda: self._append(keys, args))) != 1:
            raise lost_race(session_id, head, self._head_or_none(session_id))

    def _replace_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> int:
        args = _replace_args(rows, chain, context, head)
        keys = [*self._keys.session(session_id), self._keys.seq, *self._keys.fragments(session_id)]
        epoch = int(_script(session_id, lambda: self._replace(keys, args)))
        if epoch <= 0:
            raise lost_race(session_id, head, self._head_or_none(session_id))
        return epoch

    def _set_metadata(self, session_id: str, metadata: str) -> bool:
        keys = self._keys.session(session_id)[:1]
        return bool(_script(session_id, lambda: self._metadata_script(keys, [metadata])))

    def _sessions(self) -> list[str]:
        return [listed_id(v, i) for i, v in enumerate(self._client.zrange(self._keys.index, 0, -1))]

    def _infos(self) -> list[SessionInfo]:
        ids = self._sessions()
        pipe = self._client.pipeline(transaction=False)
        for session_id in ids:
            pipe.hmget(self._keys.session(session_id)[0], ["length", "version", "metadata"])
        return _infos(ids, pipe.execute(raise_on_error=False))

    def _delete(self, session_id: str) -> bool:
        keys = [*self._keys.session(session_id), self._keys.index, *self._keys.fragments(session_id)]
        return bool(self._delete_script(keys, [session_id]))

    def _fork(self, source: str, length: int, session_id: str) -> None:
        keys = [*self._keys.session(source), *self._keys.session(session_id), self._keys.index, self._keys.seq]
        keys += self._keys.fragments(session_id)
        _forked(source, session_id, _script(source, lambda: self._fork_script(keys, [length, session_id, CHAIN_START])))

    def _rows_between(self, session_id: str, start: int, end: int) -> list[Any]:
        start = max(start, 0)  # a negative list index would count from the end
        if end <= start:
            return []
        key = self._keys.session(session_id)[1]
        return list(_script(session_id, lambda: self._client.lrange(key, start, end - 1)))

    def _rows_at(self, session_id: str, positions: Sequence[int]) -> list[Any]:
        key = self._keys.session(session_id)[1]
        pipe = self._client.pipeline(transaction=True)  # one snapshot
        for position in positions:
            pipe.lindex(key, position)
        rows: list[Any] = []
        for position, entry in zip(positions, _script(session_id, pipe.execute), strict=True):
            # A list has no holes: past the first missing entry every later one is missing too.
            if position < 0 or entry is None:
                break
            rows.append(entry)
        return rows

    def _fragment_index(self, session_id: str) -> list[tuple[bytes, str, int, int, bytes]]:
        key = self._keys.fragments(session_id)[0]
        fields = _script(session_id, lambda: self._client.hgetall(key))
        return _index(fields.items())

    def _fragment_index_and_tail(self, session_id: str, back: int) -> tuple[list[FragmentIndex], Tail | None, object]:
        keys = [*self._keys.session(session_id), self._keys.fragments(session_id)[0]]
        value = _script(session_id, lambda: self._read_lazy_script(keys, [back, _BATCH]))
        if not value:
            raise SessionNotFoundError(session_id)
        *read, fields, start = value
        found = _decode_head(session_id, read)
        if type(fields) is not list or type(start) is not int or found is None:
            raise _wrong_type(session_id)
        head, rows = found
        pairs = list(zip(fields[::2], fields[1::2], strict=False))
        tail = (head, start, rows) if self._rest(session_id, head, start, rows) else None
        return _index(pairs), tail, pairs  # the entries as read: the names of their data, for _fragments

    def _fragments(self, session_id: str, target: bytes, hint: object = None) -> list[FragmentRow]:
        # The entries, then every part of the data of the target's rows in one
        # HMGET: a script would copy megabytes of data through Lua (4.0 ms
        # against 0.95 for 1.7 MB here), and the two reads need no snapshot
        # (each row is checked whole, and a row whose data changed between
        # them, a part included, does not check). With the entries the load
        # read (``hint``) the data is asked for with them, in one round trip,
        # and again only when the entries changed since.
        entries_key, data_key = self._keys.fragments(session_id)
        guessed = _data_names(_target_rows(hint, target)) if isinstance(hint, list) else []
        pipe = self._client.pipeline(transaction=False)
        pipe.hgetall(entries_key)
        if guessed:
            pipe.hmget(data_key, guessed)
        entries, *read = _script(session_id, pipe.execute)
        rows = _target_rows(entries.items(), target)
        if not rows:
            return []
        names = _data_names(rows)
        if names != guessed:
            read = [_script(session_id, lambda: self._client.hmget(data_key, names))]
        values = iter(read[0])
        found: list[FragmentRow] = []
        for _, index, parts in rows:
            data = data_parts(enumerate(list(itertools.islice(values, parts))))  # every part taken, bad or not
            if data is not None:
                found.append((index[1], index[2], index[3], index[4], data))
        return sorted(found, key=lambda f: f[:2])

    def _put_fragment(
        self, session_id: str, target: bytes, wire_key: str, start: int, end: int, entry: bytes, data: bytes
    ) -> None:
        keys = [self._keys.session(session_id)[0], *self._keys.fragments(session_id)]
        parts = fragment_parts(data)
        args: list[Arg] = [
            _fragment_prefix(target, wire_key),
            start,
            end,
            b"%d/%d:" % (end, len(parts)) + entry,
            FRAGMENT_MAX_PARTS,
            *parts,
        ]
        _script(session_id, lambda: self._put_fragment_script(keys, args))

    def close(self) -> None:
        self._client.close()


class AsyncRedisStore(AsyncStore):
    """``RedisStore`` on ``redis.asyncio``."""

    def __init__(
        self,
        url: str,
        *,
        prefix: str = "thinkseal:",
        fragment_secret: bytes | str | None = None,
        **client_kwargs: Any,
    ) -> None:
        super().__init__(fragment_secret)
        self._client: redis.asyncio.Redis = redis.asyncio.Redis.from_url(url, decode_responses=False, **client_kwargs)
        self._keys = _Keys(prefix)
        self._twin_args = (url, prefix, client_kwargs)
        self._twin: RedisStore | None = None
        register = self._client.register_script
        self._create = register(_CREATE)
        self._append = register(_APPEND)
        self._replace = register(_REPLACE)
        self._read_script = register(_READ)
        self._rows_script = register(_ROWS)
        self._metadata_script = register(_SET_METADATA)
        self._fork_script = register(_FORK)
        self._delete_script = register(_DELETE)

    @staticmethod
    def _row(session_id: str, position: int, item: Any) -> MessageRow:
        return _row(session_id, position, item)

    @staticmethod
    def _raw_bytes(raw: Any) -> int:
        return _raw_bytes(raw)

    async def _head_or_none(self, session_id: str) -> Head | None:
        found = await self._read_raw(session_id, -1)
        return None if found is None else found[0]

    async def _read_raw(self, session_id: str, start: int) -> tuple[Head, list[bytes]] | None:
        keys = self._keys.session(session_id)
        while True:
            value = await _ascript(session_id, lambda: self._read_script(keys, [start, _BATCH]))
            found = _decode_head(session_id, value)
            if found is None:
                return None
            head, rows = found
            while (args := _next_batch(head, start, rows)) is not None:
                batch = await _ascript(session_id, partial(self._rows_script, keys[:2], args))
                if batch is None:
                    break
                rows += batch
                if len(batch) < _BATCH and start + len(rows) < head.length:
                    return head, rows
            else:
                return head, rows

    async def _head(self, session_id: str) -> Head:
        return (await self._read(session_id, -1))[0]

    async def _read(self, session_id: str, start: int) -> tuple[Head, list[bytes]]:
        found = await self._read_raw(session_id, start)
        if found is None:
            raise SessionNotFoundError(session_id)
        return found

    async def _insert(
        self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None, metadata: str
    ) -> None:
        args = _create_args(session_id, rows, chain, context, metadata)
        keys = [*self._keys.session(session_id), self._keys.index, self._keys.seq, *self._keys.fragments(session_id)]
        if not await _ascript(session_id, lambda: self._create(keys, args)):
            raise conflict(session_id, None, None)

    async def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        args = _append_args(head, rows, chain, context)
        keys = self._keys.session(session_id)
        if int(await _ascript(session_id, lambda: self._append(keys, args))) != 1:
            raise lost_race(session_id, head, await self._head_or_none(session_id))

    async def _replace_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> int:
        args = _replace_args(rows, chain, context, head)
        keys = [*self._keys.session(session_id), self._keys.seq, *self._keys.fragments(session_id)]
        epoch = int(await _ascript(session_id, lambda: self._replace(keys, args)))
        if epoch <= 0:
            raise lost_race(session_id, head, await self._head_or_none(session_id))
        return epoch

    async def _set_metadata(self, session_id: str, metadata: str) -> bool:
        keys = self._keys.session(session_id)[:1]
        return bool(await _ascript(session_id, lambda: self._metadata_script(keys, [metadata])))

    async def _sessions(self) -> list[str]:
        return [listed_id(v, i) for i, v in enumerate(await self._client.zrange(self._keys.index, 0, -1))]

    async def _infos(self) -> list[SessionInfo]:
        ids = await self._sessions()
        pipe = self._client.pipeline(transaction=False)
        for session_id in ids:
            pipe.hmget(self._keys.session(session_id)[0], ["length", "version", "metadata"])
        return _infos(ids, await pipe.execute(raise_on_error=False))

    async def _delete(self, session_id: str) -> bool:
        keys = [*self._keys.session(session_id), self._keys.index, *self._keys.fragments(session_id)]
        return bool(await self._delete_script(keys, [session_id]))

    async def _fork(self, source: str, length: int, session_id: str) -> None:
        keys = [*self._keys.session(source), *self._keys.session(session_id), self._keys.index, self._keys.seq]
        keys += self._keys.fragments(session_id)
        result = await _ascript(source, lambda: self._fork_script(keys, [length, session_id, CHAIN_START]))
        _forked(source, session_id, result)

    def _lazy_twin(self) -> RedisStore:
        if self._twin is None:
            url, prefix, client_kwargs = self._twin_args
            self._twin = RedisStore(url, prefix=prefix, fragment_secret=self._fragment_secret, **client_kwargs)
        return self._twin

    async def close(self) -> None:
        await self._client.aclose()
        twin, self._twin = self._twin, None
        if twin is not None:
            twin.close()
