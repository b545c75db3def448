"""Wire-form helpers shared by the provider adapters.

- ``dumps``: the one JSON encoding thinkseal puts on the wire (compact UTF-8),
  written by the native core: the bytes of ``json.dumps(value, ensure_ascii=False,
  separators=(",", ":"), allow_nan=False)``, about 25x faster.
- ``cached`` (``_memo.py``): a message's wire fragment, built once per (provider,
  variant) and kept on the message (messages are immutable, so the cache cannot go stale).
  ``fragment`` keeps its JSON bytes only, not the dict they were encoded from;
  what an adapter decides from a wire message later is kept as a number beside
  the bytes (``counted``), and ``PreparedRequest.body`` decodes the bytes when
  it is read.
- ``splice``: a body built from cached fragments, so an unchanged turn is not
  encoded again for every request, nor copied: ``Body`` keeps the fragments
  and joins them only when asked (``PreparedRequest.content``).
"""

from __future__ import annotations

import operator
import threading
from array import array
from bisect import bisect_right
from collections.abc import Callable, Iterable, Iterator, Sequence
from itertools import accumulate, chain
from typing import Any, TypeVar, overload

from .. import _core
from .._json import frozen_loads
from .._memo import cached
from .._messages import AssistantMessage, Message
from .._replay import Replay

T = TypeVar("T")


dumps: Callable[[Any], bytes] = _core.wire_json
"""Compact UTF-8 JSON, as every adapter sends it (``ValidationError`` for NaN,
infinities and lone surrogates; the stdlib's ``TypeError`` for non-JSON types)."""


def fragment(message: Message, key: str, build: Callable[[], Any]) -> bytes:
    """The JSON bytes of ``build()``'s wire object for ``message``, encoded once
    per message (the object itself is not kept)."""
    return cached(message, key, lambda: dumps(build()))


def counted(
    message: Message,
    key: str,
    build: Callable[[], Any],
    count: Callable[[Any], int],
    native: Callable[[], bytes | None] | None = None,
) -> tuple[bytes, int]:
    """``fragment``, and ``count(wire object)``: what the adapter needs to know
    about the object once only its bytes are kept (kept with them, as one
    entry, when it is not 0; a message whose fragment counts nothing keeps
    the bytes alone). Every caller that builds under ``key`` must count alike
    (the key names the count too). ``native()``, when given, is tried first:
    the bytes of the same object written natively, whose count is 0, or None."""

    def encode() -> bytes | tuple[bytes, int]:
        if native is not None:
            data = native()
            if data is not None:
                return data
        value = build()
        number = count(value)
        data = dumps(value)
        return (data, number) if number else data

    entry = cached(message, key, encode)
    return (entry, 0) if isinstance(entry, bytes) else entry


class Fragments(Sequence[bytes]):
    """A request's encoded wire messages, read in place from the lists that
    hold them (``spans``: each a list and the range of it taken), with their
    total size in bytes (``size``), known from the cache's running sizes
    without summing every fragment again.

    The history's part is a span of a wire cache's own list, not a copy: a
    cache only appends to its list, and a list it stops using
    (``WireCache._own``) is never changed again, so the entries a request
    read stay what they were, whatever another thread or a later request
    adds. A copy would touch every cached wire message of the history on
    every request (and again when the request is dropped)."""

    __slots__ = ("_length", "_spans", "size")

    def __init__(self, size: int, *spans: tuple[Sequence[bytes], int, int]) -> None:
        self.size = size
        self._spans = spans
        self._length = sum(end - start for _, start, end in spans)

    def __len__(self) -> int:
        return self._length

    def __iter__(self) -> Iterator[bytes]:
        # Chained in C: a request's body reads every fragment of the history.
        return chain.from_iterable(items[start:end] for items, start, end in self._spans)

    @overload
    def __getitem__(self, i: int) -> bytes: ...
    @overload
    def __getitem__(self, i: slice) -> list[bytes]: ...
    def __getitem__(self, i: int | slice) -> bytes | list[bytes]:
        if isinstance(i, slice):
            return list(self)[i]
        at = operator.index(i)
        at = at + self._length if at < 0 else at
        if not 0 <= at < self._length:
            raise IndexError("fragment index out of range")
        for items, start, end in self._spans:
            if at < end - start:
                return items[start + at]
            at -= end - start
        raise AssertionError("unreachable: the spans add up to the length")


def whole(items: Sequence[bytes]) -> tuple[Sequence[bytes], int, int]:
    """All of ``items``, as a span of ``Fragments``."""
    return items, 0, len(items)


class Body:
    """A request body as the encoded pieces it is made of: ``head``, then the
    ``items`` separated by commas, then ``tail``. The items are the cached
    fragments of the history, shared with other requests; nothing is copied
    until ``joined()`` (or the HTTP layer reading ``chunks()``) asks.
    ``len(body)`` is its size in bytes, known without joining. ``field`` is
    the body member the items are the list of (``decoded_items`` reads them)."""

    __slots__ = ("_joined", "_length", "field", "head", "items", "tail")

    def __init__(self, head: bytes, items: Sequence[bytes], tail: bytes, field: str = "") -> None:
        self.head = head
        self.items = items
        self.tail = tail
        self.field = field
        self._joined: bytes | None = None
        size = items.size if isinstance(items, Fragments) else sum(map(len, items))
        self._length = len(head) + size + max(len(items) - 1, 0) + len(tail)

    def __len__(self) -> int:
        return self._length

    def joined(self) -> bytes:
        """The whole body as one ``bytes`` (made once, on first use)."""
        if self._joined is None:
            # head, item, ",", item, ..., item, tail: one copy of the history,
            # whatever the size of its first and last items.
            items = self.items
            if not items:
                self._joined = self.head + self.tail
                return self._joined
            parts: list[bytes] = [b","] * (2 * len(items) + 1)
            parts[0] = self.head
            parts[1::2] = items
            parts[-1] = self.tail
            self._joined = b"".join(parts)
        return self._joined

    def chunks(self, size: int = 1 << 16) -> Iterator[bytes]:
        """The body in order, in pieces of about ``size`` bytes (small fragments
        grouped, so the HTTP layer does not write one per message)."""
        if self._joined is not None:
            yield self._joined
            return
        group: list[bytes] = [self.head]
        filled = len(self.head)
        for i, item in enumerate(self.items):
            if i:
                group.append(b",")
            group.append(item)
            filled += len(item) + 1
            if filled >= size:
                yield b"".join(group)
                group, filled = [], 0
        group.append(self.tail)
        yield b"".join(group)

    def decoded_items(self) -> list[Any]:
        """The items as the JSON values they encode, read-only (``FrozenList``)."""
        return frozen_loads(b"[" + b",".join(self.items) + b"]")  # type: ignore[no-any-return]


def splice(body: dict[str, Any], field: str, items: Sequence[bytes]) -> Body:
    """The body ``body`` whose list ``field`` is made of the already encoded
    ``items`` (the rest of the body is encoded now; whatever stands in ``body``
    under ``field`` only keeps its place), as a ``Body`` that shares the items
    rather than copying them."""
    rest = dumps({k: v for k, v in body.items() if k != field})
    head = b"{" + dumps(field) + b":["
    tail = b"]}" if rest == b"{}" else b"]," + rest[1:]
    return Body(head, items, tail, field)


def _first(run: tuple[int, bytes]) -> int:
    return run[0]


class WireCache:
    """Wire messages an adapter built for the settled part of one message log,
    as their JSON bytes, shared by the conversations reading that log (kept in
    the replay store's slot for the adapter's key). ``marks`` records, for each
    message index the cache was extended to, how many wire messages cover the
    messages before it, so a conversation whose history ends earlier can still
    use a prefix, and ``seen`` how long the conversation was that set each mark:
    a mark depends on those messages only (``wire_boundary``), so a branch that
    shares them keeps it (``fork``). ``totals`` is a running count over the
    cached wire messages of whatever the adapter tallies (Claude: cache
    breakpoints), kept when it gives one per wire message."""

    __slots__ = ("encoded", "lock", "marks", "run_end", "runs", "seen", "shared", "sizes", "totals")

    def __init__(self) -> None:
        self.encoded: list[bytes] = []
        # A cache restored from a store's fragment rows (``store/_fragments.py``)
        # holds its first ``run_end`` wire messages in ``runs``: each run the
        # (index of its first wire message, its wire messages joined by commas
        # as a body joins them). ``encoded[:run_end]`` are None; a body takes
        # the runs whole, and ``pieces`` cuts them where one is asked for.
        self.runs: list[tuple[int, bytes]] = []
        self.run_end = 0
        self.totals: list[int] = []
        self.sizes = array("q")  # running byte size of ``encoded`` (machine integers: no int object each)
        self.marks: list[tuple[int, int]] = [(0, 0)]
        self.seen: list[int] = [0]
        # A fork's ``encoded``, ``totals`` and ``sizes`` are its parent's lists
        # until it extends them (``_own``): they may run past this cache's last
        # mark, and nothing reads past it. A sibling that never extends (one
        # request on a branch) copies nothing.
        self.shared = False
        self.lock = threading.Lock()

    def total(self, count: int) -> int:
        """The tally over the first ``count`` cached wire messages."""
        return self.totals[count - 1] if count else 0

    def size(self, count: int) -> int:
        """The byte size of the first ``count`` cached wire messages."""
        return self.sizes[count - 1] if count else 0

    def pieces(self, start: int, end: int) -> list[bytes]:
        """Cached wire messages ``start..end``, each on its own."""
        cut: list[bytes] = []
        for i in range(start, min(end, self.run_end)):
            first, run = self.runs[bisect_right(self.runs, i, key=_first) - 1]
            at = self.size(i) - self.size(first) + i - first
            cut.append(memoryview(run)[at : at + self.size(i + 1) - self.size(i)])  # type: ignore[arg-type]
        return cut + self.encoded[max(start, self.run_end) : end]

    def mark_at(self, boundary: int) -> tuple[int, int]:
        """The last ``(message index, wire count)`` mark at or before ``boundary``."""
        k = bisect_right(self.marks, (boundary, float("inf")))
        return self.marks[k - 1]

    def fork(self, length: int) -> WireCache:
        """A copy for a branch of history that shares the first ``length``
        messages: the leading marks set by conversations no longer than that."""
        copy = WireCache()
        with self.lock:
            k = 1
            while k < len(self.seen) and self.seen[k] <= length:
                k += 1
            copy.marks = self.marks[:k]
            copy.seen = self.seen[:k]
            count = copy.marks[-1][1]
            if count >= self.run_end:
                copy.runs, copy.run_end = self.runs, self.run_end
                copy.encoded = self.encoded
            else:
                copy.encoded = self.pieces(0, count)
            copy.totals = self.totals
            copy.sizes = self.sizes
            copy.shared = True
        return copy

    def _own(self) -> None:
        """Make this cache's lists its own, cut at its last mark (under ``lock``)."""
        if self.shared:
            count = self.marks[-1][1]
            self.encoded = self.encoded[:count]
            self.totals = self.totals[:count]
            self.sizes = self.sizes[:count]
            self.shared = False

    def extend(
        self, start: int, end: int, encoded: Sequence[bytes], tallies: Sequence[int] | None = None, seen: int = 0
    ) -> None:
        """Add the wire messages of messages ``start..end``, if the cache still
        ends at ``start`` (and the running total of their ``tallies``, one per
        wire message, when given), as found by a conversation of ``seen`` messages."""
        with self.lock:
            if self.marks[-1][0] != start or end <= start:
                return
            self._own()
            if tallies is not None:
                self.totals.extend(running_totals(self.totals, tallies))
            self.sizes.extend(running_totals(self.sizes, map(len, encoded)))
            self.encoded.extend(encoded)
            self.marks.append((end, len(self.encoded)))
            self.seen.append(max(seen, end))


def running_totals(totals: Sequence[int], values: Iterable[int]) -> Iterator[int]:
    """The running totals of ``values`` after the last of ``totals`` (0 when
    there is none), one per value."""
    running = accumulate(values, initial=totals[-1] if totals else 0)
    next(running)  # the start itself
    return running


def wire_boundary(replay: Replay) -> int:
    """An assistant-turn index (or 0) before which the request's wire form is
    final: no later message can change how messages before it go out, and no
    wire message spans it."""
    if replay.settled < replay.total:
        return replay.settled  # the open assistant turn
    return replay.turn_before(replay.settled) or 0


# A run of as-sent messages -> the JSON bytes of its wire messages (``Segment``),
# and a number per wire message that the adapter tallies, or None (``TalliedSegment``).
Segment = Callable[[Sequence[Message]], list[bytes]]
TalliedSegment = Callable[[Sequence[Message]], tuple[list[bytes], list[int] | None]]


def _always(message: AssistantMessage) -> bool:
    return True


def _cuttable(
    replay: Replay,
    index: int,
    starts_wire_message: Callable[[AssistantMessage], bool],
    joins_previous: Callable[[AssistantMessage], bool] | None,
) -> bool:
    """Whether the wire messages may be cut before the assistant turn at ``index``."""
    turn = replay.sent(index)
    assert isinstance(turn, AssistantMessage)
    if not starts_wire_message(turn):
        return False
    if joins_previous is None or not joins_previous(turn):
        return True
    for before in range(index - 1, -1, -1):  # the nearest message before it that goes out
        message = replay.sent(before)
        if isinstance(message, AssistantMessage):
            if starts_wire_message(message):
                return False  # right after another turn: they go out together
        elif message.role != "system":
            return True
    return True


def wire_messages(
    replay: Replay,
    key: str,
    build_segment: Segment,
    starts_wire_message: Callable[[AssistantMessage], bool] = _always,
    joins_previous: Callable[[AssistantMessage], bool] | None = None,
) -> Fragments:
    """The JSON bytes of every wire message of the request, for adapters whose
    wire messages never span an assistant turn's start.

    ``build_segment(sent)`` maps a run of as-sent messages that starts at an
    assistant turn (or the first message) and ends before one (or at the end) to
    the JSON bytes of its wire messages. The part of the history before
    ``wire_boundary(replay)`` is built once and shared by later requests (under
    ``key``, which must name everything the wire form depends on besides the
    messages), so a request after k new messages maps only those k; the rest
    is read in place (``Fragments``). ``starts_wire_message(turn)`` says whether an as-sent
    assistant turn starts a wire message (an adapter that leaves empty turns
    out lets the messages around them merge, so they are no place to cut).
    ``joins_previous(turn)`` says whether an as-sent assistant turn that comes
    right after another one (no user message between) goes out in the same
    wire message (Gemini's function-call turns), which is no place to cut either.
    """

    def untallied(sent: Sequence[Message]) -> tuple[list[bytes], None]:
        return build_segment(sent), None

    encoded, _ = tallied_wire_messages(replay, key, untallied, starts_wire_message, joins_previous)
    return encoded


def tallied_wire_messages(
    replay: Replay,
    key: str,
    build_segment: TalliedSegment,
    starts_wire_message: Callable[[AssistantMessage], bool],
    joins_previous: Callable[[AssistantMessage], bool] | None = None,
) -> tuple[Fragments, int]:
    """``wire_messages``, for a ``build_segment`` that also gives a number per
    wire message (or None: nothing tallied), and the sum of those numbers over
    the whole request: the cache keeps a running total over the shared part
    (``WireCache.total``), so only the new wire messages are counted. The
    total is read from the same cache object as the messages, which another
    thread may replace in the slot meanwhile."""
    boundary: int | None = wire_boundary(replay)
    while boundary and not _cuttable(replay, boundary, starts_wire_message, joins_previous):
        boundary = replay.turn_before(boundary)
    boundary = boundary or 0
    cache = replay.slot(key, WireCache)
    upto, count = cache.mark_at(boundary)
    if upto < boundary and cache.marks[-1][0] == upto:
        encoded, tallies = build_segment(replay.sent_messages(upto, boundary))
        cache.extend(upto, boundary, encoded, tallies, replay.total)
        upto, count = cache.mark_at(boundary)
    tail, tail_tallies = build_segment(replay.sent_messages(upto, replay.total))
    total = cache.total(count) + sum(tail_tallies) if tail_tallies is not None else 0
    size = cache.size(count) + sum(map(len, tail))
    runs, k = cache.runs, cache.run_end
    if k and count >= k:  # restored runs, taken whole: they hold their own separating commas
        joined = [run for _, run in runs]
        return Fragments(size + k - len(runs), whole(joined), (cache.encoded, k, count), whole(tail)), total
    if k:
        return Fragments(size, whole(cache.pieces(0, count)), whole(tail)), total
    return Fragments(size, (cache.encoded, 0, count), whole(tail)), total
