"""A stored conversation loaded lazily (``Store.load(session_id, lazy=True)``):
a worker that holds nothing reads what a request needs, not the history.

The load reads the session's fragment entries (``_fragments``), then only the
message rows after the longest run of fragment rows and the system messages
before it (PostgreSQL reads the entries and the rows after the end of the
last fragment row in one statement, Redis in one script:
``Store._fragment_index_and_tail``). The
messages before are read from the store when something first touches one
(``StoredItems``), as few as that touch needs. ``prepare`` for a
target that a run was written for restores that target's replay decisions
and wire messages from the run (``StoredPrefix.restore``), so it decides and
maps the new messages only; after it, what it decided and mapped past the
stored run is written back as a fragment row (``StoredPrefix.after_prepare``).
A switch to a target with no run takes the ordinary path once.
"""

from __future__ import annotations

import itertools
import logging
from array import array
from bisect import bisect_left
from collections.abc import Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from threading import Lock
from typing import TYPE_CHECKING, Any, Final, SupportsIndex

from .._binding import FINGERPRINT_VERSION, Origin
from .._conversation import Conversation, stored_conversation
from .._errors import ConflictError
from .._messages import Message, SystemMessage
from .._replay import MessageLog, Replay, remember
from .._walk import CHAIN_START
from ..providers._wire import WireCache
from ._codec import (
    FragmentRow,
    Head,
    MessageRow,
    Tail,
    decode_context,
    decode_messages,
    head_checks,
    row_slices,
)
from ._fragments import Data, Entry, chains_of, encode, read_data, read_entry, restored, target_of

if TYPE_CHECKING:
    from ._base import Store

__all__ = ["load_lazy"]

log: Final = logging.getLogger("thinkseal.store")


class StoredItems(list[Message]):
    """A lazily loaded conversation's messages: the first ``missing`` are not
    read yet (held as None) and are read, from the touched one on, when
    anything touches one. Whatever reads the list whole reads them all first."""

    __slots__ = ("missing", "source")

    def __init__(self, messages: list[Any], missing: int, source: StoredPrefix) -> None:
        super().__init__(messages)
        self.missing = missing
        self.source = source

    def __getitem__(self, i: Any) -> Any:
        if self.missing:
            if isinstance(i, slice):
                touched = range(*i.indices(len(self)))
                if touched:
                    self.source.fill(self, min(touched[0], touched[-1]))
            else:
                j = i.__index__()
                j = j + len(self) if j < 0 else j
                if 0 <= j < self.missing:
                    self.source.fill(self, j)
        return list.__getitem__(self, i)

    def _whole(self) -> None:
        if self.missing:
            self.source.fill(self, 0)

    def __iter__(self) -> Iterator[Message]:
        self._whole()
        return list.__iter__(self)

    def __reversed__(self) -> Iterator[Message]:
        self._whole()
        return list.__reversed__(self)

    def __contains__(self, value: object) -> bool:
        self._whole()
        return list.__contains__(self, value)

    def __eq__(self, other: object) -> bool:
        self._whole()
        return list.__eq__(self, other)

    __hash__ = None

    def index(self, value: Any, start: SupportsIndex = 0, stop: SupportsIndex = 2**62) -> int:
        self._whole()
        return list.index(self, value, start, stop)

    def count(self, value: Any) -> int:
        self._whole()
        return list.count(self, value)

    def copy(self) -> list[Message]:
        self._whole()
        return list(list.__iter__(self))


class _Chains:
    """The chain values the message rows were stored with, by how many
    messages they follow, as far as they were read (runs of rows, and single
    values from checked fragment entries)."""

    def __init__(self) -> None:
        self._points: dict[int, bytes] = {0: CHAIN_START}
        self._runs: list[tuple[int, bytes]] = []  # (messages before the first value, the values joined)

    def add_run(self, after: int, values: bytes) -> None:
        if values:
            self._runs.append((after, values))

    def add(self, after: int, value: bytes) -> None:
        self._points[after] = value

    def get(self, after: int) -> bytes | None:
        value = self._points.get(after)
        if value is not None:
            return value
        for first, values in self._runs:
            i = after - first
            if 0 <= i < len(values) // 32:
                return values[32 * i : 32 * i + 32]
        return None


def _tapped(slices: Iterator[list[MessageRow]], into: list[bytes]) -> Iterator[list[MessageRow]]:
    """``slices``, keeping each slice's stored chain values in ``into``."""
    for part in slices:
        into.append(b"".join([r.chain for r in part]))
        yield part


class StoredPrefix:
    """What a lazily loaded conversation knows of its session: the store and
    the session, the stored chain values read, the system messages before
    the unread rows, and the runs of fragment rows it restored or wrote."""

    def __init__(
        self,
        store: Store,
        session_id: str,
        head: Head,
        loaded_from: int,
        systems: dict[int, bytes],
        prefetched: dict[bytes, list[FragmentRow]] | None = None,
        hint: object = None,
    ) -> None:
        self.store = store
        self.session_id = session_id
        self.length = head.length  # rows past this are not stored (yet): nothing of them is written back
        self.checked = head.version == FINGERPRINT_VERSION
        self.loaded_from = loaded_from  # every message from here on was read at load
        self.systems = systems  # the system messages before ``loaded_from``: position -> digest
        self.chains = _Chains()
        self.runs: dict[tuple[bytes, str], list[tuple[int, int]]] = {}
        self.restored: set[bytes] = set()
        self.lock = Lock()
        # Loaded for an event loop (``AsyncStore.load(..., lazy=True)``): every
        # target's fragment rows read at the load, in its worker thread, so
        # ``prepare`` reads nothing; and the write-backs made in a thread of
        # their own (``pending``), so it writes nothing either.
        self.prefetched = prefetched
        self.pending: list[Future[None]] = []
        self.hint = hint  # what the load's plan read that its fragment reads may use (``Store._fragments``)

    # -- the unread rows ----------------------------------------------------------

    def fill(self, items: StoredItems, index: int) -> None:
        """Read messages ``index..items.missing`` into ``items``."""
        with self.lock:
            end = items.missing
            if index >= end:
                return
            first = max(index - 1, 0)
            raw = self.store._rows_between(self.session_id, first, end)
            rows = [self.store._row(self.session_id, first + i, item) for i, item in enumerate(raw)]
            if len(rows) != end - first or rows[-1].chain != self.chains.get(end):
                raise ConflictError(
                    f"session {self.session_id!r} was replaced or deleted since this conversation was loaded "
                    "lazily (its unread messages are no longer the ones it was loaded with); load it again",
                    session_id=self.session_id,
                    expected_length=self.length,
                    actual_length=None,
                )
            chain_before = rows.pop(0).chain if index else CHAIN_START
            self.chains.add(index, chain_before)
            messages, _ = decode_messages(self.session_id, [rows], chain_before, check=self.checked)
            list.__setitem__(items, slice(index, end), messages)
            self.chains.add_run(index + 1, b"".join([r.chain for r in rows]))
            items.missing = index

    # -- restoring a target's run ------------------------------------------------------

    def restore(self, conversation: Conversation, origin: Origin) -> None:
        """Put the replay decisions and wire messages of the fragment rows of
        ``origin`` (under the conversation's context) into the conversation's
        replay caches, as far as they check."""
        context = conversation.context_digest
        target = target_of(origin, context)
        with self.lock:
            if target in self.restored:
                return
            self.restored.add(target)
        if self.prefetched is None:
            rows = self.store._fragments(self.session_id, target, self.hint)
        else:
            rows = self.prefetched.pop(target, [])
        raw_data: dict[tuple[str, int], object] = {}
        entries: list[Entry] = []
        for wire_key, start, end, raw_entry, raw in rows:
            entry = read_entry(target, wire_key, start, end, raw_entry, self.store._fragment_key)
            if entry is None:
                _tampered(self.session_id, wire_key, start, end)
                continue
            if end <= self.length:
                entries.append(entry)
                raw_data[wire_key, start] = raw
        runs: dict[str, list[tuple[Entry, Data]]] = {}
        items = conversation._log.items
        for (_, wire_key), run in chains_of(entries).items():
            read: list[tuple[Entry, Data]] = []
            for entry in run:
                data = read_data(entry, raw_data[wire_key, entry.start])
                if data is None:
                    _tampered(self.session_id, wire_key, entry.start, entry.end)
                    break
                read.append((entry, data))
            if read and self._rows_match(items, read[-1][0]):
                runs[wire_key] = read
        if not runs:
            return
        store, decided = restored(origin, context, conversation._log, runs)
        with self.lock:
            for wire_key, read in runs.items():
                self.runs[target, wire_key] = [(e.start, e.end) for e, _ in read]
                for entry, _ in read:
                    self.chains.add(entry.start, entry.row_chain_start)
        remember(conversation._replay, origin, (store, decided))

    def _rows_match(self, items: list[Message], last: Entry) -> bool:
        """Whether the message rows are still the ones the run ending with
        ``last`` was made from (read up to its end first, where not read yet)."""
        if isinstance(items, StoredItems) and last.end < items.missing:
            self.fill(items, last.end)
        if self.chains.get(last.end) == last.row_chain_end:
            return True
        log.warning(
            "session %r: stored fragments up to message %d were made from other message rows; "
            "their messages are mapped again",
            self.session_id,
            last.end,
        )
        return False

    # -- writing back --------------------------------------------------------------------

    def after_prepare(self, replay: Replay) -> None:
        """Write what ``replay``'s request decided and mapped past the stored
        run of each wire key as a fragment row (for an event loop, in the
        background). A failure is logged, never raised: the request is ready
        whether or not its fragments are kept."""
        if self.prefetched is None:
            self._write_back(replay)
            return
        with self.lock:
            self.pending = [f for f in self.pending if not f.done()]
            self.pending.append(_writer().submit(self._write_back, replay))

    def flush(self) -> None:
        """Wait for the write-backs made in the background."""
        with self.lock:
            pending = list(self.pending)
        for future in pending:
            future.result()

    def _write_back(self, replay: Replay) -> None:
        try:
            target = target_of(replay.origin, replay.context)
            for wire_key, cache in replay.store.slots_of(replay.log):
                if isinstance(cache, WireCache):
                    self._write(replay, target, wire_key, cache)
        except Exception as err:  # a store that fails here fails the next write the caller makes too
            log.warning("session %r: fragments not written (%s: %s)", self.session_id, type(err).__name__, err)

    def _write(self, replay: Replay, target: bytes, wire_key: str, cache: WireCache) -> None:
        with cache.lock:
            end, count = cache.marks[-1]
            marks = list(cache.marks)
            seen = cache.seen[-1]
        decisions = replay.store
        with self.lock:
            run = list(self.runs.get((target, wire_key), ()))
            stored_end = run[-1][1] if run else 0
            if end <= stored_end or end > self.length or len(decisions) < end:
                return
            end_chain = self.chains.get(end)
            run.append((stored_end, end))
            while len(run) >= 2 and 2 * (run[-1][1] - run[-1][0]) >= run[-2][1] - run[-2][0]:
                run[-2:] = [(run[-2][0], run[-1][1])]  # merged: a run holds O(log n) rows
            start = run[-1][0]
            start_chain = self.chains.get(start)
        at = bisect_left(marks, (start, -1))
        if end_chain is None or start_chain is None or at == len(marks) or marks[at][0] != start:
            return
        first = marks[at][1]
        totals = cache.totals
        tallies = None
        if len(totals) >= count:
            tallies = [totals[i] - (totals[i - 1] if i else 0) for i in range(first, count)]
        turns = decisions.turns[bisect_left(decisions.turns, start) : bisect_left(decisions.turns, end)]
        pieces = cache.pieces(first, count)
        # The wire messages and the commas between them as they are: encode
        # joins them once, into the row's data.
        wire: list[bytes] = [b","] * (2 * len(pieces) - 1) if pieces else []
        wire[0::2] = pieces
        data = Data(
            tuple(wire),
            array("I", map(len, pieces)),
            tallies,
            bytes(decisions.codes[start:end]),
            bytes(decisions.chain[32 * start : 32 * end]),
            turns,
        )
        systems = self._systems(replay.log, start, end)
        key = self.store._fragment_key
        entry, blob = encode(target, wire_key, start, end, max(seen, end), (start_chain, end_chain), systems, data, key)
        self.store._put_fragment(self.session_id, target, wire_key, start, end, entry, blob)
        with self.lock:
            self.runs[target, wire_key] = run
            self.chains.add(end, end_chain)

    def _systems(self, message_log: MessageLog, start: int, end: int) -> list[tuple[int, bytes]]:
        """The system messages among messages ``start..end`` (position, digest)."""
        found = [(p, d) for p, d in sorted(self.systems.items()) if start <= p < end]
        items = message_log.items
        for p in range(max(start, self.loaded_from), end):
            message = list.__getitem__(items, p)
            if isinstance(message, SystemMessage):
                found.append((p, message.digest))
        return found


def _tampered(session_id: str, wire_key: str, start: int, end: int) -> None:
    log.warning(
        "session %r: a stored fragment row (wire form %r, messages %d..%d) does not check; "
        "it is not sent and its messages are mapped again",
        session_id,
        wire_key,
        start,
        end,
    )


# How many messages before the stored run a lazy load reads too: the replay
# decision and the wire mapping of the new turns look back a message or two
# (the tool results before a turn, the turn a run of them answers), and a
# touch of an unread one costs a read of its own.
LOOK_BACK: Final = 4


def _plan(store: Store, session_id: str) -> tuple[list[Entry], set[bytes], Tail | None, object]:
    """The longest run of checked fragment rows of any target (none: read
    every row), the targets that have fragment rows, and the rows and the
    hint the backend read with them (``Store._fragment_index_and_tail``)."""
    index, tail, hint = store._fragment_index_and_tail(session_id, LOOK_BACK + 1)
    entries = [e for e in (read_entry(*row, store._fragment_key) for row in index) if e is not None]
    run = max(chains_of(entries).values(), key=lambda run: run[-1].end, default=[])
    return run, {row[0] for row in index}, tail, hint


def _rows_from(store: Store, session_id: str, first: int, planned: Tail | None) -> tuple[Head, Any]:
    """The session row and its message rows from ``first``: those read with
    the plan when they start there or before, else read now."""
    if planned is not None:
        head, planned_first, raw = planned
        if planned_first <= first:
            store._known.put(session_id, head)
            return head, raw[first - planned_first :]
    return store._read_known(session_id, first)


_WRITER: ThreadPoolExecutor | None = None
_WRITER_LOCK = Lock()


def _writer() -> ThreadPoolExecutor:
    """The thread that writes the fragments of conversations loaded for an
    event loop (one: writes of one session are made in order)."""
    global _WRITER  # noqa: PLW0603 - made on first use: most processes never load lazily for an event loop
    with _WRITER_LOCK:
        if _WRITER is None:
            _WRITER = ThreadPoolExecutor(max_workers=1, thread_name_prefix="thinkseal-fragments")
        return _WRITER


def _prefix_systems(store: Store, session_id: str, run: Sequence[Entry], before: int) -> list[SystemMessage] | None:
    """The system messages before ``before`` the entries of ``run`` name, read
    from their rows (None when a row is not the system message its entry names)."""
    named = [s for entry in run for s in entry.systems if s[0] < before]
    if not named:
        return []
    raw = store._rows_at(session_id, [p for p, _ in named])
    if len(raw) != len(named):
        return None
    rows = [store._row(session_id, p, item) for (p, _), item in zip(named, raw, strict=True)]
    messages, _ = decode_messages(session_id, [rows], CHAIN_START, check=False)
    found = []
    for message, (_, digest) in zip(messages, named, strict=True):
        if not isinstance(message, SystemMessage) or message.digest != digest:
            return None
        found.append(message)
    return found


def load_lazy(
    store: Store, session_id: str, run: Sequence[Entry] | None = None, for_event_loop: bool = False
) -> Conversation:
    """The session as a conversation whose messages before the longest run of
    fragment rows (``run``; found when None), but the last ``LOOK_BACK``, are
    read when first touched (see the module docstring). ``for_event_loop``:
    every target's fragment rows are read now, and written back in the
    background (``StoredPrefix``)."""
    targets: set[bytes] = set()
    planned: Tail | None = None
    hint: object = None
    if run is None:
        run, targets, planned, hint = _plan(store, session_id)
    run_end = run[-1].end if run else 0
    start = max(run_end - LOOK_BACK, 0)  # the first message read now
    systems = _prefix_systems(store, session_id, run, start)
    if systems is None:
        return load_lazy(store, session_id, [], for_event_loop)
    head, raw = _rows_from(store, session_id, max(start - 1, 0), planned)
    current, consistent = head_checks(session_id, head)
    if run_end and (run_end > head.length or not current or not consistent):
        return load_lazy(store, session_id, [], for_event_loop)
    slices = row_slices(session_id, max(start - 1, 0), head.length, raw, store._row)
    chain_before = CHAIN_START
    if start:
        first = next(slices)
        chain_before = first[0].chain
        slices = itertools.chain([first[1:]], slices)
    chains: list[bytes] = []
    tail, bad = decode_messages(session_id, _tapped(slices, chains), chain_before, check=current)
    prefetched = {t: store._fragments(session_id, t, hint) for t in targets} if for_event_loop else None
    systems_before = {p: d for e in run for p, d in e.systems if p < start}
    prefix = StoredPrefix(store, session_id, head, start, systems_before, prefetched, hint)
    prefix.chains.add(start, chain_before)
    prefix.chains.add_run(start + 1, b"".join(chains))
    if run_end and prefix.chains.get(run_end) != run[-1].row_chain_end:  # the rows changed since the run was written
        return load_lazy(store, session_id, [], for_event_loop)
    tools, response_format, _ = decode_context(session_id, head.context, check=current)
    items = StoredItems([None] * start + tail, start, prefix)
    message_log = MessageLog(items)
    message_log.source = prefix
    all_systems = tuple(systems) + tuple(m for m in tail if isinstance(m, SystemMessage))
    conversation = stored_conversation(message_log, tools, response_format, all_systems)
    if current and consistent and not bad:
        message_log.know_chain(head.length, head.chain)
    return conversation
