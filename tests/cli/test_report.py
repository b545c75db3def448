"""``thinkseal report``: the replay report, the request check (exit status 1
when the adapter refuses the next request) and clean input errors (status 2)."""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest

from thinkseal.cli import main

from .conftest import THINKING, script


def test_default_is_the_bundled_example_all_kept(cli) -> None:
    ran = cli("report", "--json")
    assert ran.code == 0, ran.err
    document = json.loads(ran.out)
    assert document["file"] == "the bundled example"
    assert document["target"] == "anthropic:claude-sonnet-4-5"
    assert document["messages"] == 9
    assert [t["index"] for t in document["turns"]] == [2, 5, 7]
    assert [(t["kept"], t["reason"]) for t in document["turns"]] == [(True, "kept")] * 3
    assert [t["thinking_blocks"] for t in document["turns"]] == [1, 2, 1]
    assert document["turns"][0]["summary"] == "get_weather(toolu_01), get_weather(toolu_02)"
    assert document["next_request"] == {"accepted": True}
    assert "body" not in document


def test_no_command_means_report(cli) -> None:
    assert json.loads(cli("--json").out) == json.loads(cli("report", "--json").out)
    foreign = json.loads(cli("--json", "--target", "deepseek:deepseek-chat").out)
    assert {t["reason"] for t in foreign["turns"]} == {"origin-mismatch"}


def test_human_table_is_plain_when_piped(cli) -> None:
    ran = cli("report", "--target", "deepseek:deepseek-chat")
    assert ran.code == 0
    assert "\x1b[" not in ran.out
    lines = ran.out.splitlines()
    assert lines[0].startswith("the bundled example  target deepseek:deepseek-chat  9 messages, 3 assistant turns")
    assert lines[1].split() == ["index", "replay", "reason", "thinking", "content"]
    assert lines[2].split()[:4] == ["2", "unsealed", "origin-mismatch", "1"]
    assert lines[-1] == "next request: accepted"


class FakeTerminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_colour_on_a_terminal_unless_no_color(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    terminal = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", terminal)
    assert main(["report"]) == 0
    assert "\x1b[32mkept\x1b[0m" in terminal.getvalue()
    monkeypatch.setenv("NO_COLOR", "1")
    plain = FakeTerminal()
    monkeypatch.setattr(sys, "stdout", plain)
    assert main(["report"]) == 0
    assert "\x1b[" not in plain.getvalue()
    assert "kept" in plain.getvalue()


def test_a_stored_loop_with_thinking_on_is_accepted(cli, loop_file: Path) -> None:
    ran = cli("report", str(loop_file), "--option", THINKING, "--json")
    assert ran.code == 0, ran.err
    document = json.loads(ran.out)
    assert document["turns"] == [
        {"index": 2, "kept": True, "reason": "kept", "thinking_blocks": 1, "summary": "get_weather(toolu_1)"}
    ]
    assert document["next_request"] == {"accepted": True}


def test_a_request_the_adapter_refuses_exits_1(cli, rejected_file: Path) -> None:
    ran = cli("report", str(rejected_file), "--option", THINKING, "--json")
    assert ran.code == 1
    document = json.loads(ran.out)
    assert document["turns"][0]["reason"] == "prefix-changed"
    verdict = document["next_request"]
    assert verdict["accepted"] is False
    assert verdict["index"] == 2
    assert verdict["reason"] == "prefix-changed"
    assert "without its leading thinking block" in verdict["error"]
    human = cli("report", str(rejected_file), "--option", THINKING)
    assert human.code == 1
    assert "next request: would be rejected (turn 2, prefix-changed)" in human.out
    # Without thinking the same request is fine: the check uses the options given.
    assert cli("report", str(rejected_file)).code == 0


def test_body_flag_adds_the_body(cli) -> None:
    document = json.loads(cli("report", "--json", "--body").out)
    assert document["body"]["model"] == "claude-sonnet-4-5"
    assert document["body"]["max_tokens"] == 4096
    assert "SignatureOne" in json.dumps(document["body"])


@pytest.mark.parametrize(
    ("fixture", "message"),
    [
        ("latin1_file", "not UTF-8 text (byte 0xe9 at offset 46)"),
        ("not_json_file", "not JSON (Expecting value at line 1 column 1)"),
    ],
)
def test_unreadable_input_exits_2_with_one_line(
    cli, request: pytest.FixtureRequest, fixture: str, message: str
) -> None:
    path = request.getfixturevalue(fixture)
    ran = cli("report", str(path))
    assert ran.code == 2
    assert ran.out == ""
    assert ran.err == f"thinkseal: {path}: {message}\n"


def test_json_that_is_not_a_conversation_exits_2(cli, tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text('[{"role": "user", "content": "hi"}]', encoding="utf-8")
    ran = cli("report", str(path))
    assert ran.code == 2
    assert ran.err.startswith(f"thinkseal: {path}: not a stored thinkseal conversation: ")
    assert ran.err.count("\n") == 1


def test_usage_errors_exit_2(cli) -> None:
    missing = cli("report", "/no/such/file.json")
    assert (missing.code, missing.err) == (2, "thinkseal: /no/such/file.json: no such file\n")
    typo = cli("demi")
    assert typo.code == 2
    assert "commands: report, body, import, emulate, demo" in typo.err
    assert cli("report", "--target", "nonsense").code == 2
    assert cli("report", "--option", "nonsense").code == 2
    edit = cli("report", "--edit", "99")
    assert (edit.code, edit.err) == (2, "thinkseal: --edit 99: no such message (the conversation has 9)\n")
    vertex = cli("report", "--target", "vertex-anthropic:claude-sonnet-4-5")
    assert vertex.code == 2
    assert vertex.err.startswith("thinkseal: project: required")


def test_console_script_and_python_m(tmp_path: Path, latin1_file: Path, not_json_file: Path) -> None:
    done = script("report", "--json")
    assert done.returncode == 0, done.stderr
    assert [t["reason"] for t in json.loads(done.stdout)["turns"]] == ["kept", "kept", "kept"]
    bare = script()
    assert bare.returncode == 0
    assert bare.stdout.startswith("the bundled example  target anthropic:claude-sonnet-4-5")
    assert "\x1b[" not in bare.stdout
    module = subprocess.run([sys.executable, "-m", "thinkseal"], capture_output=True, text=True, check=False)
    assert (module.returncode, module.stdout) == (0, bare.stdout)
    for path in (latin1_file, not_json_file):
        bad = script("report", str(path))
        assert bad.returncode == 2
        assert bad.stderr.startswith(f"thinkseal: {path}: not ")
        assert "Traceback" not in bad.stderr
        assert bad.stderr.count("\n") == 1
