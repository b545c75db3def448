"""The fragment row format (``store/_fragments.py``): what is encoded reads back
as it was written, and bytes that are not a row written for that target, wire
key and range read as None (the caller maps the messages again), never as an
exception or as another row."""

from __future__ import annotations

from array import array
from itertools import accumulate, pairwise
from typing import Any

from hypothesis import given
from hypothesis import strategies as st

from thinkseal import Origin
from thinkseal.store._fragments import (
    OPEN_KEY,
    Data,
    data_check,
    encode,
    read_data,
    read_entry,
    target_of,
    wire_runs,
)

TARGET = target_of(Origin("anthropic", "m"), b"c" * 32)
CHAINS = (b"a" * 32, b"b" * 32)


def row(pieces: list[bytes], tallied: bool = True) -> tuple[bytes, bytes, Data]:
    data = Data(
        (b",".join(pieces),),
        array("I", map(len, pieces)),
        list(range(len(pieces))) if tallied else None,
        bytes([1, 0, 2]),
        b"x" * 96,
        array("q", [10, 12]),
    )
    entry, blob = encode(TARGET, "messages", 10, 13, 14, CHAINS, [(11, b"s" * 32)], data, OPEN_KEY)
    return entry, blob, data


@given(st.lists(st.binary(min_size=1, max_size=40), max_size=6), st.booleans())
def test_a_row_reads_back_as_written(pieces: list[bytes], tallied: bool) -> None:
    entry, blob, data = row(pieces, tallied)
    read = read_entry(TARGET, "messages", 10, 13, entry, OPEN_KEY)
    assert read is not None
    assert (read.start, read.end, read.seen, read.row_chain_start, read.row_chain_end) == (10, 13, 14, *CHAINS)
    assert read.systems == ((11, b"s" * 32),)
    back = read_data(read, [blob])
    assert back is not None
    assert b"".join(back.wire) == b",".join(pieces)
    assert list(back.sizes) == list(data.sizes)
    assert back.tallies == data.tallies
    assert (back.codes, back.chain, list(back.turns)) == (data.codes, data.chain, [10, 12])


def test_a_row_is_bound_to_its_target_wire_key_and_range() -> None:
    entry, _, _ = row([b"{}"])
    assert read_entry(TARGET, "messages", 10, 13, entry, OPEN_KEY) is not None
    assert read_entry(target_of(Origin("anthropic", "other"), b"c" * 32), "messages", 10, 13, entry, OPEN_KEY) is None
    assert read_entry(TARGET, "system", 10, 13, entry, OPEN_KEY) is None
    assert read_entry(TARGET, "messages", 11, 13, entry, OPEN_KEY) is None
    assert read_entry(TARGET, "messages", 10, 12, entry, OPEN_KEY) is None


@given(st.binary(max_size=300), st.integers(-2, 20), st.integers(-2, 20))
def test_any_entry_bytes_read_as_an_entry_or_none(raw: bytes, start: int, end: int) -> None:
    assert read_entry(TARGET, "messages", start, end, raw, OPEN_KEY) is None  # no check holds by chance


@given(st.data())
def test_every_change_of_a_row_reads_as_none(data: st.DataObject) -> None:
    entry, blob, _ = row([b'{"a":1}', b'{"b":2}'])
    checked = read_entry(TARGET, "messages", 10, 13, entry, OPEN_KEY)
    assert checked is not None
    at = data.draw(st.integers(0, len(blob) - 1))
    flipped = blob[:at] + bytes([blob[at] ^ data.draw(st.integers(1, 255))]) + blob[at + 1 :]
    assert read_data(checked, [flipped]) is None
    cut = data.draw(st.integers(0, len(blob) - 1))
    assert read_data(checked, [blob[:cut]]) is None
    assert read_data(checked, [blob[:cut], blob[cut:] + b"x"]) is None
    assert read_data(checked, [blob[:cut]] + [blob[cut:]] * 2) is None
    at = data.draw(st.integers(0, len(entry) - 1))
    assert (
        read_entry(TARGET, "messages", 10, 13, entry[:at] + bytes([entry[at] ^ 1]) + entry[at + 1 :], OPEN_KEY) is None
    )


def test_values_of_the_wrong_type_read_as_none() -> None:
    entry, blob, _ = row([b"{}"])
    assert read_entry(TARGET, "messages", 10, 13, entry.decode("latin-1"), OPEN_KEY) is None
    assert read_entry(TARGET, b"messages", 10, 13, entry, OPEN_KEY) is None
    assert read_entry(TARGET, "messages", "10", 13, entry, OPEN_KEY) is None
    checked = read_entry(TARGET, "messages", 10, 13, entry, OPEN_KEY)
    assert checked is not None
    assert read_data(checked, None) is None
    assert read_data(checked, blob) is None  # parts come as a list
    assert read_data(checked, []) is None
    assert read_data(checked, [blob.decode("latin-1")]) is None
    assert read_data(checked, (blob,)) is None


def test_a_row_that_checks_but_is_malformed_reads_as_none() -> None:
    # Bytes that no ``encode`` wrote, with a check made for them (the key is public).
    entry, _, _ = row([b"{}"])
    checked = read_entry(TARGET, "messages", 10, 13, entry, OPEN_KEY)
    assert checked is not None
    for blob in (b"\x05\x00\x00\x00\x00\x00\x00\x00\x00abc", b"\x01\x00\x00\x00\x01\x00\x00\x00\x00" + b"\x00" * 3):
        assert read_data(checked._replace(data_check=data_check(checked, [blob])), [blob]) is None


@given(
    st.lists(st.lists(st.binary(min_size=1, max_size=30), min_size=1, max_size=6), min_size=1, max_size=4),
    st.data(),
)
def test_a_row_read_in_parts_cut_anywhere_gives_runs_of_whole_messages(rows: list[list[bytes]], data: Any) -> None:
    # Rows of a restored cache, each one's wire messages joined by commas and
    # cut anywhere (inside a message, at a comma, beside one, a message
    # spanning several parts): each run is whole messages joined by commas,
    # and the runs in order are every message once.
    sizes = array("q", accumulate(len(m) for messages in rows for m in messages))
    first = 0
    for messages in rows:
        joined = b",".join(messages)
        cuts = sorted(data.draw(st.lists(st.integers(1, max(len(joined) - 1, 1)), max_size=8, unique=True)))
        bounds = [0, *(c for c in cuts if c < len(joined)), len(joined)]
        wire = [memoryview(joined[a:b]) for a, b in pairwise(bounds)]
        runs = wire_runs(wire, sizes, first, len(messages))
        starts = [i for i, _ in runs]
        ends = [*starts[1:], first + len(messages)]
        assert starts[0] == first
        for (i, run), end in zip(runs, ends, strict=True):
            assert i < end
            assert bytes(run) == b",".join(messages[i - first : end - first])
        first += len(messages)


def test_a_row_whose_header_spans_parts_reads_back_whole() -> None:
    pieces = [b'{"n":%d}' % i for i in range(40)]
    entry, blob, _ = row(pieces)
    read = read_entry(TARGET, "messages", 10, 13, entry, OPEN_KEY)
    assert read is not None
    for size in (1, 5, 9, 64, len(blob) - 1):
        parts = [blob[i : i + size] for i in range(0, len(blob), size)]
        back = read_data(read, parts)
        assert back is not None
        assert b"".join(back.wire) == b",".join(pieces)
        assert list(back.sizes) == [len(p) for p in pieces]
        assert all(type(v) is memoryview for v in back.wire)  # views into the parts, not a joined copy
