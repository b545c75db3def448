"""``thinkseal demo``: the agent loop against the Anthropic emulator; every
step is checked, and a step that misbehaves makes the demo fail."""

from __future__ import annotations

import json

import pytest

from thinkseal.testing import Emulator

from .conftest import script


def test_json_steps_all_behave(cli) -> None:
    ran = cli("demo", "--json")
    assert ran.code == 0, ran.out + ran.err
    document = json.loads(ran.out)
    assert document["ok"] is True
    assert document["provider"] == "anthropic"
    steps = document["steps"]
    assert [s["name"] for s in steps] == ["tool-loop", "pruned", "model-switch", "rejected"]
    assert all(s["ok"] and s["checks"] and all(c["ok"] for c in s["checks"]) for s in steps)

    loop = steps[0]["requests"]
    assert [len(r["reply"]["tool_calls"]) for r in loop] == [1, 1, 0]
    assert [[e["kept"] for e in r["report"]] for r in loop] == [[], [True], [True, True]]
    assert all(r["reply"]["signed"] and r["http_requests"] == 1 for r in loop)

    (pruned,) = steps[1]["requests"]
    assert [e["reason"] for e in pruned["report"]] == ["prefix-changed", "prefix-changed"]
    assert (pruned["http_requests"], pruned["recoveries"]) == (1, [])

    (switched,) = steps[2]["requests"]
    assert switched["model"] == "claude-opus-4-1"
    assert {e["reason"] for e in switched["report"]} == {"origin-mismatch"}

    rejected, after = steps[3]["requests"]
    assert rejected["http_requests"] == 2
    (recovery,) = rejected["recoveries"]
    assert recovery["kind"] == "provider-rejected"
    assert recovery["status"] == 400
    assert "Invalid `signature`" in recovery["error"]
    kept = [e["index"] for e in rejected["report"] if e["kept"]]
    assert recovery["unsealed"] == kept == [8]
    assert after["http_requests"] == 1
    assert after["recoveries"] == []
    assert {e["index"]: e["reason"] for e in after["report"]}[8] == "no-sealed-thinking"


def test_human_output_shows_reports_and_the_recovery(cli) -> None:
    ran = cli("demo")
    assert ran.code == 0
    assert "\x1b[" not in ran.out
    assert ran.out.count("Step ") == 4
    assert "prefix-changed" in ran.out
    assert "origin-mismatch" in ran.out
    assert "recovered: provider-rejected (HTTP 400: messages.7.content.0: Invalid `signature`" in ran.out
    assert "FAILED" not in ran.out
    assert ran.out.rstrip().endswith("demo: every step behaved as described")


def test_a_step_that_does_not_behave_fails_the_demo(cli, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(Emulator, "rotate_keys", lambda self: None)  # the signature stays valid: no rejection
    ran = cli("demo", "--json")
    assert ran.code == 1
    document = json.loads(ran.out)
    assert document["ok"] is False
    assert [s["ok"] for s in document["steps"]] == [True, True, True, False]
    failed = [c["check"] for c in document["steps"][3]["checks"] if not c["ok"]]
    assert any("rejected the stale signature" in check for check in failed)
    human = cli("demo")
    assert human.code == 1
    assert "FAILED" in human.out


def test_console_script() -> None:
    done = script("demo")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "demo: every step behaved as described" in done.stdout
    assert "\x1b[" not in done.stdout
    as_json = script("demo", "--json")
    assert json.loads(as_json.stdout)["ok"] is True
