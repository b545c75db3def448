"""``thinkseal emulate``: the emulator as a foreground process, as another
language's test suite would run it."""

from __future__ import annotations

import json
import signal
import subprocess
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

import thinkseal
from thinkseal import Conversation, UserMessage
from thinkseal.testing import emulate

from .conftest import script, script_path


def _start(*args: str) -> subprocess.Popen[str]:
    return subprocess.Popen(
        [script_path(), "emulate", *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )


def _post(url: str, body: bytes, headers: dict[str, str]) -> tuple[int, Any]:
    request = urllib.request.Request(url, data=body, headers={"content-type": "application/json", **headers})
    try:
        with urllib.request.urlopen(request, timeout=10) as response:
            return response.status, json.loads(response.read())
    except urllib.error.HTTPError as error:
        return error.code, json.loads(error.read())


def _stop(process: subprocess.Popen[str], sig: int = signal.SIGTERM) -> tuple[int, str]:
    process.send_signal(sig)
    try:
        _, err = process.communicate(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.communicate()
        raise
    return process.returncode, err


def test_serves_until_sigterm() -> None:
    process = _start("anthropic", "--port", "0")
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:")
        assert int(base_url.rsplit(":", 1)[1]) > 0
        request = thinkseal.provider("anthropic").prepare(
            Conversation([UserMessage("Hi")]), model="claude-sonnet-4-5", max_tokens=100
        )
        status, answer = _post(base_url + request.path, request.content, {**request.headers, "x-api-key": "k"})
        assert status == 200, answer
        assert answer["content"][0] == {"type": "text", "text": "Done."}
        unauthorized, _ = _post(base_url + request.path, request.content, dict(request.headers))
        assert unauthorized == 401
    finally:
        code, err = _stop(process)
    assert code == 0
    assert "Traceback" not in err
    assert "anthropic emulator serving at" in err


def test_json_no_auth_and_ctrl_c() -> None:
    process = _start("deepseek", "--port", "0", "--no-auth", "--json")
    try:
        assert process.stdout is not None
        info = json.loads(process.stdout.readline())
        assert info["provider"] == "deepseek"
        assert info["require_auth"] is False
        request = thinkseal.provider("deepseek").prepare(Conversation([UserMessage("Hi")]), model="deepseek-chat")
        status, answer = _post(info["base_url"] + request.path, request.content, dict(request.headers))
        assert status == 200, answer
        assert answer["choices"][0]["message"]["content"] == "Done."
    finally:
        code, err = _stop(process, signal.SIGINT)
    assert code == 0
    assert "Traceback" not in err


def test_unknown_provider_and_bad_port_exit_2(cli) -> None:
    unknown = cli("emulate", "nobody")
    assert unknown.code == 2
    assert unknown.err.startswith("thinkseal: no emulator for 'nobody'; known: anthropic, bedrock")
    assert cli("emulate", "anthropic", "--port", "70000").code == 2


def test_a_port_in_use_exits_2() -> None:
    with emulate("anthropic") as taken:
        port = taken.server_url.rsplit(":", 1)[1]
        done = script("emulate", "anthropic", "--port", port, timeout=20)
    assert done.returncode == 2
    assert done.stderr.startswith(f"thinkseal: cannot listen on 127.0.0.1:{port}: ")
    assert "Traceback" not in done.stderr


def test_help_exits_0(cli) -> None:
    ran = cli("emulate", "--help")
    assert ran.code == 0
    assert "--no-auth" in ran.out


# -- scripted from any language: --script FILE and the control endpoint, driven by curl ------------------

SCRIPT = {
    "steps": [
        {"thinking": "Check the weather first.", "calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]},
        {"text": "It rains."},
    ]
}
WEATHER = {"name": "get_weather", "description": "The weather", "input_schema": {"type": "object"}}
BOUND_ELSEWHERE = (
    "messages.1.content.0: Invalid `signature` in `thinking` block. The block is bound to a different "
    'conversation. Remove the block, or set `thinking.block_binding.prefix_mismatch_behavior` to "drop_block". '
    "That setting requires the `thinking-binding-controls-2026-08-01` value in the `anthropic-beta` header. "
    "The `system` prompt differs from the one this block was created with."
)
CANNOT_MODIFY = (
    "messages.1.content.0: `thinking` or `redacted_thinking` blocks in the latest assistant message cannot be "
    "modified. These blocks must remain as they were in the original response."
)


def curl(method: str, url: str, body: Any = None, headers: dict[str, str] | None = None) -> tuple[int, Any]:
    """``method url`` sent by the curl binary; the status and the parsed JSON answer."""
    command = ["curl", "-sS", "-X", method, url, "-w", "\n%{http_code}", "--max-time", "20"]
    for name, value in (headers or {}).items():
        command += ["-H", f"{name}: {value}"]
    data = None
    if body is not None:
        command += ["-H", "content-type: application/json", "--data-binary", "@-"]
        data = body if isinstance(body, str) else json.dumps(body)
    ran = subprocess.run(command, input=data, capture_output=True, text=True, check=False, timeout=30)
    assert ran.returncode == 0, ran.stderr
    text, _, status = ran.stdout.rpartition("\n")
    return int(status), json.loads(text)


def claude(base_url: str, body: dict[str, Any]) -> tuple[int, Any]:
    headers = {"x-api-key": "test-key", "anthropic-version": "2023-06-01"}
    return curl("POST", base_url + "/v1/messages", body, headers)


def messages_body(system: str, messages: list[Any]) -> dict[str, Any]:
    return {
        "model": "claude-sonnet-4-5",
        "max_tokens": 2048,
        "thinking": {"type": "enabled", "budget_tokens": 1024},
        "system": system,
        "tools": [WEATHER],
        "messages": messages,
    }


@pytest.fixture
def scripted(tmp_path: Path) -> Iterator[dict[str, Any]]:
    """``thinkseal emulate anthropic --script FILE --json`` running; its address document."""
    path = tmp_path / "script.json"
    path.write_text(json.dumps(SCRIPT), encoding="utf-8")
    process = _start("anthropic", "--script", str(path), "--json")
    try:
        assert process.stdout is not None
        yield json.loads(process.stdout.readline())
    finally:
        code, err = _stop(process)
        assert code == 0, err
        assert "Traceback" not in err


def test_a_scripted_signed_reply_replays_and_a_stale_one_is_refused_driven_by_curl(scripted: dict[str, Any]) -> None:
    base = scripted["base_url"]
    question = [{"role": "user", "content": "Weather in Paris?"}]
    status, first = claude(base, messages_body("Be brief.", question))
    assert status == 200, first
    thinking, call = first["content"]
    assert thinking["type"] == "thinking"
    assert thinking["thinking"] == "Check the weather first."
    assert thinking["signature"]
    assert (call["type"], call["name"], call["input"]) == ("tool_use", "get_weather", {"city": "Paris"})

    result = {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call["id"], "content": "rain"}]}
    replay = [*question, {"role": "assistant", "content": first["content"]}, result]
    status, second = claude(base, messages_body("Be brief.", replay))
    assert status == 200, second
    assert second["content"] == [{"type": "text", "text": "It rains."}]

    # Stale: the system prompt changed since the block was signed.
    status, refused = claude(base, messages_body("Be verbose.", replay))
    assert status == 400
    assert refused == {"type": "error", "error": {"type": "invalid_request_error", "message": BOUND_ELSEWHERE}}

    # Stale: the signed block's text edited.
    edited = [*question, {"role": "assistant", "content": [{**thinking, "thinking": "Guess."}, call]}, result]
    status, refused = claude(base, messages_body("Be brief.", edited))
    assert status == 400
    assert refused == {"type": "error", "error": {"type": "invalid_request_error", "message": CANNOT_MODIFY}}


def test_the_control_endpoint_appends_replies_and_lists_requests_driven_by_curl(scripted: dict[str, Any]) -> None:
    control = scripted["control_url"]
    assert control == scripted["server_url"] + "/_thinkseal"
    status, queued = curl("GET", control + "/script")
    assert (status, queued) == (200, {"steps": SCRIPT["steps"], "faults": 0})

    status, queued = curl("PUT", control + "/script", {"steps": [{"text": "Replaced."}], "faults": []})
    assert (status, queued["steps"]) == (200, [{"text": "Replaced."}])
    status, queued = curl(
        "POST", control + "/script", {"steps": [{"text": "Appended."}], "faults": [{"kind": "error", "status": 529}]}
    )
    assert (status, queued) == (200, {"steps": [{"text": "Replaced."}, {"text": "Appended."}], "faults": 1})

    body = messages_body("Be brief.", [{"role": "user", "content": "Hi"}])
    status, overloaded = claude(scripted["base_url"], body)
    assert (status, overloaded["error"]["type"]) == (529, "overloaded_error")
    answers = [claude(scripted["base_url"], body)[1]["content"][0]["text"] for _ in range(3)]
    assert answers == ["Replaced.", "Appended.", "Done."]

    status, listed = curl("GET", control + "/requests")
    assert status == 200
    assert [r["path"] for r in listed["requests"]] == ["/v1/messages"] * 4  # control requests are not listed
    assert listed["requests"][0]["body"] == body
    assert listed["requests"][0]["headers"]["anthropic-version"] == "2023-06-01"

    status, refused = curl("POST", control + "/script", {"steps": [{"calls": [{"name": "f", "arguments": [1]}]}]})
    assert status == 400
    assert refused["error"]["message"] == "not a script: steps[0].calls[0].arguments: expected an object"
    status, _ = curl("GET", control + "/nothing")
    assert status == 404


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"steps": [{"thinking": 1}]}, "steps[0].thinking: expected a string or null"),
        ({"faults": [{"kind": "error"}]}, "faults[0].status: expected an HTTP error status (400 to 599)"),
        ({"faults": [{"kind": "hang", "seconds": 1}]}, "faults[0].seconds: not a member of a 'hang' fault"),
        ({"step": []}, "step: unknown member (expected steps, faults)"),
    ],
)
def test_a_script_file_that_is_not_a_script_exits_2(cli, tmp_path: Path, document: Any, message: str) -> None:
    path = tmp_path / "bad.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    ran = cli("emulate", "anthropic", "--script", str(path))
    assert ran.code == 2
    assert ran.err.strip() == f"thinkseal: {path}: not a script: {message}"


def test_a_missing_script_file_exits_2(cli, tmp_path: Path) -> None:
    ran = cli("emulate", "anthropic", "--script", str(tmp_path / "none.json"))
    assert ran.code == 2
    assert "no such file" in ran.err
