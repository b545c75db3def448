"""Fragment rows: what a request to one target needs of a run of stored
messages, kept beside the message rows (docs/persistence.md, "Prepared
fragments").

A target is an origin and a request context (``target_of``); a wire key names
an adapter's wire form (``providers/_wire.py``'s ``WireCache`` keys). A row
covers messages ``start..end`` of a session for one (target, wire key) and
holds, as bytes:

- the *entry* (small; every lazy load reads the entries of the session): the
  range, how long the conversation was that set its last wire mark, the chain
  values the message rows were stored with at ``start`` and ``end`` (what the
  row was derived from), the system messages in the range (position and
  digest: a lazy load reads those rows and no other before ``end``), the check
  of the data, and a check over all of it;
- the *data*: the wire messages of the range as the adapter encoded them, its
  per-wire-message tallies, and the replay decisions of the range (the chain
  value after each message as sent to the target, a reason code per message,
  the assistant turns).

The rows of one (target, wire key) link into a chain from message 0: each
starts where the one before ends, at the same stored chain value. Nothing here
is trusted without its checks: a row whose check fails, that does not link,
or whose stored chain values are not the message rows' is never used, and the
messages it covered are mapped again.
"""

from __future__ import annotations

import itertools
import struct
import sys
from array import array
from bisect import bisect_right
from collections.abc import Iterable, Sequence
from itertools import accumulate
from typing import Final, NamedTuple

from .. import _core
from .._binding import Origin
from .._replay import ReplayStore
from .._secret import secret_bytes
from .._walk import CHAIN_START
from ..providers._wire import WireCache

__all__ = [
    "OPEN_KEY",
    "Data",
    "Entry",
    "chains_of",
    "data_check",
    "encode",
    "fragment_key",
    "read_data",
    "read_entry",
    "target_of",
    "wire_runs",
]

ENTRY_VERSION: Final = 1
_ENTRY: Final = struct.Struct("<BQQQ32s32sI")
_SYSTEM: Final = struct.Struct("<Q32s")
_DATA: Final = struct.Struct("<IBI")
_LITTLE: Final = sys.byteorder == "little"


# The key of the checks of a store without a secret: anyone can compute it, so
# its checks notice corruption, truncation and rows moved, not a forger.
OPEN_KEY: Final = _core.fragment_key(b"")


def fragment_key(secret: object) -> bytes:
    """The key of a store's fragment checks, from its ``fragment_secret``
    (None: the open key). ``ValidationError`` names a secret that is not str or bytes."""
    return _core.fragment_key(secret_bytes(secret, "fragment_secret"))


def _fields(*parts: bytes) -> bytes:
    """``parts`` length-prefixed: no two sequences of parts join alike."""
    return b"".join(len(p).to_bytes(8, "little") + p for p in parts)


def target_of(origin: Origin, context: bytes) -> bytes:
    """The 32-byte key of an (origin, request context): under the open key
    whatever the store's secret, so stores of one database name targets alike."""
    account = b"" if origin.account is None else b"\x01" + origin.account.encode()
    return _core.fragment_check(
        OPEN_KEY, _fields(b"target", origin.provider.encode(), origin.model.encode(), account, context), []
    )


class Entry(NamedTuple):
    """A fragment row's entry, checked."""

    target: bytes
    wire_key: str
    start: int
    end: int
    seen: int
    row_chain_start: bytes
    row_chain_end: bytes
    systems: tuple[tuple[int, bytes], ...]
    data_check: bytes
    fields: bytes  # the entry's bytes before its checks: what the data check covers beside the data
    key: bytes  # the key it was checked under: its data is checked under the same


class Data(NamedTuple):
    """A fragment row's data: its wire messages joined by commas, as the
    buffers they were read in (``wire``: cut anywhere, a message too; for a
    row being written, each message and each comma), their sizes, their
    tallies, and the replay decisions of its messages."""

    wire: tuple[bytes | memoryview, ...]
    sizes: array[int]
    tallies: list[int] | None
    codes: bytes
    chain: bytes
    turns: array[int]


def _array(typecode: str, raw: bytes | memoryview) -> array[int]:
    values = array(typecode)
    values.frombytes(raw)
    if not _LITTLE:
        values.byteswap()
    return values


def _little(values: array[int]) -> bytes:
    if not _LITTLE:
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _entry_body(
    start: int, end: int, seen: int, row_chains: tuple[bytes, bytes], systems: Sequence[tuple[int, bytes]]
) -> bytes:
    body = _ENTRY.pack(ENTRY_VERSION, start, end, seen, *row_chains, len(systems))
    return body + b"".join(_SYSTEM.pack(p, d) for p, d in systems)


def _entry_header(target: bytes, wire_key: str, body: bytes) -> bytes:
    return _fields(b"entry", target, wire_key.encode(), body)


def encode(
    target: bytes,
    wire_key: str,
    start: int,
    end: int,
    seen: int,
    row_chains: tuple[bytes, bytes],
    systems: Sequence[tuple[int, bytes]],
    data: Data,
    key: bytes,
) -> tuple[bytes, bytes]:
    """The (entry, data) bytes of a fragment row, checked under ``key``."""
    parts: list[bytes | memoryview] = [
        _DATA.pack(len(data.sizes), data.tallies is not None, len(data.turns)),
        _little(data.sizes),
    ]
    if data.tallies is not None:
        parts.append(_little(array("q", data.tallies)))
    parts += [_little(data.turns), data.codes, data.chain, *data.wire]
    blob = b"".join(parts)
    body = _entry_body(start, end, seen, row_chains, systems)
    body += _data_check(key, target, wire_key, body, [blob])
    return body + _core.fragment_check(key, _entry_header(target, wire_key, body), []), blob


def _data_check(key: bytes, target: bytes, wire_key: str, fields: bytes, parts: list[bytes]) -> bytes:
    return _core.fragment_check(key, _fields(b"data", target, wire_key.encode(), fields), parts)


def data_check(entry: Entry, parts: list[bytes]) -> bytes:
    """The check ``entry``'s row's data (its ``parts`` joined) must have to be read."""
    return _data_check(entry.key, entry.target, entry.wire_key, entry.fields, parts)


def read_entry(target: object, wire_key: object, start: object, end: object, raw: object, key: bytes) -> Entry | None:
    """The entry of a fragment row as the backend read it, checked under
    ``key``; None when anything of it is malformed or does not check."""
    if type(target) is not bytes or type(wire_key) is not str or type(raw) is not bytes:
        return None
    if type(start) is not int or type(end) is not int or len(raw) < _ENTRY.size + 64:
        return None
    body, check = raw[:-32], raw[-32:]
    if _core.fragment_check(key, _entry_header(target, wire_key, body), []) != check:
        return None
    version, first, last, seen, chain_start, chain_end, count = _ENTRY.unpack_from(body)
    if version != ENTRY_VERSION or (first, last) != (start, end) or not 0 <= start < end <= seen:
        return None
    if len(body) != _ENTRY.size + count * _SYSTEM.size + 32:
        return None
    systems = tuple(_SYSTEM.unpack_from(body, _ENTRY.size + i * _SYSTEM.size) for i in range(count))
    if any(not start <= p < end for p, _ in systems):
        return None
    return Entry(target, wire_key, start, end, seen, chain_start, chain_end, systems, body[-32:], body[:-32], key)


def read_data(entry: Entry, raw: object) -> Data | None:
    """The data of ``entry``'s row from the parts it was read in (a list of
    bytes, checked and read as they are, not joined), or None when it does
    not check or is malformed."""
    if type(raw) is not list or not raw or any(type(part) is not bytes for part in raw):
        return None
    if data_check(entry, raw) != entry.data_check:
        return None
    try:
        return _parsed(entry, raw)
    except (struct.error, ValueError):  # checks, yet malformed: written by something else than ``encode``
        return None


def _parsed(entry: Entry, parts: list[bytes]) -> Data | None:
    wires, tallied, turn_count = _DATA.unpack_from(_leading(parts, _DATA.size))
    messages = entry.end - entry.start
    head_size = _DATA.size + (12 if tallied else 4) * wires + 8 * turn_count + 33 * messages
    head = _leading(parts, head_size)
    at = _DATA.size
    sizes = _array("I", head[at : at + 4 * wires])
    at += 4 * wires
    tallies = None
    if tallied:
        tallies = list(_array("q", head[at : at + 8 * wires]))
        at += 8 * wires
    turns = _array("q", head[at : at + 8 * turn_count])
    at += 8 * turn_count
    codes = bytes(head[at : at + messages])
    chain = bytes(head[at + messages : at + 33 * messages])
    commas = max(wires - 1, 0)
    if len(head) != head_size or sum(map(len, parts)) != head_size + sum(sizes) + commas:
        return None
    if turns and (turns[0] < entry.start or turns[-1] >= entry.end):
        return None
    # Views into the parts as read, not a copy: a body joins them as they are.
    return Data(_after(parts, head_size), sizes, tallies, codes, chain, turns)


def _leading(parts: list[bytes], size: int) -> memoryview:
    """The first ``size`` bytes of the parts joined (fewer when they are
    shorter): a view into the first part, which holds them unless something
    else than ``encode`` cut the data."""
    first = memoryview(parts[0])
    if len(first) >= size or len(parts) == 1:
        return first[:size]
    taken: list[bytes] = []
    held = 0
    for part in parts:  # the parts that hold them, joined
        taken.append(part)
        held += len(part)
        if held >= size:
            break
    return memoryview(b"".join(taken))[:size]


def _after(parts: list[bytes], size: int) -> tuple[memoryview, ...]:
    """The parts joined, past their first ``size`` bytes, as views into the parts."""
    out: list[memoryview] = []
    for part in parts:
        view = memoryview(part)
        out.append(view[size:])
        size = max(size - len(view), 0)
    return tuple(v for v in out if len(v))


def wire_runs(wire: Sequence[bytes | memoryview], sizes: array[int], first: int, count: int) -> list[tuple[int, bytes]]:
    """Wire messages ``first..first+count`` of a restored cache, joined by
    commas in the buffers ``wire`` (cut anywhere), as the runs a ``WireCache``
    keeps: (index of the run's first message, its messages joined by commas),
    each a view into one buffer, and a message cut by a buffer's end copied
    whole into a run of its own. ``sizes`` is the cache's running size of its
    wire messages (``WireCache.sizes``), which places each one. Nothing is
    read or copied but the cut messages: a bisection per buffer. The byte
    between two messages at a cut is taken to be the comma ``encode`` writes
    there (the data checked: its writer holds the key)."""
    base = sizes[first - 1] if first else 0

    def end_of(i: int) -> int:  # where wire message i ends, counted from the row's first wire byte
        return sizes[i] - base + i - first

    runs: list[tuple[int, bytes]] = []
    cut: list[bytes | memoryview] = []  # the pieces so far of a message cut by buffer ends
    i, stop, at = first, first + count, 0
    for buffer in wire:
        view = memoryview(buffer)
        start, at = at, at + len(view)
        if cut:
            end = end_of(i)
            if end > at:
                cut.append(view)
                continue
            cut.append(view[: end - start])
            runs.append((i, b"".join(cut)))
            cut = []
            i += 1
        if i == stop:
            continue
        begins = end_of(i - 1) + 1 if i > first else 0
        last = i + bisect_right(range(i, stop), at, key=end_of) - 1  # the last message ending in this buffer
        if last >= i:
            runs.append((i, view[begins - start : end_of(last) - start]))  # type: ignore[arg-type]
            i = last + 1
            begins = end_of(last) + 1
        if i < stop and begins < at:
            cut = [view[begins - start :]]
    return runs


def chains_of(entries: Iterable[Entry]) -> dict[tuple[bytes, str], list[Entry]]:
    """Per (target, wire key), the longest run of rows linked from message 0."""
    by_start: dict[tuple[bytes, str], dict[int, Entry]] = {}
    for entry in entries:
        by_start.setdefault((entry.target, entry.wire_key), {})[entry.start] = entry
    out: dict[tuple[bytes, str], list[Entry]] = {}
    for key, rows in by_start.items():
        run: list[Entry] = []
        at, chain = 0, CHAIN_START
        while (link := rows.get(at)) is not None and link.row_chain_start == chain:
            run.append(link)
            at, chain = link.end, link.row_chain_end
        if run:
            out[key] = run
    return out


def restored(
    origin: Origin, context: bytes, log: object, runs: dict[str, list[tuple[Entry, Data]]]
) -> tuple[ReplayStore, int]:
    """A replay store with the decisions of the longest run (and, in its slots,
    a wire cache per wire key from that key's run), for message log ``log``;
    and how many messages it decides."""
    longest = max(runs.values(), key=lambda run: run[-1][0].end)
    store = ReplayStore(origin, context)
    store.log = log
    for _, data in longest:
        store.chain += data.chain
        store.codes += data.codes
        store.turns.extend(data.turns)
    for wire_key, run in runs.items():
        cache = WireCache()
        cache.sizes = array("q", accumulate(itertools.chain.from_iterable(d.sizes for _, d in run)))
        count = 0
        for entry, data in run:
            if data.sizes:
                cache.runs += wire_runs(data.wire, cache.sizes, count, len(data.sizes))
            if data.tallies is not None and len(cache.totals) == count:
                running = cache.totals[-1] if cache.totals else 0
                cache.totals += itertools.islice(accumulate(data.tallies, initial=running), 1, None)
            count += len(data.sizes)
            cache.marks.append((entry.end, count))
            cache.seen.append(entry.seen)
        if len(cache.totals) != count:
            cache.totals = []
        cache.run_end = count
        cache.encoded = [None] * count  # type: ignore[list-item]
        store.slot(wire_key, log, lambda cache=cache: cache)  # type: ignore[misc]
    return store, longest[-1][0].end
