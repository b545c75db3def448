"""``thinkseal emulate``: the emulator as a foreground process, as another
language's test suite would run it."""

from __future__ import annotations

import json
import signal
import subprocess
import urllib.error
import urllib.request
from typing import Any

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
