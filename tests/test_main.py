"""`python -m thinkseal` (the `thinkseal` command; without a command, `thinkseal report`), the
main job: it decides the bundled example and says why."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "thinkseal", *args], capture_output=True, text=True, check=False)


def test_default_keeps_every_turn_of_the_bundled_example() -> None:
    done = run("--json")
    assert done.returncode == 0, done.stderr
    report = json.loads(done.stdout)
    assert [t["reason"] for t in report["turns"]] == ["kept", "kept", "kept"]


def test_another_target_or_an_edit_unseals() -> None:
    other = json.loads(run("--json", "--target", "deepseek:deepseek-chat").stdout)
    assert {t["reason"] for t in other["turns"]} == {"origin-mismatch"}
    edited = json.loads(run("--json", "--edit", "1").stdout)
    assert {t["reason"] for t in edited["turns"]} == {"prefix-changed"}


def test_body_replays_signatures_only_to_the_producer() -> None:
    own = json.loads(run("--json", "--body").stdout)["body"]
    assert "SignatureOne" in json.dumps(own)
    foreign = json.loads(run("--json", "--body", "--target", "deepseek:deepseek-chat").stdout)["body"]
    text = json.dumps(foreign)
    assert "Signature" not in text
    assert "I need both forecasts first" in text  # the reasoning text still goes to DeepSeek


def test_bad_arguments_fail_cleanly() -> None:
    done = run("--target", "nonsense")
    assert done.returncode == 2
    assert "PROVIDER:MODEL" in done.stderr
    missing = run("/no/such/file.json")
    assert missing.returncode == 2
    assert "thinkseal:" in missing.stderr


def test_a_file_that_is_not_utf8_fails_cleanly(tmp_path: Path) -> None:
    bad = tmp_path / "latin1.json"
    bad.write_bytes(
        '{"format": "thinkseal.conversation", "version": 2, "messages": [], "x": "caf\xe9"}'.encode("latin-1")
    )
    done = run(str(bad))
    assert done.returncode == 2
    assert done.stderr == f"thinkseal: {bad}: not UTF-8 text (byte 0xe9 at offset 76)\n"
    assert "Traceback" not in done.stderr


def test_body_takes_request_options() -> None:
    target = "vertex-anthropic:claude-sonnet-4-5"
    missing = run("--target", target, "--body")
    assert missing.returncode == 2
    assert "project" in missing.stderr
    done = run("--target", target, "--body", "--json", "--option", "project=p1", "--option", "region=us-east5")
    assert done.returncode == 0, done.stderr
    body = json.loads(done.stdout)["body"]
    assert body["anthropic_version"] == "vertex-2023-10-16"
    assert "model" not in body
    assert body["max_tokens"] == 4096
    assert run("--option", "nonsense").returncode == 2
