"""Redis through redis-py (the ``store-redis`` extra), sync and asyncio.

A session is three keys sharing the hash tag ``{session id}``: a hash
(``length``, ``chain``, ``contexts``), a list of message entries and a list of
context entries. Every write is one Lua script, which Redis runs atomically:
the append script compares the hash with what the writer read and pushes the
new entries only when they match. Reads are one script as well (the hash, the
latest context and the entries asked for).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis
import redis.asyncio

from ._base import AsyncStore, Store
from ._codec import CHAIN_START, ContextRow, Head, MessageRow, SessionNotFoundError, conflict, lost_race

__all__ = ["AsyncRedisStore", "RedisStore"]

Arg = bytes | str | int

# Entries: a message is digest (32 bytes) ‖ chain value (32 bytes) ‖ JSON (UTF-8);
# a context is digest (32 bytes) ‖ position (10 ASCII digits) ‖ JSON (UTF-8).

_CREATE = """
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('HSET', KEYS[1], 'length', ARGV[2], 'chain', ARGV[3], 'contexts', ARGV[4])
for i = 6, #ARGV, 1000 do
    redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
if ARGV[5] ~= '' then redis.call('RPUSH', KEYS[3], ARGV[5]) end
redis.call('ZADD', KEYS[4], redis.call('INCR', KEYS[5]), ARGV[1])
return 1
"""

_APPEND = """
local h = redis.call('HMGET', KEYS[1], 'length', 'chain', 'contexts')
if not h[1] then return {-1, 0} end
if h[1] ~= ARGV[1] or h[2] ~= ARGV[2] or h[3] ~= ARGV[3] then return {0, tonumber(h[1])} end
for i = 8, #ARGV, 1000 do
    redis.call('RPUSH', KEYS[2], unpack(ARGV, i, math.min(i + 999, #ARGV)))
end
if ARGV[7] ~= '' then redis.call('RPUSH', KEYS[3], ARGV[7]) end
redis.call('HSET', KEYS[1], 'length', ARGV[4], 'chain', ARGV[5], 'contexts', ARGV[6])
return {1, tonumber(ARGV[4])}
"""

# ARGV[1]: the first position to read, or -1 for the head only.
_READ = """
local h = redis.call('HMGET', KEYS[1], 'length', 'chain', 'contexts')
if not h[1] then return false end
local n = tonumber(h[3])
local context = false
if n > 0 then context = redis.call('LINDEX', KEYS[3], n - 1) end
local start = tonumber(ARGV[1])
local rows = {}
if start >= 0 and start < tonumber(h[1]) then rows = redis.call('LRANGE', KEYS[2], start, tonumber(h[1]) - 1) end
return {h[1], h[2], h[3], context, rows}
"""

_FORK = """
if redis.call('EXISTS', KEYS[4]) == 1 then return 0 end
if redis.call('EXISTS', KEYS[1]) == 0 then return -1 end
local n = tonumber(ARGV[1])
local chain = ARGV[3]
redis.call('DEL', KEYS[5], KEYS[6])
if n > 0 then chain = string.sub(redis.call('LINDEX', KEYS[2], n - 1), 33, 64) end
for i = 0, n - 1, 1000 do
    redis.call('RPUSH', KEYS[5], unpack(redis.call('LRANGE', KEYS[2], i, math.min(i + 999, n - 1))))
end
local contexts = 0
for _, entry in ipairs(redis.call('LRANGE', KEYS[3], 0, -1)) do
    if tonumber(string.sub(entry, 33, 42)) <= n then
        redis.call('RPUSH', KEYS[6], entry)
        contexts = contexts + 1
    end
end
redis.call('HSET', KEYS[4], 'length', n, 'chain', chain, 'contexts', contexts)
redis.call('ZADD', KEYS[7], redis.call('INCR', KEYS[8]), ARGV[2])
return 1
"""

_DELETE = """
local found = redis.call('DEL', KEYS[1])
redis.call('DEL', KEYS[2], KEYS[3])
redis.call('ZREM', KEYS[4], ARGV[1])
return found
"""


class _Keys:
    def __init__(self, prefix: str) -> None:
        self.prefix = prefix
        self.index = f"{prefix}sessions"
        self.seq = f"{prefix}seq"

    def session(self, session_id: str) -> list[str]:
        base = f"{self.prefix}{{{session_id}}}"
        return [f"{base}:s", f"{base}:m", f"{base}:c"]


def _message_entry(row: MessageRow) -> bytes:
    return row.digest + row.chain + row.body.encode()


def _context_entry(row: ContextRow | None) -> bytes:
    return b"" if row is None else row.digest + b"%010d" % row.position + row.body.encode()


def _decode_head(session_id: str, value: Any) -> tuple[Head, list[bytes]]:
    if not value:
        raise SessionNotFoundError(session_id)
    length, chain, contexts, context, entries = value
    n = int(contexts)
    row = None
    if context:
        row = ContextRow(n - 1, int(context[32:42]), context[42:].decode(), bytes(context[:32]))
    return Head(int(length), bytes(chain), n, row), entries


def _decode_rows(start: int, entries: Sequence[bytes]) -> list[MessageRow]:
    return [MessageRow(start + i, e[64:].decode(), e[:32], e[32:64]) for i, e in enumerate(entries)]


def _create_args(session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None) -> list[Arg]:
    args: list[Arg] = [session_id, len(rows), chain, 0 if context is None else 1, _context_entry(context)]
    args += [_message_entry(r) for r in rows]
    return args


def _append_args(head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None) -> list[Arg]:
    return [
        head.length,
        head.chain,
        head.contexts,
        head.length + len(rows),
        chain,
        head.contexts + (context is not None),
        _context_entry(context),
        *[_message_entry(r) for r in rows],
    ]


def _ids(values: Any) -> list[str]:
    return [v.decode() for v in values]


def _appended(session_id: str, head: Head, result: Any) -> None:
    status, length = int(result[0]), int(result[1])
    if status != 1:
        raise lost_race(session_id, head, None if status < 0 else length)


class RedisStore(Store):
    """Sessions in Redis (redis-py). ``url`` as for ``redis.Redis.from_url``
    (``redis://host:port/db``); keys start with ``prefix``. Thread-safe
    (redis-py's connection pool). A single Redis server or a primary with
    replicas; the scripts touch one session's keys and the session index."""

    def __init__(self, url: str, *, prefix: str = "thinkseal:", **client_kwargs: Any) -> None:
        super().__init__()
        self._client: redis.Redis = redis.Redis.from_url(url, decode_responses=False, **client_kwargs)
        self._keys = _Keys(prefix)
        self._create = self._client.register_script(_CREATE)
        self._append = self._client.register_script(_APPEND)
        self._read_script = self._client.register_script(_READ)
        self._fork_script = self._client.register_script(_FORK)
        self._delete_script = self._client.register_script(_DELETE)

    def _head(self, session_id: str) -> Head:
        return self._read(session_id, -1)[0]

    def _read(self, session_id: str, start: int) -> tuple[Head, list[MessageRow]]:
        head, entries = _decode_head(session_id, self._read_script(self._keys.session(session_id), [start]))
        return head, _decode_rows(start, entries)

    def _insert(self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None) -> None:
        args = _create_args(session_id, rows, chain, context)
        keys = [*self._keys.session(session_id), self._keys.index, self._keys.seq]
        if not self._create(keys, args):
            raise conflict(session_id, None, None)

    def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        result = self._append(self._keys.session(session_id), _append_args(head, rows, chain, context))
        _appended(session_id, head, result)

    def _sessions(self) -> list[str]:
        return _ids(self._client.zrange(self._keys.index, 0, -1))

    def _delete(self, session_id: str) -> bool:
        keys = [*self._keys.session(session_id), self._keys.index]
        return bool(self._delete_script(keys, [session_id]))

    def _fork(self, source: str, length: int, session_id: str) -> None:
        keys = [*self._keys.session(source), *self._keys.session(session_id), self._keys.index, self._keys.seq]
        result = int(self._fork_script(keys, [length, session_id, CHAIN_START]))
        if result == 0:
            raise conflict(session_id, None, None)
        if result < 0:
            raise SessionNotFoundError(source)

    def close(self) -> None:
        self._client.close()


class AsyncRedisStore(AsyncStore):
    """``RedisStore`` on ``redis.asyncio``."""

    def __init__(self, url: str, *, prefix: str = "thinkseal:", **client_kwargs: Any) -> None:
        super().__init__()
        self._client: redis.asyncio.Redis = redis.asyncio.Redis.from_url(url, decode_responses=False, **client_kwargs)
        self._keys = _Keys(prefix)
        self._create = self._client.register_script(_CREATE)
        self._append = self._client.register_script(_APPEND)
        self._read_script = self._client.register_script(_READ)
        self._fork_script = self._client.register_script(_FORK)
        self._delete_script = self._client.register_script(_DELETE)

    async def _head(self, session_id: str) -> Head:
        return (await self._read(session_id, -1))[0]

    async def _read(self, session_id: str, start: int) -> tuple[Head, list[MessageRow]]:
        value = await self._read_script(self._keys.session(session_id), [start])
        head, entries = _decode_head(session_id, value)
        return head, _decode_rows(start, entries)

    async def _insert(self, session_id: str, rows: list[MessageRow], chain: bytes, context: ContextRow | None) -> None:
        args = _create_args(session_id, rows, chain, context)
        keys = [*self._keys.session(session_id), self._keys.index, self._keys.seq]
        if not await self._create(keys, args):
            raise conflict(session_id, None, None)

    async def _append_rows(
        self, session_id: str, head: Head, rows: list[MessageRow], chain: bytes, context: ContextRow | None
    ) -> None:
        result = await self._append(self._keys.session(session_id), _append_args(head, rows, chain, context))
        _appended(session_id, head, result)

    async def _sessions(self) -> list[str]:
        return _ids(await self._client.zrange(self._keys.index, 0, -1))

    async def _delete(self, session_id: str) -> bool:
        keys = [*self._keys.session(session_id), self._keys.index]
        return bool(await self._delete_script(keys, [session_id]))

    async def _fork(self, source: str, length: int, session_id: str) -> None:
        keys = [*self._keys.session(source), *self._keys.session(session_id), self._keys.index, self._keys.seq]
        result = int(await self._fork_script(keys, [length, session_id, CHAIN_START]))
        if result == 0:
            raise conflict(session_id, None, None)
        if result < 0:
            raise SessionNotFoundError(source)

    async def close(self) -> None:
        await self._client.aclose()
