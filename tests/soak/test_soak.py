"""The soak at CI size: a few hundred steps of the agent loop of
``tests/soak/driver.py`` (``benches/soak.py --steps 10000`` is the full run;
``docs/reliability.md`` has its figures)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from thinkseal.providers import PROVIDER_IDS

from .driver import MODELS, EmulatorHost, Figures, Soak, SoakFailure, growth_bound, run

STEPS = 300


@pytest.fixture(scope="module")
def figures() -> Figures:
    return run(STEPS, seed=7, warmup=100, checkpoint_every=25)


def test_every_step_was_accepted_or_recovered(figures: Figures) -> None:
    assert figures.steps == figures.replies == STEPS
    assert figures.requests >= STEPS + figures.retries + figures.step_retries
    assert figures.tool_calls > STEPS // 2


def test_the_schedule_did_what_a_soak_is_for(figures: Figures) -> None:
    for fault in ("rotate", "529", "503", "cut-stream"):
        assert figures.faults[fault] >= 2, fault
    assert figures.faults["stale-seal-sent"] >= 1  # a rotation that hit sealed thinking...
    assert figures.recoveries["provider-rejected"] >= figures.faults["stale-seal-sent"]  # ...recovered every time
    assert figures.retries >= figures.faults["529"] + figures.faults["503"]
    assert figures.step_retries >= 1
    assert figures.switches["model"] >= 5
    assert figures.switches["provider"] >= 5
    assert len(figures.by_provider) >= len(PROVIDER_IDS) // 2
    for edit in ("prune-exchange", "prune-message", "summarise", "checkpoint"):
        assert figures.edits[edit] >= 1, edit
    assert figures.seals_replayed > 0  # sealed thinking did go back to its own origin


def test_memory_is_flat_after_warm_up(figures: Figures) -> None:
    assert len(figures.traced) >= 8
    assert figures.growth() <= growth_bound(figures), figures.traced
    assert figures.max_messages <= 30  # the conversation stays bounded, so memory can


def test_figures_serialise(figures: Figures) -> None:
    data = json.loads(json.dumps(figures.as_dict()))
    assert data["steps"] == STEPS
    assert set(data["memory"]) >= {"traced_growth", "traced_peak", "rss_final"}


class _NoHost:
    def __init__(self) -> None:
        self.base_url = dict.fromkeys(PROVIDER_IDS, "http://127.0.0.1:9")
        self.options: dict[str, Any] = {p: {} for p in PROVIDER_IDS}


def test_the_seal_check_catches_a_seal_sent_to_another_origin() -> None:
    soak = Soak(_NoHost(), seed=0)  # type: ignore[arg-type]
    try:
        soak.provider, soak.model = "gemini", MODELS["gemini"][0]
        soak.issued = {"SEAL-FROM-CLAUDE-0123": {("anthropic", MODELS["anthropic"][0])}}
        soak._check_requests(0, [("/p", json.dumps({"contents": [{"x": "other"}]}).encode())])
        with pytest.raises(SoakFailure, match="went to"):
            soak._check_requests(0, [("/p", json.dumps({"contents": [{"x": "SEAL-FROM-CLAUDE-0123"}]}).encode())])
        soak.provider = "anthropic"  # a switch of model is another origin too
        soak.model = MODELS["anthropic"][1]
        with pytest.raises(SoakFailure, match="went to"):
            soak._check_requests(0, [("/p", json.dumps({"m": ["SEAL-FROM-CLAUDE-0123"]}).encode())])
        soak.model = MODELS["anthropic"][0]
        soak._check_requests(0, [("/p", json.dumps({"m": ["SEAL-FROM-CLAUDE-0123"]}).encode())])
    finally:
        soak.close()


def test_the_emulator_host_serves_every_provider() -> None:
    with EmulatorHost(("anthropic", "ollama")) as host:
        assert set(host.base_url) == {"anthropic", "ollama"}
        assert host.options["anthropic"]["max_tokens"] >= 1024
        assert host.take("anthropic") == []
