"""``Ledger`` and ``AsyncLedger``: record the bindings of sealed replies under
their sealed data, and attach them again to a history held elsewhere.

``record(reply)`` keeps, for each sealed datum of a bound turn, the datum's
key -> the turn's binding. ``attach(conversation)`` looks up each assistant
turn with sealed parts: when every datum of the turn is recorded under one
binding and that binding fingerprints this very turn, the turn is bound to it
(``"recognised"``); when none is recorded it is ``"unknown"``; anything else
(some recorded, two bindings, the turn edited since) is ``"changed"``. A turn
that is not recognised keeps what it had (an imported turn has no binding, so
it goes out unsealed). The replay decision then runs as for any conversation:
a recognised turn whose prefix changed still goes out unsealed.

Nothing read from the backend is taken on trust: an entry that does not
verify, does not parse or was recorded under two bindings leaves its turn
unrecognised, and is logged (``thinkseal.ledger``, keys shortened, no
content); a backend that fails while attaching is logged and leaves every
turn as it was, so a request goes out unsealed rather than failing.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable, Sequence
from enum import StrEnum
from types import TracebackType
from typing import TYPE_CHECKING, Any, NamedTuple, Self

from .._binding import FINGERPRINT_VERSION, Binding
from .._conversation import Conversation
from .._errors import ThinksealError, ValidationError
from .._frozen import Frozen
from .._memo import cached, entry, put
from .._messages import AssistantMessage, Message
from .._secret import secret_bytes
from ._entries import CONFLICT, Checker, Datum, Entry, keys, sealed_data

if TYPE_CHECKING:
    from .._reply import Reply
    from ._backend import AsyncBackend, Backend

log = logging.getLogger("thinkseal.ledger")

# Thirty days: longer than a session usually lives, short enough that the ledger
# does not keep every reply a server ever saw.
DEFAULT_TTL: float = 30 * 24 * 3600.0
DEFAULT_MAX_ENTRIES: int = 1_000_000


class Recognition(StrEnum):
    """What ``attach`` found for one turn."""

    RECOGNISED = "recognised"
    UNKNOWN = "unknown"
    CHANGED = "changed"


class AttachedTurn(Frozen):
    """One assistant turn with sealed parts: its ``index`` in the conversation
    and what the ledger found (``status``, a ``Recognition``: a ``str``)."""

    __slots__ = ("index", "status")
    __match_args__ = ("index", "status")
    index: int
    status: Recognition

    def __init__(self, index: int, status: Recognition | str) -> None:
        self._init(index=index, status=Recognition(status))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, AttachedTurn):
            return NotImplemented
        return (self.index, self.status) == (other.index, other.status)

    def __hash__(self) -> int:
        return hash((self.index, self.status))

    def __repr__(self) -> str:
        return f"AttachedTurn(index={self.index}, status={str(self.status)!r})"


class Attached(NamedTuple):
    """``attach``'s result: the ``conversation`` with every recognised turn
    bound, and per assistant turn with sealed parts what was found."""

    conversation: Conversation
    turns: tuple[AttachedTurn, ...]

    @property
    def recognised(self) -> int:
        return sum(1 for t in self.turns if t.status is Recognition.RECOGNISED)


def _check_options(ttl: object, max_entries: object, secret: object) -> tuple[float | None, int, bytes]:
    if ttl is not None and (not isinstance(ttl, (int, float)) or isinstance(ttl, bool) or not 0 < ttl < float("inf")):
        raise ValidationError("ttl: expected a positive number of seconds, or None for no expiry", path="ttl")
    if not isinstance(max_entries, int) or isinstance(max_entries, bool) or max_entries < 1:
        raise ValidationError("max_entries: expected a positive int", path="max_entries")
    return (None if ttl is None else float(ttl)), max_entries, secret_bytes(secret, "secret")


def _message_of(reply: object) -> AssistantMessage:
    message = getattr(reply, "message", reply)  # a Reply, or the message itself
    if not isinstance(message, AssistantMessage):
        raise ValidationError(
            f"record: expected a Reply or an AssistantMessage, got {type(reply).__name__}", path="reply"
        )
    return message


def _short(key: bytes) -> str:
    return key[:6].hex()


class _Plan:
    """The keys to look up for one ``attach``, per turn, and the decisions."""

    def __init__(self, conversation: Conversation, account: str | None) -> None:
        if not isinstance(conversation, Conversation):
            raise ValidationError(
                f"conversation: expected a Conversation, got {type(conversation).__name__}", path="conversation"
            )
        if account is not None and not isinstance(account, str):
            raise ValidationError("account: expected a string or None", path="account")
        self.conversation = conversation
        self.turns: list[tuple[int, AssistantMessage, list[bytes]]] = []
        for i, message in enumerate(conversation):
            if isinstance(message, AssistantMessage):
                found = _keys_of(message, account)
                if found is not None:
                    self.turns.append((i, message, found))
        self.keys = sorted({k for _, _, ks in self.turns for k in ks})

    def decide(self, found: dict[bytes, Entry], checker: Checker) -> Attached:
        now = time.time()
        bindings: dict[bytes, Binding | str | None] = {k: checker.binding_of(k, found.get(k), now) for k in self.keys}
        for key, value in bindings.items():
            if value == "invalid":
                log.warning("ledger entry %s does not verify: ignored (its turn goes out unsealed)", _short(key))
            elif value == "conflict":
                log.warning("ledger entry %s was recorded under two bindings: ignored", _short(key))
        messages: list[Message] | None = None
        statuses: list[AttachedTurn] = []
        for index, turn, turn_keys in self.turns:
            held = [bindings[k] for k in turn_keys]
            status = _recognise(turn, held)
            if status is Recognition.RECOGNISED:
                binding = held[0]
                assert isinstance(binding, Binding)
                if binding != turn.thinking_binding:
                    if messages is None:
                        messages = list(self.conversation)
                    messages[index] = _bound(turn, binding)
            statuses.append(AttachedTurn(index, status))
        conversation = self.conversation if messages is None else self.conversation.with_messages(messages)
        return Attached(conversation, tuple(statuses))

    def unchanged(self) -> Attached:
        """Every turn as it was (the backend could not be read)."""
        return Attached(self.conversation, tuple(AttachedTurn(i, Recognition.UNKNOWN) for i, _, _ in self.turns))


def _keys_of(turn: AssistantMessage, account: str | None) -> list[bytes] | None:
    """The ledger keys of ``turn``'s sealed data under ``account`` (None: the
    turn has no sealed parts), computed once per turn and account: a history
    re-sent with one more step is looked up again, and its turns are the very
    same objects when the reader kept them."""

    def build() -> list[bytes] | None:
        return keys(account, sealed_data(turn)) if turn.has_sealed_parts else None

    return cached(turn, f"ledger-keys:{account or ''}", build)


def _bound(turn: AssistantMessage, binding: Binding) -> AssistantMessage:
    """``turn`` bound to ``binding``, the same object for the same turn and
    binding each time: a conversation built from those objects again keeps the
    replay decisions of the one before for its unchanged prefix."""
    found = entry(turn, "ledger-bound", None)
    if found is not None and (found[0] is binding or found[0] == binding):
        return found[1]  # type: ignore[no-any-return]
    bound = turn._bound(binding)
    put(turn, "ledger-bound", (binding, bound))
    return bound


def _recognise(turn: AssistantMessage, held: Sequence[Binding | str | None]) -> Recognition:
    first = held[0]
    if first is None and all(b is None for b in held):
        return Recognition.UNKNOWN
    if not isinstance(first, Binding) or any(b is not first and b != first for b in held):
        return Recognition.CHANGED  # some data unknown, a bad entry, or data of two turns
    if first.turn != turn.digest or first.version != FINGERPRINT_VERSION:
        return Recognition.CHANGED  # the turn was edited since it was recorded (or an old fingerprint)
    return Recognition.RECOGNISED


class _Recording:
    """The entries one ``record`` writes."""

    def __init__(self, reply: object, ttl: float | None, checker: Checker) -> None:
        message = _message_of(reply)
        binding = message.thinking_binding
        self.entries: list[tuple[bytes, Entry, Entry]] = []  # key, entry, the conflict entry for that key
        if binding is None or not message.has_sealed_parts:
            return  # nothing sealed, or not bound: nothing to record
        text = str(binding)
        expires = None if ttl is None else time.time() + ttl
        for key in keys(binding.origin.account, sealed_data(message)):
            entry = Entry(text, checker.check(key, text), expires)
            tombstone = Entry(CONFLICT, checker.check(key, CONFLICT), expires)
            self.entries.append((key, entry, tombstone))


class _Options:
    def __init__(self, ttl: float | None, max_entries: int, secret: bytes | str | None) -> None:
        self.ttl, self.max_entries, key = _check_options(ttl, max_entries, secret)
        self.checker = Checker(key)


class Ledger:
    """Bindings of sealed replies, kept under their sealed data (digests and
    bindings only), so a history held elsewhere can be checked: ``record``
    each bound reply, ``attach`` a history before preparing it.

    ``Ledger()`` keeps them in memory; ``Ledger.sqlite(path)``,
    ``Ledger.postgres(conninfo)`` and ``Ledger.redis(url)`` share them between
    processes. ``ttl``: seconds an entry lives (None: forever); ``max_entries``:
    the most entries kept (the oldest go first); ``secret``: a key for the
    entries' checks, shared by every process of a fleet (without one, a check
    notices corruption and truncation, not a forgery by someone who can write
    to the backend). See docs/ledger.md.
    """

    def __init__(
        self,
        *,
        ttl: float | None = DEFAULT_TTL,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        secret: bytes | str | None = None,
    ) -> None:
        from ._memory import MemoryBackend  # noqa: PLC0415

        self._options = _Options(ttl, max_entries, secret)
        self._backend: Backend = MemoryBackend(self._options.max_entries)

    @classmethod
    def _on(cls, make: Callable[[int], Backend], options: dict[str, Any]) -> Ledger:
        ledger = cls.__new__(cls)
        ledger._options = _Options(**options)
        ledger._backend = make(ledger._options.max_entries)
        return ledger

    @classmethod
    def sqlite(
        cls,
        path: str = "thinkseal-ledger.db",
        *,
        ttl: float | None = DEFAULT_TTL,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        secret: bytes | str | None = None,
    ) -> Ledger:
        """A ledger in a SQLite file (WAL mode: several processes can share it)."""
        from ._sqlite import SQLiteBackend  # noqa: PLC0415

        options = {"ttl": ttl, "max_entries": max_entries, "secret": secret}
        return cls._on(lambda limit: SQLiteBackend(path, limit), options)

    @classmethod
    def postgres(
        cls,
        conninfo: str,
        *,
        schema: str | None = None,
        ttl: float | None = DEFAULT_TTL,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        secret: bytes | str | None = None,
    ) -> Ledger:
        """A ledger in PostgreSQL (psycopg 3, the ``store-postgres`` extra)."""
        from ._postgres import PostgresBackend  # noqa: PLC0415

        options = {"ttl": ttl, "max_entries": max_entries, "secret": secret}
        return cls._on(lambda limit: PostgresBackend(conninfo, schema, limit), options)

    @classmethod
    def redis(
        cls,
        url: str,
        *,
        prefix: str = "thinkseal:ledger:",
        ttl: float | None = DEFAULT_TTL,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        secret: bytes | str | None = None,
    ) -> Ledger:
        """A ledger in Redis (redis-py, the ``store-redis`` extra); entries
        expire by Redis's own TTL, and the server's memory policy bounds them."""
        from ._redis import RedisBackend  # noqa: PLC0415

        options = {"ttl": ttl, "max_entries": max_entries, "secret": secret}
        return cls._on(lambda limit: RedisBackend(url, prefix), options)

    def record(self, reply: Reply | AssistantMessage) -> int:
        """Record the binding of ``reply`` (a ``Reply`` or a bound message)
        under each of its sealed data; returns how many were recorded (0 for
        a reply that is not sealed or not bound)."""
        recording = _Recording(reply, self._options.ttl, self._options.checker)
        if recording.entries:
            self._backend.put(recording.entries, time.time())
        return len(recording.entries)

    def attach(self, conversation: Conversation, *, account: str | None = None) -> Attached:
        """``conversation`` with every turn the ledger recognises bound to its
        recorded binding (looked up under ``account``, the ``Origin.account``
        the turns were produced under)."""
        plan = _Plan(conversation, account)
        if not plan.keys:
            return plan.decide({}, self._options.checker)
        try:
            found = self._backend.get(plan.keys)
        except (ThinksealError, OSError) as err:  # a backend failure must not fail the caller's request
            log.warning("ledger lookup failed (%s): the history goes out as it is", type(err).__name__)
            return plan.unchanged()
        return plan.decide(found, self._options.checker)

    def close(self) -> None:
        self._backend.close()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"thinkseal.Ledger({self._backend!r})"


class AsyncLedger:
    """``Ledger`` for asyncio: the same constructors; ``record``, ``attach``
    and ``close`` are awaitable."""

    def __init__(
        self,
        *,
        ttl: float | None = DEFAULT_TTL,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        secret: bytes | str | None = None,
    ) -> None:
        from ._memory import AsyncMemoryBackend  # noqa: PLC0415

        self._options = _Options(ttl, max_entries, secret)
        self._backend: AsyncBackend = AsyncMemoryBackend(self._options.max_entries)

    @classmethod
    def _on(cls, make: Callable[[int], AsyncBackend], options: dict[str, Any]) -> AsyncLedger:
        ledger = cls.__new__(cls)
        ledger._options = _Options(**options)
        ledger._backend = make(ledger._options.max_entries)
        return ledger

    @classmethod
    def sqlite(
        cls,
        path: str = "thinkseal-ledger.db",
        *,
        ttl: float | None = DEFAULT_TTL,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        secret: bytes | str | None = None,
    ) -> AsyncLedger:
        from ._sqlite import AsyncSQLiteBackend  # noqa: PLC0415

        options = {"ttl": ttl, "max_entries": max_entries, "secret": secret}
        return cls._on(lambda limit: AsyncSQLiteBackend(path, limit), options)

    @classmethod
    def postgres(
        cls,
        conninfo: str,
        *,
        schema: str | None = None,
        ttl: float | None = DEFAULT_TTL,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        secret: bytes | str | None = None,
    ) -> AsyncLedger:
        from ._postgres import AsyncPostgresBackend  # noqa: PLC0415

        options = {"ttl": ttl, "max_entries": max_entries, "secret": secret}
        return cls._on(lambda limit: AsyncPostgresBackend(conninfo, schema, limit), options)

    @classmethod
    def redis(
        cls,
        url: str,
        *,
        prefix: str = "thinkseal:ledger:",
        ttl: float | None = DEFAULT_TTL,
        max_entries: int = DEFAULT_MAX_ENTRIES,
        secret: bytes | str | None = None,
    ) -> AsyncLedger:
        from ._redis import AsyncRedisBackend  # noqa: PLC0415

        options = {"ttl": ttl, "max_entries": max_entries, "secret": secret}
        return cls._on(lambda limit: AsyncRedisBackend(url, prefix), options)

    async def record(self, reply: Reply | AssistantMessage) -> int:
        recording = _Recording(reply, self._options.ttl, self._options.checker)
        if recording.entries:
            await self._backend.put(recording.entries, time.time())
        return len(recording.entries)

    async def attach(self, conversation: Conversation, *, account: str | None = None) -> Attached:
        plan = _Plan(conversation, account)
        if not plan.keys:
            return plan.decide({}, self._options.checker)
        try:
            found = await self._backend.get(plan.keys)
        except (ThinksealError, OSError) as err:
            log.warning("ledger lookup failed (%s): the history goes out as it is", type(err).__name__)
            return plan.unchanged()
        return plan.decide(found, self._options.checker)

    async def close(self) -> None:
        await self._backend.close()

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self, kind: type[BaseException] | None, value: BaseException | None, tb: TracebackType | None
    ) -> None:
        await self.close()

    def __repr__(self) -> str:
        return f"thinkseal.AsyncLedger({self._backend!r})"


__all__ = [
    "DEFAULT_TTL",
    "AsyncLedger",
    "Attached",
    "AttachedTurn",
    "Datum",
    "Ledger",
    "Recognition",
    "open_async_ledger",
    "open_ledger",
]


def _target(url: str) -> tuple[str, str]:
    """The backend and its argument a ledger URL names."""
    if not isinstance(url, str) or not url:
        raise ValidationError("ledger: expected memory, sqlite:///PATH, postgresql://... or redis://...", path="ledger")
    if url == "memory":
        return "memory", ""
    if url.startswith("sqlite://"):
        return "sqlite", url.removeprefix("sqlite://")
    if url.startswith(("postgres://", "postgresql://")):
        return "postgres", url
    if url.startswith(("redis://", "rediss://")):
        return "redis", url
    raise ValidationError(
        f"ledger: {url.split(':', 1)[0]!r} is not a ledger backend; expected memory, sqlite:///PATH, "
        "postgresql://... or redis://...",
        path="ledger",
    )


def open_ledger(url: str, **options: Any) -> Ledger:
    """The ``Ledger`` a URL names: ``memory``, ``sqlite:///PATH``,
    ``postgresql://...`` or ``redis://...`` (``options``: ttl, max_entries, secret)."""
    kind, where = _target(url)
    if kind == "memory":
        return Ledger(**options)
    opener: Callable[..., Ledger] = getattr(Ledger, kind)
    return opener(where, **options)


def open_async_ledger(url: str, **options: Any) -> AsyncLedger:
    """``open_ledger``, as an ``AsyncLedger``."""
    kind, where = _target(url)
    if kind == "memory":
        return AsyncLedger(**options)
    opener: Callable[..., AsyncLedger] = getattr(AsyncLedger, kind)
    return opener(where, **options)
