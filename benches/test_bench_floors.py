"""``python -m benches.floors`` run once, small: every reachable backend read
through its client alone gives back the body it was given, and the floor and
the allowances are made from the figures they name (timings not asserted)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from thinkseal import Conversation, provider
from thinkseal.store._codec import fragment_parts

from . import _peers, _stateless, floors
from ._workload import bound_history

N = 40


def test_floors_once(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_stateless, "COLLECT", False)
    figures = floors.floors(N, rounds=1)
    body = provider("anthropic").prepare(
        Conversation(bound_history(N, _peers.ORIGIN)), model=_peers.ORIGIN.model, max_tokens=1024
    )
    assert figures["body_bytes"] == len(body.content)
    expected = ["sqlite"] + [b for b, variable in _stateless.VARIABLES.items() if os.environ.get(variable)]
    assert list(figures["backends"]) == expected
    lean = figures["peer_lean_us"]
    assert (lean is not None) == _peers.available()["pydantic-ai"]
    for f in figures["backends"].values():
        assert min(f["round_trip_us"], f["read_us"], f["moved_us"], f["lazy_us"], f["refresh_us"]) > 0
        assert (f["lazy_allowance_us"] is None) == (lean is None)
    monkeypatch.setattr(_stateless, "SERVED", True)  # main sets the measure: restored after the test
    assert floors.main(["--n", str(N), "--rounds", "1"]) == 0
    out = capsys.readouterr().out
    for name in expected:
        assert out.count(f"| {_stateless.LABELS[name]} |") == 2  # a row in each table


def test_each_backend_gives_back_the_bytes_written_in_the_stores_parts(tmp_path: Path) -> None:
    data = os.urandom(600_000)  # more than two parts of FRAGMENT_PART
    for name, raw in floors.raw_backends(tmp_path):
        try:
            raw.put(1, data)
            raw.put(2, data[::-1])
            parts = raw.get(1)
            # SQLite keeps fragment data as one blob, the servers in FRAGMENT_PART parts
            expected = [data] if name == "sqlite" else fragment_parts(data)
            assert [len(p) for p in parts] == [len(p) for p in expected], name
            assert floors.moved(raw, 1) == data, name
            assert floors.moved(raw, 2) == data[::-1], name
        finally:
            raw.close()
