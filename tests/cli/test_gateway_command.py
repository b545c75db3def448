"""``thinkseal gateway``: the gateway as a process, started from a
configuration file on a free port, answering through to an emulator, and
stopped by SIGTERM or Ctrl-C with exit status 0."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from pathlib import Path

import anthropic
import pytest

from thinkseal.cli import main
from thinkseal.testing import Step, emulate

THINKING = {"type": "enabled", "budget_tokens": 1024}


def start(config: Path) -> tuple[subprocess.Popen[str], str]:
    """The command running on a free port, and its base URL (its first line)."""
    process = subprocess.Popen(
        [sys.executable, "-m", "thinkseal", "gateway", "--config", str(config), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None
    url = process.stdout.readline().strip()
    if not url:
        process.kill()
        raise AssertionError(f"the gateway did not start: {process.communicate(timeout=10)[1]}")
    return process, url


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_serves_through_to_the_upstream_and_stops_cleanly(tmp_path: Path, stop: signal.Signals) -> None:
    with emulate("anthropic") as emu:
        config = tmp_path / "gateway.toml"
        config.write_text(
            f'[gateway]\nledger = "sqlite:///{tmp_path / "ledger.db"}"\n\n'
            f'[[routes]]\nprefix = "/anthropic"\nprovider = "anthropic"\nupstream = "{emu.base_url}"\n'
        )
        process, url = start(config)
        try:
            assert url.startswith("http://127.0.0.1:")
            emu.script(Step(thinking="Think.", text="Hello."))
            with anthropic.Anthropic(base_url=url + "/anthropic", api_key="k") as client:
                raw = client.messages.with_raw_response.create(
                    model="claude-sonnet-4-5",
                    max_tokens=2048,
                    thinking=THINKING,
                    messages=[{"role": "user", "content": "hi"}],
                )
            assert raw.headers["thinkseal-kept"] == "0"
            assert raw.headers["thinkseal-unsealed"] == "0"
            assert [b.type for b in raw.parse().content] == ["thinking", "text"]
            assert emu.requests[-1].path == "/v1/messages"
        finally:
            process.send_signal(stop)
            _, err = process.communicate(timeout=15)
    assert process.returncode == 0, err
    assert "Traceback" not in err
    logged = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    assert [(entry["route"], entry["status"], entry["kept"]) for entry in logged] == [("/anthropic", 200, 0)]
    assert "hi" not in {str(v) for entry in logged for v in entry.values()}  # no content in the logs


def test_a_bad_configuration_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    config = tmp_path / "gateway.json"
    config.write_text(json.dumps({"routes": [{"prefix": "/x", "provider": "anthropic", "upstream": "ftp://h"}]}))
    assert main(["gateway", "--config", str(config), "--port", "0"]) == 2
    assert capsys.readouterr().err.startswith("thinkseal: routes[0].upstream: expected an http(s) URL")
