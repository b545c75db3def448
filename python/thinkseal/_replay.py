"""The replay decision for a conversation and a target: the public ``Replay``
(what goes out, and the binding of the reply), ``ReplayReport`` and
``ReplayEntry``, and the bookkeeping that makes a request after k new messages
cost O(k): the decisions of the settled part of a conversation are kept in a
``ReplayStore`` that conversations derived by appending share, so only new
messages are walked (``decide_replay``).

The rules themselves (reasons, tool pairing, the as-sent form, the walk) are
in ``_walk``, which docs/fingerprint.md §6 specifies.
"""

from __future__ import annotations

from _thread import allocate_lock  # threading.Lock itself, without importing threading
from array import array
from bisect import bisect_left
from collections.abc import Callable, Iterator, Sequence
from typing import Any, Final, TypeVar, overload

from . import _core
from ._binding import FINGERPRINT_VERSION, Binding, Origin
from ._errors import ValidationError
from ._frozen import Frozen
from ._messages import AssistantMessage, Message, ToolMessage
from ._walk import (
    CHAIN_START,
    KEPT,
    Pairing,
    Reason,
    ReasonName,
    Walk,
    claimed_call,
    decide_with_chain,
    decide_without_chain,
    ensure_digests,
    prefix_digest,
    reason_of,
    sent_form,
    sent_messages,
    stray_tool_message,
    walk,
)

T = TypeVar("T")


class ReplayEntry(Frozen):
    """The decision for one assistant turn: ``index`` in ``messages`` and ``reason``."""

    __slots__ = ("index", "reason")
    __match_args__ = ("index", "reason", "kept")
    index: int
    reason: Reason

    def __init__(self, index: int, reason: ReasonName | Reason) -> None:
        try:
            checked = Reason(reason)
        except ValueError:
            raise ValidationError(f"ReplayEntry.reason: unknown reason {reason!r}", path="ReplayEntry.reason") from None
        self._init(index=index, reason=checked)

    @property
    def kept(self) -> bool:
        return self.reason is Reason.KEPT

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReplayEntry):
            return NotImplemented
        return (self.index, self.reason) == (other.index, other.reason)

    def __hash__(self) -> int:
        return hash((self.index, self.reason))

    def __repr__(self) -> str:
        return f"ReplayEntry(index={self.index}, reason={str(self.reason)!r})"


class ReplayStore:
    """Walk results for one (target origin, request context): the chain value
    after each message (32 bytes each), a reason code per message, and the
    indices of assistant turns. Append-only; shared by derived conversations,
    each of which knows how long a prefix of it is its own (see ``extend``).

    It also keeps one opaque slot per key for what other layers derive from the
    same history (the adapters' wire caches, ``providers/_wire.py``); a slot
    belongs to one message log and is made anew for another. A branch of
    history (``fork``) keeps what of a slot still holds for it: a slot value
    with a ``fork(length)`` method gives what it derived from the branch's
    shared first ``length`` messages alone; other slot values are made anew.
    """

    __slots__ = ("_lock", "_slots", "chain", "codes", "context", "log", "origin", "turns")

    def __init__(self, origin: Origin, context: bytes) -> None:
        # The message log (a conversation's append-only storage) whose first
        # len(self) messages these entries describe; any conversation reading
        # that log may use them up to its own settled length.
        self.log: object = None
        self.origin = origin
        self.context = context
        self.chain = bytearray()
        self.codes = bytearray()
        self.turns = array("q")
        self._lock = allocate_lock()
        self._slots: dict[str, tuple[object, Any]] = {}

    def slot(self, key: str, log: object, make: Callable[[], T], fits: Callable[[T], bool] | None = None) -> T:
        """The value kept under ``key`` for message log ``log``, made by ``make()``
        when there is none for that log (or the one there does not ``fits``)."""
        with self._lock:
            entry = self._slots.get(key)
            if entry is None or entry[0] is not log or (fits is not None and not fits(entry[1])):
                entry = self._slots[key] = (log, make())
            return entry[1]

    def slots_of(self, log: object) -> list[tuple[str, Any]]:
        """Every ``(key, value)`` kept for message log ``log``."""
        with self._lock:
            return [(key, value) for key, (owner, value) in self._slots.items() if owner is log]

    def __len__(self) -> int:
        return len(self.codes)

    def chain_before(self, index: int) -> bytes:
        return CHAIN_START if index == 0 else bytes(self.chain[32 * (index - 1) : 32 * index])

    def fork(self, length: int, log: object) -> ReplayStore:
        """A private copy of the first ``length`` entries (a branch of history),
        with the forkable slots of this store's log carried over."""
        copy = ReplayStore(self.origin, self.context)
        copy.chain = self.chain[: 32 * length]  # a bytearray slice is a new bytearray: one copy
        copy.codes = self.codes[:length]
        copy.turns = self.turns[: bisect_left(self.turns, length)]
        copy.log = log
        with self._lock:
            slots = list(self._slots.items())
        shared = _shared_length(self.log, log, length)
        for key, (owner, value) in slots:
            fork = getattr(value, "fork", None)
            if owner is self.log and fork is not None:
                copy._slots[key] = (log, fork(shared))
        return copy

    def extend(self, length: int, log: object, walked: Walk) -> ReplayStore:
        """This store with ``walked`` (messages ``length..`` of ``log``) appended;
        a fork when other entries already follow ``length`` (they belong to
        another branch), so no conversation's entries are ever overwritten."""
        with self._lock:
            if len(self.codes) == length:
                self.chain += walked.chain
                self.codes += walked.codes
                self.turns.extend(walked.turns)
                self.log = log
                return self
        return self.fork(length, log).extend(length, log, walked)


def _shared_length(old: object, new: object, start: int) -> int:
    """How many leading messages two message logs have in common, knowing the
    first ``start`` are (the store's entries end at the settled point; the
    logs may share an open tool run beyond it): the same objects, compared
    from ``start`` on."""
    a: Sequence[object] = getattr(old, "items", ())
    b: Sequence[object] = getattr(new, "items", ())
    shared = start
    end = min(len(a), len(b))
    while shared < end and a[shared] is b[shared]:
        shared += 1
    return shared


class OpenRun:
    """The run of tool and system messages after the open assistant turn at
    ``turn`` (the last turn of a tool loop still being answered), read as far as
    any conversation on the log has read it: per message, the call of the turn
    it answers (if any), the form it goes out in, and, once asked for, its
    digest. Append-only like the log (what a run message answers, and how it
    goes out, depends only on the messages before it), so a decision or a
    request after each new tool result reads only that result: parallel calls
    answered one by one stay linear."""

    __slots__ = ("_answered", "_digests", "_hits", "_lock", "_seen", "_sent", "_wanted", "turn")

    def __init__(self, turn: int, message: AssistantMessage) -> None:
        self.turn = turn
        self._wanted = {c.id for c in message.tool_calls}
        self._seen: set[str] = set()
        self._answered = array("q", [0])  # answering messages among the first k of the run
        self._hits: list[str | None] = []  # per run message: the call id it answers, or None
        self._sent: list[Message] = []  # per run message: as it goes out (itself, or a stray result as user text)
        self._digests = bytearray()  # the digests of the first len // 32 of ``_sent``
        self._lock = allocate_lock()

    def _read(self, items: Sequence[Message], total: int) -> int:
        """Read the run up to ``total`` (under the lock); the length of this
        conversation's part of the run."""
        i = self.turn + 1 + len(self._sent)
        while i < total:
            message = items[i]
            hit = claimed_call(message, self._wanted, self._seen)
            self._hits.append(hit)
            stray = isinstance(message, ToolMessage) and hit is None
            self._sent.append(stray_tool_message(message) if stray else message)  # type: ignore[arg-type]
            self._answered.append(self._answered[-1] + (hit is not None))
            i += 1
        return total - self.turn - 1

    def answered(self, items: Sequence[Message], total: int) -> int:
        """How many calls of the turn the messages before ``total`` answer."""
        with self._lock:
            return self._answered[self._read(items, total)]

    def answered_ids(self, items: Sequence[Message], total: int) -> set[str]:
        """The ids of the calls the messages before ``total`` answer."""
        with self._lock:
            length = self._read(items, total)
            if length == len(self._hits):
                return set(self._seen)
            return {h for h in self._hits[:length] if h is not None}

    def sent(self, items: Sequence[Message], total: int) -> list[Message]:
        """The run's messages before ``total`` as they go out."""
        with self._lock:
            return self._sent[: self._read(items, total)]

    def digests(self, items: Sequence[Message], total: int) -> bytes:
        """The digests of ``sent(items, total)``, packed (each hashed once, in
        one native batch per call that needs new ones)."""
        with self._lock:
            length = self._read(items, total)
            have = len(self._digests) // 32
            if have < length:
                new = self._sent[have:]
                ensure_digests(new)
                self._digests += b"".join([m.digest for m in new])
            return bytes(self._digests[: 32 * length])


class OpenTail:
    """What goes out of an open tool loop: the open turn in its as-sent form,
    then the run after it (``OpenRun``), and the chain value after them."""

    __slots__ = ("_chain", "_items", "_run", "_start", "_total", "turn")

    def __init__(
        self, turn: AssistantMessage, run: OpenRun, items: Sequence[Message], total: int, start: bytes
    ) -> None:
        self.turn = turn
        self._run = run
        self._items = items
        self._total = total
        self._start = start
        self._chain: bytes | None = None

    @property
    def sent(self) -> list[Message]:
        return [self.turn, *self._run.sent(self._items, self._total)]

    def at(self, offset: int) -> Message:
        """The ``offset``-th message of the tail as it goes out (0: the turn)."""
        return self.turn if offset == 0 else self._run.sent(self._items, self._total)[offset - 1]

    def chain_end(self) -> bytes:
        chain = self._chain
        if chain is None:
            digests = self.turn.digest + self._run.digests(self._items, self._total)
            chain = self._chain = _core.chain(self._start, digests)[-32:]
        return chain


class MessageLog:
    """An append-only list of messages shared by conversations derived by
    appending; each conversation reads only its own prefix of it.

    ``chain_after(n)``: the chain over the first ``n`` messages' own digests
    (from ``CHAIN_START``, as a store keeps it beside each row), remembered
    for the longest prefix asked (``chained``, ``chain``), so a conversation
    checked against its store again after k new messages hashes only those."""

    __slots__ = ("chain", "chained", "items", "lock", "source")

    def __init__(self, items: list[Message]) -> None:
        self.items = items
        self.lock = allocate_lock()
        self.chained = 0
        self.chain = CHAIN_START
        # The stored session a lazily loaded log reads its unread messages from,
        # and writes what requests derived of it back to (``store/_lazy.py``).
        self.source: Any = None

    def chain_after(self, n: int) -> bytes:
        chained, chain = self.chained, self.chain  # one pair: another thread may move it on meanwhile
        if n < chained:
            chained, chain = 0, CHAIN_START
        if n == chained:
            return chain
        new = self.items[chained:n]
        ensure_digests(new)
        chain = _core.chain(chain, b"".join([m.digest for m in new]))[-32:]
        with self.lock:
            if n > self.chained:
                self.chained, self.chain = n, chain
        return chain

    def know_chain(self, n: int, chain: bytes) -> None:
        """Remember ``chain`` as the chain after the first ``n`` messages, as a
        store checked it row by row when it read them."""
        with self.lock:
            if n > self.chained:
                self.chained, self.chain = n, chain


# A conversation's replay caches: per target origin, a store and how many of
# its entries are this conversation's own; the origins used last at the end.
ReplayCaches = dict[Origin, tuple[ReplayStore, int]]
# How many origins' caches a conversation keeps (and hands on to the
# conversations derived from it): the ones it was decided for last. A server
# that switches among many models keeps its own and the derived conversations'
# bookkeeping bounded; an origin dropped here is decided afresh once.
MAX_CACHED_ORIGINS: Final[int] = 8


def remember(caches: ReplayCaches, origin: Origin, entry: tuple[ReplayStore, int]) -> None:
    """Keep ``entry`` for ``origin`` as the most recent, dropping the least
    recently decided origins past ``MAX_CACHED_ORIGINS``. Each step is one
    atomic dict operation, so threads deciding for other origins at once at
    worst drop an entry that is then rebuilt."""
    caches.pop(origin, None)
    caches[origin] = entry
    while len(caches) > MAX_CACHED_ORIGINS:
        try:
            caches.pop(next(iter(caches)), None)
        except (StopIteration, RuntimeError):  # emptied or resized by another thread meanwhile
            break


def decide_replay(
    log: MessageLog, total: int, settled: int, caches: ReplayCaches, origin: Origin, context: bytes
) -> Replay:
    """The replay decision for messages ``log.items[:total]`` sent to ``origin``
    (``settled`` is ``settled_end(log.items, total)``).

    The settled part (``settled_end``) is decided once and kept in the store
    in ``caches[origin]``, shared with the conversations derived from this one;
    only the messages after what the store already holds are walked. An open
    tool loop's turn is decided from its tool results counted incrementally
    (``OpenRun``); the loop's messages are walked only when what goes out, or
    the chain, is asked for (``Replay.tail``).
    """
    items = log.items
    store, have = caches.get(origin) or (ReplayStore(origin, context), 0)
    if store.context != context:
        store, have = ReplayStore(origin, context), 0
    if store.log is log:
        # Entries a longer conversation on this same log already decided.
        have = max(have, min(len(store), settled))
    have = min(have, settled)
    if have < settled:
        store = store.extend(have, log, walk(items, have, settled, total, store.chain_before(have), origin, context))
        have = settled
    remember(caches, origin, (store, have))
    open_code = 0
    if settled < total:  # an open tool loop: its turn is decided without walking the run
        turn = items[settled]
        assert isinstance(turn, AssistantMessage)
        code = decide_without_chain(turn, origin)
        if code is None:
            run = store.slot("open-run", log, lambda: OpenRun(settled, turn), lambda r: r.turn == settled)
            code = decide_with_chain(turn, origin, context, store.chain_before(settled), run.answered(items, total))
        open_code = code
    return Replay(log, total, origin, context, store, settled, open_code)


class TurnDecision:
    """One assistant turn's decision: its ``index``, the ``turn`` as in the
    conversation, the form it is ``sent`` in, the ``reason``, and whether it
    is ``open``: only tool results and system messages follow it (a tool loop
    being continued)."""

    __slots__ = ("index", "open", "reason", "sent", "turn")

    def __init__(self, index: int, turn: AssistantMessage, sent: AssistantMessage, reason: Reason, open: bool) -> None:  # noqa: A002
        self.index = index
        self.turn = turn
        self.sent = sent
        self.reason = reason
        self.open = open


class ReplayReport(Sequence[ReplayEntry]):
    """One ``ReplayEntry`` per assistant turn, in order. Built lazily from the
    shared store, so making one costs nothing per earlier turn."""

    __slots__ = ("_replay", "_store_turns")

    def __init__(self, replay: Replay) -> None:
        self._replay = replay
        self._store_turns = bisect_left(replay.store.turns, replay.settled)

    def __len__(self) -> int:
        return self._store_turns + len(self._replay.open_turns)

    @overload
    def __getitem__(self, i: int) -> ReplayEntry: ...
    @overload
    def __getitem__(self, i: slice) -> Sequence[ReplayEntry]: ...
    def __getitem__(self, i: int | slice) -> ReplayEntry | Sequence[ReplayEntry]:
        if isinstance(i, slice):
            return [self[j] for j in range(*i.indices(len(self)))]
        n = len(self)
        if i < 0:
            i += n
        if not 0 <= i < n:
            raise IndexError("replay report index out of range")
        replay = self._replay
        index = replay.store.turns[i] if i < self._store_turns else replay.open_turns[i - self._store_turns]
        entry = ReplayEntry.__new__(ReplayEntry)  # a known reason: nothing to check
        entry._init(index=index, reason=reason_of(replay.code(index)))
        return entry

    def __iter__(self) -> Iterator[ReplayEntry]:
        for i in range(len(self)):
            yield self[i]

    @property
    def kept_count(self) -> int:
        """How many turns go out sealed (not necessarily the leading ones: see the module docstring)."""
        return sum(1 for e in self if e.kept)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReplayReport):
            return NotImplemented
        return list(self) == list(other)

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        return f"ReplayReport({list(self)!r})"


class Replay:
    """The replay decision for one conversation and target origin.

    ``report`` says per assistant turn what is kept and why; ``sent(i)`` is
    message ``i`` as it goes out; ``bind(reply)`` binds the provider's reply to
    this request as sent. Provider adapters build their bodies from these.

    Package-internal: ``log`` (the conversation's message storage, compared by
    identity), ``store`` and ``settled`` (the shared decisions of messages
    before ``settled``), ``tail`` (the walk of the rest), ``slot`` (a per-key
    value shared by the conversations on this history, for the wire caches).
    """

    __slots__ = ("_report", "_tail", "context", "log", "open_code", "origin", "settled", "store", "total")

    def __init__(
        self,
        log: MessageLog,
        total: int,
        origin: Origin,
        context: bytes,
        store: ReplayStore,
        settled: int,
        open_code: int,
    ) -> None:
        self.log = log
        self.total = total
        self.origin = origin
        self.context = context
        self.store = store
        self.settled = settled
        self.open_code = open_code  # the reason code of the open turn at ``settled`` (0: none)
        self._tail: OpenTail | None = None
        self._report: ReplayReport | None = None

    @property
    def report(self) -> ReplayReport:
        report = self._report
        if report is None:
            report = self._report = ReplayReport(self)
        return report

    @property
    def tail(self) -> OpenTail:
        """What goes out from ``settled`` on (an open tool loop), made when
        first needed from the run shared by the conversations on this log, so
        a request after one more tool result reads that result only."""
        tail = self._tail
        if tail is None:
            items, settled = self.log.items, self.settled
            turn = items[settled]
            assert isinstance(turn, AssistantMessage)
            run = self.store.slot("open-run", self.log, lambda: OpenRun(settled, turn), lambda r: r.turn == settled)
            sent_turn = sent_form(turn, self.open_code, run.answered_ids(items, self.total))
            tail = self._tail = OpenTail(sent_turn, run, items, self.total, self.store.chain_before(settled))
        return tail

    @property
    def chain_end(self) -> bytes:
        """The chain value after every message as sent (what a reply is bound over)."""
        return self.tail.chain_end() if self.settled < self.total else self.store.chain_before(self.settled)

    @property
    def open_turns(self) -> list[int]:
        """The assistant turns decided after the stored ones: the open turn, if any."""
        return [self.settled] if self.settled < self.total else []

    def last_turn(self) -> TurnDecision | None:
        """The decision for the conversation's last assistant turn (None when
        it has none): what an adapter checks before sending a continuation."""
        items = self.log.items
        index = self.settled if self.settled < self.total else self.total - 1
        while index >= 0 and not isinstance(items[index], AssistantMessage):
            index -= 1
        if index < 0:
            return None
        turn = items[index]
        assert isinstance(turn, AssistantMessage)
        sent = self.sent(index)
        assert isinstance(sent, AssistantMessage)
        reason = self.reason(index)
        assert reason is not None
        return TurnDecision(index, turn, sent, reason, index == self.settled and self.settled < self.total)

    def code(self, index: int) -> int:
        """The reason code of message ``index`` (0 for messages that are not assistant turns)."""
        if index < self.settled:
            return self.store.codes[index]
        return self.open_code if index == self.settled else 0

    def reason(self, index: int) -> Reason | None:
        """The reason of the assistant turn at ``index`` (None for other messages)."""
        code = self.code(index)
        return reason_of(code) if code else None

    def kept(self, index: int) -> bool:
        return self.code(index) == KEPT

    def sent(self, index: int) -> Message:
        """Message ``index`` as it goes out to this target."""
        if not 0 <= index < self.total:
            raise IndexError("message index out of range")
        if index >= self.settled:
            return self.tail.at(index - self.settled)
        items = self.log.items
        return Pairing.resume(items, index, self.total).sent(index, items[index], self.code(index))

    def sent_messages(self, start: int = 0, end: int | None = None) -> list[Message]:
        """Messages ``start..end`` (default: all) as they go out to this target, in one pass."""
        end = self.total if end is None else min(end, self.total)
        items, settled = self.log.items, self.settled
        out = sent_messages(items, start, min(end, settled), self.total, self.store.codes)
        if end > settled:
            out.extend(self.tail.sent[max(start, settled) - settled : end - settled])
        return out

    def turn_before(self, index: int) -> int | None:
        """The index of the last assistant turn before ``index`` (at most
        ``settled``), or None."""
        turns = self.store.turns
        k = bisect_left(turns, min(index, self.settled))
        return turns[k - 1] if k else None

    def slot(self, key: str, make: Callable[[], T]) -> T:
        """A value shared by the conversations on this history under ``key``."""
        return self.store.slot(key, self.log, make)

    def bind(self, reply: AssistantMessage) -> AssistantMessage:
        """``reply`` bound to this request as it was sent, if it has sealed parts
        (thinking or native blocks); otherwise returned as it is."""
        if not reply.has_sealed_parts:
            return reply._bound(None)
        prefix = prefix_digest(self.origin, self.context, self.chain_end)
        return reply._bound(Binding(self.origin, FINGERPRINT_VERSION, prefix, reply.digest))
