"""The replay decision: which sealed turns go out sealed to a target, and why.

A turn's sealed thinking is replayed only if its binding names the target
origin, the turn is unchanged, and the prefix before it (every message *as
sent* to this target, plus the request context) still has the fingerprint the
binding recorded. Because each turn's as-sent form feeds the chain of every
later turn, unsealing one turn unseals all later ones: kept turns are always an
unbroken leading run.

A decision needs the chain value before its turn, which needs the decisions
before it; ``walk`` hashes whole ranges in one batch by guessing the prefix
checks and correcting at the first wrong guess. Its results for the settled
part of a conversation are kept in a ``ReplayStore`` that conversations derived
by appending share, so a request after k new messages walks only those k.
"""

from __future__ import annotations

import threading
from array import array
from bisect import bisect_left, bisect_right
from collections.abc import Iterator, Sequence
from enum import StrEnum
from typing import TYPE_CHECKING, Any, Final, Literal, overload

from . import _core
from ._binding import FINGERPRINT_VERSION, Binding, Origin
from ._frozen import Frozen
from ._messages import AssistantMessage, Message, ToolMessage, UserMessage

if TYPE_CHECKING:
    from ._messages import ToolCall

CHAIN_START: Final[bytes] = _core.CHAIN_START

class Reason(StrEnum):
    """Why an assistant turn goes out sealed (``KEPT``) or unsealed. A ``str``,
    so ``entry.reason == "kept"`` holds; ``ReasonName`` is its ``Literal`` type."""

    KEPT = "kept"
    NO_SEALED_THINKING = "no-sealed-thinking"
    UNBOUND = "unbound"
    ORIGIN_MISMATCH = "origin-mismatch"
    TURN_CHANGED = "turn-changed"
    PREFIX_CHANGED = "prefix-changed"
    VERSION_MISMATCH = "version-mismatch"
    UNPAIRED_TOOL_CALL = "unpaired-tool-call"


ReasonName = Literal[
    "kept",
    "no-sealed-thinking",
    "unbound",
    "origin-mismatch",
    "turn-changed",
    "prefix-changed",
    "version-mismatch",
    "unpaired-tool-call",
]

# A store keeps one byte per message: 0 for a message that is not an assistant
# turn, else 1 + the reason's position in ``Reason``.
REASONS: Final[tuple[Reason, ...]] = tuple(Reason)
KEPT, NO_SEALED, UNBOUND, ORIGIN, TURN, PREFIX, VERSION, UNPAIRED = range(1, 9)


def reason_of(code: int) -> Reason:
    """The reason stored as ``code`` (never 0)."""
    return REASONS[code - 1]


def stray_tool_text(message: ToolMessage) -> str:
    """The user text a tool result goes out as when it answers no call of the
    turn before it (providers reject orphan tool results)."""
    status = " (error)" if message.is_error else ""
    return f"[tool result for call {message.tool_call_id}{status}]\n{message.content}"


def stray_tool_message(message: ToolMessage) -> UserMessage:
    return UserMessage(stray_tool_text(message))


def answered_ids(items: Sequence[Message], turn: int, end: int) -> set[str]:
    """Ids of the calls of ``items[turn]`` answered in the run of tool messages
    right after it (system messages in the run are skipped)."""
    wanted = {c.id for c in items[turn].tool_calls}  # type: ignore[attr-defined]
    answered: set[str] = set()
    i = turn + 1
    while i < end and wanted:
        role = items[i].role
        if role == "tool":
            call_id = items[i].tool_call_id  # type: ignore[attr-defined]
            if call_id in wanted:
                wanted.discard(call_id)
                answered.add(call_id)
        elif role != "system":
            break
        i += 1
    return answered


def paired_calls(message: AssistantMessage, answered: set[str]) -> tuple[ToolCall, ...]:
    seen: set[str] = set()
    calls = []
    for call in message.tool_calls:
        if call.id in answered and call.id not in seen:
            seen.add(call.id)
            calls.append(call)
    return tuple(calls)


class Pairing:
    """Follows tool pairing through a conversation in one pass: which calls of
    the last assistant turn are answered, and whether a tool message is."""

    __slots__ = ("_items", "_open", "_total")

    def __init__(self, items: Sequence[Message], total: int) -> None:
        self._items = items
        self._total = total
        self._open: set[str] = set()

    def assistant(self, index: int, message: AssistantMessage) -> set[str]:
        """The answered call ids of the turn at ``index``."""
        answered = answered_ids(self._items, index, self._total) if message.tool_calls else set()
        self._open = set(answered)
        return answered

    def tool(self, message: ToolMessage) -> bool:
        """Whether ``message`` answers a still-open call of the turn before it."""
        if message.tool_call_id in self._open:
            self._open.discard(message.tool_call_id)
            return True
        return False

    def other(self, message: Message) -> None:
        if message.role == "user":
            self._open = set()


class ReplayEntry(Frozen):
    """The decision for one assistant turn: ``index`` in ``messages`` and ``reason``."""

    __slots__ = ("index", "reason")
    __match_args__ = ("index", "reason", "kept")
    index: int
    reason: str

    def __init__(self, index: int, reason: str) -> None:
        self._init(index=index, reason=reason)

    @property
    def kept(self) -> bool:
        return self.reason == "kept"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, ReplayEntry):
            return NotImplemented
        return (self.index, self.reason) == (other.index, other.reason)

    def __hash__(self) -> int:
        return hash((self.index, self.reason))

    def __repr__(self) -> str:
        return f"ReplayEntry(index={self.index}, reason={self.reason!r})"


class WireCache:
    """Wire messages an adapter built for the settled part of a history, shared
    like the store it belongs to. ``marks`` records, for each message index the
    cache was extended to, how many wire messages cover the messages before it,
    so a conversation whose history ends earlier can still use a prefix."""

    __slots__ = ("encoded", "lock", "marks", "values")

    def __init__(self) -> None:
        self.values: list[Any] = []
        self.encoded: list[bytes] = []
        self.marks: list[tuple[int, int]] = [(0, 0)]
        self.lock = threading.Lock()

    def mark_at(self, boundary: int) -> tuple[int, int]:
        """The last ``(message index, wire count)`` mark at or before ``boundary``."""
        k = bisect_right(self.marks, (boundary, float("inf")))
        return self.marks[k - 1]

    def extend(self, start: int, end: int, values: Sequence[Any], encoded: Sequence[bytes]) -> None:
        """Add the wire messages of messages ``start..end``, if the cache still ends at ``start``."""
        with self.lock:
            if self.marks[-1][0] != start or end <= start:
                return
            self.values.extend(values)
            self.encoded.extend(encoded)
            self.marks.append((end, len(self.values)))


class ReplayStore:
    """Walk results for one (target origin, request context): the chain value
    after each message (32 bytes each), a reason code per message, and the
    indices of assistant turns. Append-only; shared by derived conversations,
    each of which knows how long a prefix of it is its own (see ``extend``)."""

    __slots__ = ("_lock", "_wire", "chain", "codes", "context", "log", "origin", "turns")

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
        self._lock = threading.Lock()
        self._wire: dict[str, WireCache] = {}

    def wire_cache(self, key: str) -> WireCache:
        with self._lock:
            cache = self._wire.get(key)
            if cache is None:
                cache = self._wire[key] = WireCache()
            return cache

    def __len__(self) -> int:
        return len(self.codes)

    def chain_before(self, index: int) -> bytes:
        return CHAIN_START if index == 0 else bytes(self.chain[32 * (index - 1) : 32 * index])

    def fork(self, length: int, log: object) -> ReplayStore:
        """A private copy of the first ``length`` entries (a branch of history)."""
        copy = ReplayStore(self.origin, self.context)
        copy.chain[:] = self.chain[: 32 * length]
        copy.codes[:] = self.codes[:length]
        copy.turns = self.turns[: bisect_left(self.turns, length)]
        copy.log = log
        return copy

    def extend(
        self, length: int, log: object, chain: bytes | bytearray, codes: bytes | bytearray, turns: Sequence[int]
    ) -> ReplayStore:
        """This store with entries appended after ``length`` for messages of
        ``log``; a fork when other entries already follow ``length`` (they belong
        to another branch), so no conversation's entries are ever overwritten."""
        with self._lock:
            if len(self.codes) == length:
                self.chain += chain
                self.codes += codes
                self.turns.extend(turns)
                self.log = log
                return self
        fork = self.fork(length, log)
        fork.extend(length, log, chain, codes, turns)
        return fork


class _Walk:
    """The result of walking messages ``start..end`` after a given chain value."""

    __slots__ = ("chain", "codes", "sent", "turns")

    def __init__(self) -> None:
        self.chain = bytearray()
        self.codes = bytearray()
        self.turns: list[int] = []
        self.sent: list[Message] = []


def prefix_digest(origin: Origin, context: bytes, chain_before: bytes) -> bytes:
    return _core.prefix_digest(
        FINGERPRINT_VERSION, origin.provider, origin.model, origin.account, context, chain_before
    )


def decide_before_chain(message: AssistantMessage, target: Origin) -> int | None:
    """The reason code of ``message`` when it does not depend on the chain, or
    None when only its prefix check is left."""
    if not message.has_sealed_thinking:
        return NO_SEALED
    binding = message.thinking_binding
    if binding is None:
        return UNBOUND
    if binding.version != FINGERPRINT_VERSION:
        return VERSION
    if binding.origin != target:
        return ORIGIN
    if binding.turn != message.digest:
        return TURN
    return None


def decide(message: AssistantMessage, target: Origin, context: bytes, chain_before: bytes, unpaired: bool) -> int:
    """The reason code for replaying ``message`` (whose prefix chain is ``chain_before``) to ``target``."""
    code = decide_before_chain(message, target)
    if code is not None:
        return code
    assert message.thinking_binding is not None
    if message.thinking_binding.prefix != prefix_digest(target, context, chain_before):
        return PREFIX
    return UNPAIRED if unpaired else KEPT


def sent_form(message: AssistantMessage, code: int, answered: set[str]) -> AssistantMessage:
    """The turn as it goes out: itself when kept, else unsealed, and in either
    case without the calls that no tool result answers."""
    sent = message if code == KEPT else message.unsealed()
    calls = paired_calls(message, answered)
    return sent if calls == message.tool_calls else sent.with_tool_calls(calls)


def ensure_digests(messages: Sequence[Message]) -> None:
    """Compute the missing digests of ``messages`` in one native batch (hashed
    without the GIL, on two threads when the batch is large)."""
    missing = [m for m in messages if m._digest is None]
    if len(missing) > 1:
        for message, digest in zip(missing, _core.message_digests(missing, 2), strict=True):
            object.__setattr__(message, "_digest", digest)


def walk(
    items: Sequence[Message],
    start: int,
    end: int,
    total: int,
    chain: bytes,
    target: Origin,
    context: bytes,
    keep_sent: bool = False,
) -> _Walk:
    """Decide and chain messages ``start..end`` of ``items[:total]``, after ``chain``.

    ``total`` bounds the look-ahead for tool pairing. A turn's decision can
    need the chain value before it, which needs the decisions before it; rather
    than hash turn by turn, the walk guesses that each prefix check agrees with
    the one before it ("intact" at first), hashes the whole range in one batch,
    then checks the guesses in order. At the first wrong guess it keeps what
    came before and walks on from that turn with the other guess. Histories
    change rarely, so this is one or two batches; past a few wrong guesses it
    stops guessing ahead and checks turn by turn.
    """
    result = _Walk()
    intact, batches = True, 0
    while start < end:
        # Every batch after the first follows a wrong guess; past eight of them
        # the history keeps changing its mind, so check one turn per batch.
        start, chain, intact = _walk_batch(
            items, start, end, total, chain, target, context, keep_sent, intact, batches > 8, result
        )
        batches += 1
    return result


def _walk_batch(
    items: Sequence[Message],
    start: int,
    end: int,
    total: int,
    chain: bytes,
    target: Origin,
    context: bytes,
    keep_sent: bool,
    intact: bool,
    one_check: bool,
    result: _Walk,
) -> tuple[int, bytes, bool]:
    """One guessed batch of ``walk``; appends what it got right to ``result`` and
    returns where to go on from: (index, chain value before it, next guess)."""
    pairing = Pairing(items, total)
    if start > 0:
        _resume_pairing(pairing, items, start)
    sent_list: list[Message] = []
    codes = bytearray()
    turns: list[int] = []
    checks: list[tuple[int, AssistantMessage, bool]] = []  # (offset, turn, unpaired)
    for i in range(start, end):
        message = items[i]
        sent: Message = message
        if isinstance(message, AssistantMessage):
            if one_check and checks:
                break
            answered = pairing.assistant(i, message)
            # Unanswered calls, and repeats of a call id, are not sent.
            unpaired = len(paired_calls(message, answered)) < len(message.tool_calls)
            code = decide_before_chain(message, target)
            if code is None:
                checks.append((i - start, message, unpaired))
                code = (UNPAIRED if unpaired else KEPT) if intact else PREFIX
            sent = sent_form(message, code, answered)
            codes.append(code)
            turns.append(i)
        else:
            codes.append(0)
            if isinstance(message, ToolMessage):
                if not pairing.tool(message):
                    sent = stray_tool_message(message)
            else:
                pairing.other(message)
        sent_list.append(sent)
    ensure_digests(sent_list)
    packed = _core.chain(chain, b"".join([m.digest for m in sent_list]))
    done = len(sent_list)
    next_start, next_intact = start + done, intact
    for offset, message, unpaired in checks:
        before = chain if offset == 0 else packed[32 * (offset - 1) : 32 * offset]
        assert message.thinking_binding is not None
        holds = message.thinking_binding.prefix == prefix_digest(target, context, before)
        if holds == intact:
            continue
        if unpaired:  # it goes out unsealed either way; only the reason differs
            codes[offset] = UNPAIRED if holds else PREFIX
            continue
        done, next_start, next_intact = offset, start + offset, holds
        break
    result.chain += packed[: 32 * done]
    result.codes += codes[:done]
    result.turns.extend(t for t in turns if t < start + done)
    if keep_sent:
        result.sent.extend(sent_list[:done])
    return next_start, (chain if done == 0 else packed[32 * (done - 1) : 32 * done]), next_intact


def _resume_pairing(pairing: Pairing, items: Sequence[Message], start: int) -> None:
    """Bring ``pairing`` to its state just before ``items[start]``: replay the
    run of tool and system messages back to the turn before it."""
    j = start - 1
    while j >= 0 and items[j].role in ("tool", "system"):
        j -= 1
    if j >= 0 and isinstance(items[j], AssistantMessage):
        pairing.assistant(j, items[j])  # type: ignore[arg-type]
        for k in range(j + 1, start):
            if isinstance(items[k], ToolMessage):
                pairing.tool(items[k])  # type: ignore[arg-type]


def settled_end(items: Sequence[Message], total: int) -> int:
    """Messages before this index have final decisions: appending can change
    only the pairing of the last assistant turn still followed by nothing but
    tool and system messages."""
    i = total - 1
    while i >= 0 and items[i].role in ("tool", "system"):
        i -= 1
    return i if i >= 0 and items[i].role == "assistant" else total


class ReplayReport(Sequence[ReplayEntry]):
    """One ``ReplayEntry`` per assistant turn, in order. Built lazily from the
    shared store, so making one costs nothing per earlier turn."""

    __slots__ = ("_store", "_store_len", "_store_turns", "_tail")

    def __init__(self, store: ReplayStore, store_len: int, tail: list[tuple[int, int]]) -> None:
        self._store = store
        self._store_len = store_len
        self._store_turns = bisect_left(store.turns, store_len)
        self._tail = tail

    def __len__(self) -> int:
        return self._store_turns + len(self._tail)

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
        if i < self._store_turns:
            index = self._store.turns[i]
            return ReplayEntry(index, reason_of(self._store.codes[index]))
        index, code = self._tail[i - self._store_turns]
        return ReplayEntry(index, reason_of(code))

    def __iter__(self) -> Iterator[ReplayEntry]:
        for i in range(len(self)):
            yield self[i]

    @property
    def kept_count(self) -> int:
        """How many turns go out sealed (always the first ``kept_count`` turns with sealed thinking)."""
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
    """

    __slots__ = ("_items", "_tail_sent", "_tail_start", "_total", "chain_end", "context", "origin", "report")

    def __init__(
        self,
        items: Sequence[Message],
        total: int,
        origin: Origin,
        context: bytes,
        report: ReplayReport,
        tail_start: int,
        tail_sent: list[Message],
        chain_end: bytes,
    ) -> None:
        self._items = items
        self._total = total
        self.origin = origin
        self.context = context
        self.report = report
        self._tail_start = tail_start
        self._tail_sent = tail_sent
        self.chain_end = chain_end

    def code(self, index: int) -> int:
        """The reason code of message ``index`` (0 for messages that are not assistant turns)."""
        if index >= self._tail_start:
            message = self._items[index]
            if message.role != "assistant":
                return 0
            # The tail is short; find its entry.
            for i, code in self.report._tail:
                if i == index:
                    return code
            return 0
        return self.report._store.codes[index]

    def kept(self, index: int) -> bool:
        return self.code(index) == KEPT

    def sent(self, index: int) -> Message:
        """Message ``index`` as it goes out to this target."""
        if not 0 <= index < self._total:
            raise IndexError("message index out of range")
        if index >= self._tail_start:
            return self._tail_sent[index - self._tail_start]
        message = self._items[index]
        if isinstance(message, AssistantMessage):
            answered = answered_ids(self._items, index, self._total) if message.tool_calls else set()
            return sent_form(message, self.code(index), answered)
        if isinstance(message, ToolMessage):
            pairing = Pairing(self._items, self._total)
            _resume_pairing(pairing, self._items, index)
            return message if pairing.tool(message) else stray_tool_message(message)
        return message

    def sent_messages(self, start: int = 0, end: int | None = None) -> list[Message]:
        """Messages ``start..end`` (default: all) as they go out to this target, in one pass."""
        items, total = self._items, self._total
        end = total if end is None else min(end, total)
        out: list[Message] = []
        pairing = Pairing(items, total)
        if start > 0:
            _resume_pairing(pairing, items, start)
        codes = self.report._store.codes
        for i in range(start, min(end, self._tail_start)):
            message = items[i]
            if isinstance(message, AssistantMessage):
                out.append(sent_form(message, codes[i], pairing.assistant(i, message)))
            elif isinstance(message, ToolMessage):
                out.append(message if pairing.tool(message) else stray_tool_message(message))
            else:
                pairing.other(message)
                out.append(message)
        if end > self._tail_start:
            out.extend(self._tail_sent[max(start, self._tail_start) - self._tail_start : end - self._tail_start])
        return out

    @property
    def total(self) -> int:
        """The number of messages in the conversation."""
        return self._total

    @property
    def wire_boundary(self) -> int:
        """An assistant-turn index (or 0) before which the request's wire form is
        final: no later message can change how messages before it go out, and
        no wire message spans it. Adapters cache their wire form up to here."""
        if self._tail_start < self._total:
            return self._tail_start  # the open assistant turn
        turns = self.report._store.turns
        k = bisect_left(turns, self._tail_start)
        return turns[k - 1] if k else 0

    def turn_before(self, index: int) -> int | None:
        """The index of the last assistant turn before ``index`` (``index`` at most
        ``wire_boundary``), or None."""
        turns = self.report._store.turns
        k = bisect_left(turns, min(index, self._tail_start))
        return turns[k - 1] if k else None

    def wire_cache(self, key: str) -> WireCache:
        """The shared cache of wire messages built under ``key`` (see ``providers._wire``)."""
        return self.report._store.wire_cache(key)

    def bind(self, reply: AssistantMessage) -> AssistantMessage:
        """``reply`` bound to this request as it was sent, if it has sealed thinking;
        otherwise returned as it is (a reply without sealed thinking is not sealed)."""
        if not reply.has_sealed_thinking:
            return reply._bound(None)
        prefix = prefix_digest(self.origin, self.context, self.chain_end)
        return reply._bound(Binding(self.origin, FINGERPRINT_VERSION, prefix, reply.digest))
