"""The rules docs/fingerprint.md §6 specifies, and versions: why a turn is
kept or unsealed (``Reason``, checked in the table's order), tool pairing, the
form each message goes out in, and the walk that decides messages one by one
and chains their as-sent digests. A change here is a change to the walk: a new
fingerprint version (docs/fingerprint.md §9), pinned by tests/vectors/walk-v1.json.

The bookkeeping that keeps these decisions for the settled part of a
conversation, and the public ``Replay`` and ``ReplayReport``, are in
``_replay``.
"""

from __future__ import annotations

from collections.abc import Sequence
from enum import StrEnum
from typing import Final, Literal

from . import _core
from ._binding import FINGERPRINT_VERSION, Binding, Origin
from ._blocks import Opaque, Redacted, Text
from ._messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage

CHAIN_START: Final[bytes] = _core.CHAIN_START

# What the native run (rust/python/src/walk.rs) checks messages, parts and
# bindings against, exactly, in the order it reads them.
_RUN_KIT: Final[tuple[type, ...]] = (
    SystemMessage,
    UserMessage,
    ToolMessage,
    AssistantMessage,
    ToolCall,
    Text,
    Redacted,
    Opaque,
    Binding,
    Origin,
)


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


def stray_tool_message(message: ToolMessage) -> UserMessage:
    """The user message a tool result goes out as when it answers no call of the
    turn before it (providers reject orphan tool results): a header naming the
    call, then the result's content as fingerprinted (docs/fingerprint.md §6)."""
    status = " (error)" if message.is_error else ""
    header = f"[tool result for call {message.tool_call_id}{status}]\n"
    content = message._fp_content
    if isinstance(content, str):
        return UserMessage(header + content)
    return UserMessage((header, *content))


def claimed_call(message: Message, wanted: set[str], answered: set[str]) -> str | None:
    """The call ``message`` answers, in the run of tool and system messages
    after a turn whose call ids are ``wanted``, given the ids ``answered``
    earlier in that run (to which it is added): a tool result answers a call
    of the turn that no earlier result answered. None for anything else. The
    one statement of the pairing rule; ``Pairing`` and the open run's
    incremental reading both ask it."""
    if isinstance(message, ToolMessage):
        call_id = message.tool_call_id
        if call_id in wanted and call_id not in answered:
            answered.add(call_id)
            return call_id
    return None


class Pairing:
    """Tool pairing, followed through a conversation in one pass: which calls
    of the last assistant turn are answered, and whether a tool message is.

    A call is answered by the first tool message with its id in the run of tool
    messages right after its turn (system messages in the run are skipped). A
    second call with an id already used in the turn is never answered, and a
    second result for one call is a stray.
    """

    __slots__ = ("_items", "_open", "_total")

    def __init__(self, items: Sequence[Message], total: int) -> None:
        self._items = items
        self._total = total
        self._open: set[str] = set()

    @classmethod
    def resume(cls, items: Sequence[Message], start: int, total: int) -> Pairing:
        """A pairing in the state it has just before ``items[start]``: the run
        of tool and system messages back to the turn before it, replayed."""
        pairing = cls(items, total)
        j = start - 1
        while j >= 0 and items[j].role in ("tool", "system"):
            j -= 1
        turn = items[j] if j >= 0 else None
        if isinstance(turn, AssistantMessage):
            pairing.assistant(j, turn)
            for k in range(j + 1, start):
                message = items[k]
                if isinstance(message, ToolMessage):
                    pairing.answers(message)
        return pairing

    def assistant(self, index: int, message: AssistantMessage) -> set[str]:
        """The answered call ids of the turn at ``index`` (looking ahead)."""
        answered: set[str] = set()
        wanted = {c.id for c in message.tool_calls}
        i = index + 1
        while i < self._total and len(answered) < len(wanted):
            item = self._items[i]
            if item.role not in ("tool", "system"):
                break
            claimed_call(item, wanted, answered)
            i += 1
        self._open = set(answered)
        return answered

    def answers(self, message: ToolMessage) -> bool:
        """Whether ``message`` answers a still-open call of the turn before it."""
        if message.tool_call_id in self._open:
            self._open.discard(message.tool_call_id)
            return True
        return False

    def run(self, items: Sequence[Message], bounds: tuple[int, int, int], codes: bytes, first: int) -> int:
        """From ``start`` (of ``bounds = (start, end, total)``), the messages
        that go out as themselves given their ``codes`` (``codes[k]`` for
        message ``first + k``), paired natively (rust/python/src/walk.rs); the
        index of the first it leaves to ``sent``."""
        if type(items) is not list:
            return bounds[0]
        return _core.sent_run(items, bounds, self._open, codes, first, _RUN_KIT)

    def sent(self, index: int, message: Message, code: int) -> Message:
        """Message ``index`` as it goes out, given its reason ``code`` (read only
        for assistant turns). Every route to an as-sent form comes through here."""
        if isinstance(message, AssistantMessage):
            return sent_form(message, code, self.assistant(index, message))
        if isinstance(message, ToolMessage):
            return message if self.answers(message) else stray_tool_message(message)
        if message.role == "user":
            self._open = set()
        return message


def sent_messages(
    items: Sequence[Message], start: int, end: int, total: int, codes: bytes | bytearray
) -> list[Message]:
    """Messages ``start..end`` of ``items[:total]`` as they go out, given their
    decided reason ``codes`` (indexed like ``items``): the runs that go out as
    themselves found natively, the others by ``Pairing.sent``."""
    pairing = Pairing.resume(items, start, total)
    decided = bytes(codes[start:end])
    out: list[Message] = []
    i = start
    while i < end:
        stop = pairing.run(items, (i, end, total), decided, start)
        out += items[i:stop]
        if stop == end:
            break
        out.append(pairing.sent(stop, items[stop], codes[stop]))
        i = stop + 1
    return out


def sent_form(message: AssistantMessage, code: int, answered: set[str]) -> AssistantMessage:
    """The turn as it goes out: itself when kept, else unsealed; in both cases
    without the calls no tool result answers. Parts keep their order."""
    sent = message if code == KEPT else message.unsealed()
    return sent._only_calls(answered)


def has_unpaired_calls(message: AssistantMessage, answered: int) -> bool:
    """Whether a call of ``message`` goes unanswered, given how many of its call
    ids are answered (a repeated id counts as unanswered)."""
    return len(message.tool_calls) > answered


class Walk:
    """What ``walk`` found for a range of messages: the chain value after each,
    their reason codes (0 for messages that are not assistant turns), the
    indices of the assistant turns, and the messages as sent."""

    __slots__ = ("_last", "_pending", "chain", "codes", "sent", "turns")

    def __init__(self, start_chain: bytes) -> None:
        self.chain = bytearray()
        self.codes = bytearray()
        self.turns: list[int] = []
        self.sent: list[Message] = []
        self._last = start_chain  # the chain value after the chained messages
        self._pending = 0  # how many of ``sent`` are not chained yet

    def chain_end(self) -> bytes:
        """The chain value after every message so far (chaining what is pending
        in one native call)."""
        if self._pending:
            pending = self.sent[-self._pending :]
            ensure_digests(pending)
            steps = _core.chain(self._last, b"".join([m.digest for m in pending]))
            self.chain += steps
            self._last = steps[-32:]
            self._pending = 0
        return self._last

    def add(self, sent: Message, code: int) -> None:
        self.sent.append(sent)
        self.codes.append(code)
        self._pending += 1

    def run(
        self, items: Sequence[Message], bounds: tuple[int, int, int], pairing: Pairing, target: Origin, context: bytes
    ) -> int:
        """From ``start`` (of ``bounds = (start, end, total)``), the messages
        that go out as themselves, decided, paired and chained natively
        (rust/python/src/walk.rs); the index of the first it leaves to the
        loop in ``walk``, which decides that one."""
        start, end, total = bounds
        if type(items) is not list:
            return start
        stop, chain, codes, turns = _core.walk_run(
            items, start, end, total, pairing._open, self.chain_end(), target, context, _RUN_KIT
        )
        if stop > start:
            self.sent += items[start:stop]
            self.chain += chain
            self.codes += codes
            self.turns += turns
            self._last = chain[-32:]
        return stop


def prefix_digest(origin: Origin, context: bytes, chain_before: bytes) -> bytes:
    return _core.prefix_digest(
        FINGERPRINT_VERSION, origin.provider, origin.model, origin.account, context, chain_before
    )


def decide_without_chain(message: AssistantMessage, target: Origin) -> int | None:
    """The reason code of ``message`` when it does not depend on the prefix, or
    None when the prefix check decides (docs/fingerprint.md §6, in order)."""
    if not message.has_sealed_parts:
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


def decide_with_chain(
    message: AssistantMessage, target: Origin, context: bytes, chain_before: bytes, answered: int
) -> int:
    """The rest of the decision once ``decide_without_chain`` found nothing:
    the prefix check, then tool pairing (``answered`` of its calls answered)."""
    binding = message.thinking_binding
    assert binding is not None
    if binding.prefix != prefix_digest(target, context, chain_before):
        return PREFIX
    return UNPAIRED if has_unpaired_calls(message, answered) else KEPT


def ensure_digests(messages: Sequence[Message]) -> None:
    """Compute the missing digests of ``messages`` in one native batch (hashed
    without the GIL; when the batch is large, on a second thread while the
    rest are encoded)."""
    missing = [m for m in messages if m._digest is None]
    if len(missing) > 1:
        for message, digest in zip(missing, _core.message_digests(missing, 2), strict=True):
            object.__setattr__(message, "_digest", digest)


def walk(
    items: Sequence[Message], start: int, end: int, total: int, chain: bytes, target: Origin, context: bytes
) -> Walk:
    """Decide messages ``start..end`` of ``items[:total]`` for ``target``, turn by
    turn, after the chain value ``chain``. ``total`` bounds the look-ahead of
    tool pairing. Only a prefix check needs the chain value, so the messages
    since the last check are chained just before it, in one native call.
    """
    out = Walk(chain)
    pairing = Pairing.resume(items, start, total)
    # Every message that goes out as itself, or whose own digest a check reads,
    # hashed up front in one batch (on two threads when it is large). The
    # digest is tested first: a loaded history has every one already.
    ensure_digests(
        [
            m
            for m in items[start:end]
            if m._digest is None and (not isinstance(m, AssistantMessage) or m.thinking_binding is not None)
        ]
    )
    i = start
    while i < end:
        # The messages that go out as themselves, natively; then one that does
        # not (or that the native run leaves), here.
        i = out.run(items, (i, end, total), pairing, target, context)
        if i == end:
            break
        message = items[i]
        if isinstance(message, AssistantMessage):
            answered = pairing.assistant(i, message)
            code = decide_without_chain(message, target)
            if code is None:
                code = decide_with_chain(message, target, context, out.chain_end(), len(answered))
            out.turns.append(i)
            out.add(sent_form(message, code, answered), code)
        else:
            out.add(pairing.sent(i, message, 0), 0)
        i += 1
    out.chain_end()
    return out


def settled_end(items: Sequence[Message], total: int) -> int:
    """Messages before this index have final decisions: appending can change
    only the pairing of the last assistant turn still followed by nothing but
    tool and system messages."""
    i = total - 1
    while i >= 0 and items[i].role in ("tool", "system"):
        i -= 1
    return i if i >= 0 and items[i].role == "assistant" else total


def settled_after(items: Sequence[Message], start: int, settled_before: int, total: int) -> int:
    """``settled_end(items, total)``, knowing ``settled_end(items, start)`` is
    ``settled_before``: reads only ``items[start:total]`` (an append)."""
    i = total - 1
    while i >= start and items[i].role in ("tool", "system"):
        i -= 1
    if i >= start:  # the last message that is no tool result or system message is new
        return i if items[i].role == "assistant" else total
    # Only tool results and system messages came: an open turn stays open.
    return settled_before if settled_before < start else total


def rebind_messages(items: Sequence[Message], origin: Origin, context: bytes) -> list[Message]:
    """``items`` with every turn that has sealed thinking bound to its present
    prefix under ``origin`` (``Conversation.rebind``)."""
    out = list(items)
    total = len(out)
    chain, walked_to = CHAIN_START, 0
    for i, message in enumerate(out):
        if isinstance(message, AssistantMessage) and message.has_sealed_parts:
            # The messages since the last sealed turn, chained the way they go
            # out (earlier turns are rebound already, so they go out sealed).
            chain = walk(out, walked_to, i, total, chain, origin, context).chain_end()
            walked_to = i
            prefix = prefix_digest(origin, context, chain)
            out[i] = message._bound(Binding(origin, FINGERPRINT_VERSION, prefix, message.digest))
    return out
