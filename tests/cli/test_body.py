"""``thinkseal body``: the request the adapter would send, as text or JSON."""

from __future__ import annotations

import json
from pathlib import Path

from .conftest import THINKING

EXAMPLE = str(Path(__file__).parents[2] / "python" / "thinkseal" / "examples" / "weather.json")


def test_json_has_method_path_headers_and_body(cli) -> None:
    ran = cli("body", EXAMPLE, "--target", "anthropic:claude-sonnet-4-5", "--json")
    assert ran.code == 0, ran.err
    request = json.loads(ran.out)
    assert request["method"] == "POST"
    assert request["path"] == "/v1/messages"
    assert request["headers"]["anthropic-version"] == "2023-06-01"
    assert request["body"]["model"] == "claude-sonnet-4-5"
    assert request["body"]["max_tokens"] == 4096
    assert "SignatureOne" in json.dumps(request["body"])
    assert "stream" not in request["body"]


def test_text_is_request_line_headers_then_pretty_body(cli) -> None:
    ran = cli("body", EXAMPLE, "--target", "anthropic:claude-sonnet-4-5", "--option", "max_tokens=100")
    assert ran.code == 0
    head, _, body = ran.out.partition("\n\n")
    assert head.splitlines() == [
        "POST /v1/messages",
        "anthropic-version: 2023-06-01",
        "content-type: application/json",
    ]
    assert body.startswith("{\n  ")
    assert json.loads(body)["max_tokens"] == 100


def test_stream_and_a_foreign_target(cli) -> None:
    streamed = json.loads(cli("body", EXAMPLE, "--target", "anthropic:claude-sonnet-4-5", "--stream", "--json").out)
    assert streamed["body"]["stream"] is True
    foreign = json.loads(cli("body", EXAMPLE, "--target", "deepseek:deepseek-chat", "--json").out)
    assert foreign["path"] == "/chat/completions"
    assert "Signature" not in json.dumps(foreign["body"])
    assert "I need both forecasts first" in json.dumps(foreign["body"])


def test_options_go_into_the_request(cli) -> None:
    target = "vertex-anthropic:claude-sonnet-4-5"
    missing = cli("body", EXAMPLE, "--target", target)
    assert missing.code == 2
    assert "project" in missing.err
    done = cli("body", EXAMPLE, "--target", target, "--json", "--option", "project=p1", "--option", "region=us-east5")
    assert done.code == 0, done.err
    request = json.loads(done.out)
    assert "/projects/p1/locations/us-east5/" in request["path"]
    assert request["body"]["anthropic_version"] == "vertex-2023-10-16"


def test_a_refused_request_exits_1(cli, rejected_file: Path, loop_file: Path) -> None:
    ran = cli("body", str(rejected_file), "--target", "anthropic:claude-sonnet-4-5", "--option", THINKING)
    assert ran.code == 1
    assert ran.out == ""
    assert ran.err.startswith("thinkseal: the next request would be rejected: messages[2]:")
    fine = cli("body", str(loop_file), "--target", "anthropic:claude-sonnet-4-5", "--option", THINKING, "--json")
    assert fine.code == 0
    assert json.loads(fine.out)["body"]["thinking"] == {"type": "enabled", "budget_tokens": 1024}


def test_usage_errors(cli, latin1_file: Path) -> None:
    assert cli("body", EXAMPLE).code == 2  # --target is required
    assert cli("body", "--target", "anthropic:claude-sonnet-4-5").code == 2  # FILE is required
    bad = cli("body", str(latin1_file), "--target", "anthropic:claude-sonnet-4-5")
    assert (bad.code, bad.err) == (2, f"thinkseal: {latin1_file}: not UTF-8 text (byte 0xe9 at offset 46)\n")
    unknown = cli("body", EXAMPLE, "--target", "nobody:model")
    assert unknown.code == 2
    assert unknown.err.startswith("thinkseal: ")
