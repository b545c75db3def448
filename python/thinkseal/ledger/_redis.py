"""The ledger in Redis (redis-py, the ``store-redis`` extra), sync and asyncio.

Each entry is a hash under ``prefix`` + the key's hex (``binding``,
``checksum``), expiring by Redis's own TTL (``PEXPIREAT``); a ledger without
a TTL relies on the server's memory policy (``maxmemory-policy
allkeys-lru``) to stay bounded. A write is one script, so the merge of each
key (``_backend.merged``: the same binding again, or a conflict) is atomic.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import redis
import redis.asyncio

from ._backend import BackendError, Write
from ._entries import CONFLICT, Entry
from ._sqlite import entry_of

# KEYS: one per write. ARGV: per write, binding, checksum, conflict checksum,
# expiry in ms since the epoch ("" for none); then now in ms. The same rule as
# ``merged``: an entry that is not there (Redis dropped it when it expired) is
# written; the same binding again keeps the later expiry; another binding, or a
# conflict, leaves a conflict.
_PUT = (
    """
local now = tonumber(ARGV[#ARGV])
for i, key in ipairs(KEYS) do
  local b, c, t, e = ARGV[4*i-3], ARGV[4*i-2], ARGV[4*i-1], ARGV[4*i]
  local old = redis.call('HGET', key, 'binding')
  if not old then
    redis.call('HSET', key, 'binding', b, 'checksum', c)
  elseif old == b then
    redis.call('HSET', key, 'checksum', c)
  else
    redis.call('HSET', key, 'binding', '"""
    + CONFLICT
    + """', 'checksum', t)
  end
  if e == '' then
    redis.call('PERSIST', key)
  else
    local left = redis.call('PTTL', key)
    local at = tonumber(e)
    if not old or (left >= 0 and now + left < at) then
      redis.call('PEXPIREAT', key, at)
    end
  end
end
return #KEYS
"""
)


def _arguments(writes: Sequence[Write], now: float) -> tuple[list[str], list[Any]]:
    keys: list[str] = []
    args: list[Any] = []
    for key, entry, tombstone in writes:
        keys.append(key.hex())
        expires = "" if entry.expires is None else str(int(entry.expires * 1000))
        args += [entry.binding, entry.check, tombstone.check, expires]
    return keys, [*args, str(int(now * 1000))]


def _entries(keys: Sequence[bytes], values: Sequence[Any]) -> dict[bytes, Entry]:
    found: dict[bytes, Entry] = {}
    for key, value in zip(keys, values, strict=True):
        if isinstance(value, (list, tuple)) and len(value) == 2 and value[0] is not None:
            found[key] = entry_of(value[0], value[1], None)
    return found


class RedisBackend:
    def __init__(self, url: str, prefix: str, **client_kwargs: Any) -> None:
        self._prefix = prefix
        self._client: redis.Redis = redis.Redis.from_url(url, decode_responses=False, **client_kwargs)
        self._put = self._client.register_script(_PUT)

    def _names(self, hexes: Sequence[str]) -> list[str]:
        return [self._prefix + h for h in hexes]

    def get(self, keys: Sequence[bytes]) -> dict[bytes, Entry]:
        try:
            with self._client.pipeline(transaction=False) as pipe:
                for name in self._names([k.hex() for k in keys]):
                    pipe.hmget(name, "binding", "checksum")
                values = pipe.execute()
        except redis.RedisError as err:
            raise BackendError("ledger: Redis read failed") from err
        return _entries(keys, values)

    def put(self, writes: Sequence[Write], now: float) -> None:
        names, args = _arguments(writes, now)
        try:
            self._put(keys=self._names(names), args=args)
        except redis.RedisError as err:
            raise BackendError("ledger: Redis write failed") from err

    def close(self) -> None:
        self._client.close()

    def __repr__(self) -> str:
        return f"redis, prefix {self._prefix!r}"


class AsyncRedisBackend:
    def __init__(self, url: str, prefix: str, **client_kwargs: Any) -> None:
        self._prefix = prefix
        self._client: redis.asyncio.Redis = redis.asyncio.Redis.from_url(url, decode_responses=False, **client_kwargs)
        self._put = self._client.register_script(_PUT)

    def _names(self, hexes: Sequence[str]) -> list[str]:
        return [self._prefix + h for h in hexes]

    async def get(self, keys: Sequence[bytes]) -> dict[bytes, Entry]:
        try:
            async with self._client.pipeline(transaction=False) as pipe:
                for name in self._names([k.hex() for k in keys]):
                    pipe.hmget(name, "binding", "checksum")
                values = await pipe.execute()
        except redis.RedisError as err:
            raise BackendError("ledger: Redis read failed") from err
        return _entries(keys, values)

    async def put(self, writes: Sequence[Write], now: float) -> None:
        names, args = _arguments(writes, now)
        try:
            await self._put(keys=self._names(names), args=args)
        except redis.RedisError as err:
            raise BackendError("ledger: Redis write failed") from err

    async def close(self) -> None:
        await self._client.aclose()

    def __repr__(self) -> str:
        return f"redis (asyncio), prefix {self._prefix!r}"
