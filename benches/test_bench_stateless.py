"""The issue-22 rows of ``python -m benches.compare`` run once, small (CI runs
the benches with --benchmark-disable; timings are not asserted): store ``load``
+ ``prepare`` and ``refresh`` + ``prepare`` on every reachable backend (SQLite
always; PostgreSQL and Redis where THINKSEAL_TEST_POSTGRES / THINKSEAL_TEST_REDIS
name a server), the stateless, steady-state, fork and cold-fingerprint rows,
the targets table, the JSON of the figures, and the profile of where a cold
request's time goes."""

from __future__ import annotations

import json
import os

import pytest

from . import _stateless, compare

N = 45
ONCE = compare.Rounds(small=1, large=1, step=1, cold=1)


@pytest.mark.parametrize("served", [True, False])
def test_issue22_rows_once(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch, served: bool) -> None:
    monkeypatch.setattr(_stateless, "COLLECT", False)  # about 0.25 s a round with the peers imported
    monkeypatch.setattr(_stateless, "SERVED", served)
    figures = compare.issue22((N,), ONCE, cold_n=60)
    store = figures["store"]
    expected = ["sqlite"] + [b for b, variable in _stateless.VARIABLES.items() if os.environ.get(variable)]
    assert store["backends"] == expected, store["left_out"]
    for backend in expected:
        f = store["by_size"][N][backend]
        assert f["load_prepare_us_per_msg"] > 0
        assert f["refresh_prepare_us"] > 0
        assert f["refresh_pct"] == pytest.approx(f["refresh_prepare_us"] / f["load_prepare_us"] * 100)
        assert f["lazy_prepare_us_per_msg"] > 0
        assert f["lazy_new_turns_us_per_msg"] > 0
        assert 1.0 < f["fragments_per_wire_byte"] <= 1.2  # bytes, not time: the wire bytes and a little more
    targets = {t["path"]: t for t in figures["targets"]}
    assert len(targets) == 4 * len(expected) + 5
    fork = targets["a fork (sibling continuation), µs per unchanged message"]
    assert fork["met"] == "n/a (15,000 not run)"
    assert fork["value"][N] == figures["steady"][N]["fork_sibling_us"] / N
    compare.print_tables(figures)
    out = capsys.readouterr().out
    assert "### issue 22 targets" in out
    assert out.count("`refresh` + `prepare` after 2 new turns") == len(expected)
    assert json.loads(json.dumps(figures, default=str))["sizes"] == [N]
    assert figures["measure"] == _stateless.MEASURES[served]


class Clock:
    """A stand-in for ``time`` whose ``perf_counter`` moves only when told."""

    def __init__(self) -> None:
        self.now = 0.0

    def perf_counter(self) -> float:
        return self.now


@pytest.mark.parametrize("served", [True, False])
def test_each_round_serves_another_session_first_outside_the_timing(
    monkeypatch: pytest.MonkeyPatch, served: bool
) -> None:
    clock, calls = Clock(), []
    monkeypatch.setattr(_stateless, "time", clock)
    monkeypatch.setattr(_stateless, "COLLECT", False)
    monkeypatch.setattr(_stateless, "SERVED", served)

    def step(name: str, took: float) -> None:
        calls.append(name)
        clock.now += took

    best = _stateless.best(lambda: step("run", 1.0), 3, lambda: step("setup", 10.0), lambda: step("other", 100.0))
    assert best == 1.0
    assert calls == (["setup", "other", "run"] if served else ["setup", "run"]) * 3


def test_unreachable_backend_left_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("THINKSEAL_TEST_POSTGRES", raising=False)
    monkeypatch.setenv("THINKSEAL_TEST_REDIS", "redis://127.0.0.1:1/0")  # nothing listens on port 1
    with _stateless.reachable() as (backends, left_out):
        assert [b.name for b in backends] == ["sqlite"]
    assert left_out["postgres"] == "THINKSEAL_TEST_POSTGRES is not set"
    assert "redis" in left_out


def test_sizes_argument() -> None:
    assert compare.sizes_arg("1000,3_000") == (1_000, 3_000)
    with pytest.raises(Exception, match="comma-separated"):
        compare.sizes_arg("a,b")


def test_profile_once(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_stateless, "COLLECT", False)
    text = _stateless.profile(n=30, top=5, rounds=1)
    assert "SQLite load + prepare" in text
    assert "SQLite lazy load, a seen target + prepare" in text
    assert "from_json + prepare" in text
    assert text.count(_stateless.MEASURES[True]) == 3  # each split, as benches.compare measures
    assert "cumulative" in text
