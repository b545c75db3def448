"""thinkseal.testing's emulators through their public interface, for every
provider id: a scripted ``Step`` read back by thinkseal, each ``Fault`` over a
real HTTP request, ``rotate_keys``, ``require_auth`` and the pytest fixture."""

from __future__ import annotations

import http.client
import json
import socket
import subprocess
import sys
import textwrap
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import pytest

import thinkseal
from thinkseal import Conversation, Tool, ToolMessage, UserMessage
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import EMULATOR_IDS, Emulator, Fault, Step, emulate

TOOL = Tool("lookup", "Look something up", {"type": "object", "properties": {"q": {"type": "integer"}}})
MODEL = "model-a"
# Credentials every provider takes (any non-empty value is accepted).
CREDENTIALS = {"x-api-key": "test-key", "authorization": "Bearer test-key", "x-goog-api-key": "test-key"}
# The providers whose replies carry sealed data (signatures, encrypted or opaque items).
SEALED = (
    "anthropic",
    "bedrock",
    "vertex-anthropic",
    "openrouter",
    "gemini",
    "vertex-gemini",
    "gemini-openai",
    "openai-responses",
    "mistral",
)


def conversation() -> Conversation:
    return Conversation([UserMessage("Look up 1.")], [TOOL])


def prepare(emu: Emulator, provider_id: str, conv: Conversation, **options: Any) -> thinkseal.PreparedRequest:
    return thinkseal.provider(provider_id).prepare(conv, model=MODEL, **{**emu.thinking_options, **options})


def post(
    url: str, content: bytes, headers: Mapping[str, str], *, timeout: float = 10
) -> tuple[int, Mapping[str, str], bytes]:
    request = urllib.request.Request(url, data=content, headers=dict(headers), method="POST")
    try:
        with urllib.request.urlopen(request, timeout=timeout) as answer:
            return answer.status, {k.lower(): v for k, v in answer.headers.items()}, answer.read()
    except urllib.error.HTTPError as err:
        return err.code, {k.lower(): v for k, v in err.headers.items()}, err.read()


def send(emu: Emulator, req: thinkseal.PreparedRequest, **kwargs: Any) -> tuple[int, Mapping[str, str], bytes]:
    headers = {"content-type": "application/json", **req.headers, **CREDENTIALS}
    return post(emu.base_url + req.path, req.content, headers, **kwargs)


@pytest.fixture(params=PROVIDER_IDS)
def provider_id(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


@pytest.fixture
def emu(provider_id: str) -> Iterator[Emulator]:
    with emulate(provider_id) as running:
        yield running


def test_the_registry_covers_the_provider_ids_exactly() -> None:
    assert len(set(EMULATOR_IDS)) == len(EMULATOR_IDS)
    assert set(EMULATOR_IDS) == set(PROVIDER_IDS)


def test_an_unknown_provider_id_is_refused() -> None:
    with pytest.raises(ValueError, match="no emulator"), emulate("nope"):
        pass


def test_importing_thinkseal_does_not_import_the_emulators() -> None:
    code = "import sys, thinkseal; sys.exit('thinkseal.testing' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


# -- a scripted step, read back by thinkseal ------------------------------------------------


def test_a_scripted_step_comes_back_with_its_thinking_and_its_call(provider_id: str, emu: Emulator) -> None:
    emu.script(Step(thinking="I should look it up.", calls=[("lookup", {"q": 1})]))
    req = prepare(emu, provider_id, conversation())
    status, _, raw = send(emu, req)
    assert status == 200, raw
    reply = req.receive(json.loads(raw))
    (call,) = reply.tool_calls
    assert (call.name, call.arguments) == ("lookup", {"q": 1})
    assert call.id
    if provider_id == "openai":  # OpenAI's chat completions return the reasoning's cost only
        assert not reply.thinking
    else:
        assert "I should look it up." in reply.thinking_text
    # The next request, with the tool result, is accepted; an empty queue answers "Done.".
    conv = conversation().append(reply, ToolMessage("one", call.id))
    status, _, raw = send(emu, prepare(emu, provider_id, conv))
    assert status == 200, raw
    assert prepare(emu, provider_id, conv).receive(json.loads(raw)).content == "Done."
    assert len(emu.requests) == 2
    assert emu.requests[0].raw == req.content
    assert emu.requests[0].body == req.body
    assert emu.requests[0].path.startswith(urlsplit(emu.base_url).path + req.path.split("?")[0])


def test_steps_answer_requests_in_order(provider_id: str, emu: Emulator) -> None:
    emu.script(Step(text="First."), Step(text="Second."))
    req = prepare(emu, provider_id, conversation())
    answers = []
    for _ in range(3):
        status, _, raw = send(emu, req)
        assert status == 200, raw
        answers.append(req.receive(json.loads(raw)).content)
    assert answers == ["First.", "Second.", "Done."]


# -- faults ----------------------------------------------------------------------------------


def _rate_limited(provider_id: str, headers: Mapping[str, str], body: Any) -> bool:
    """``body`` is the provider's own 429 body."""
    error = body.get("error") if isinstance(body, dict) else None
    if provider_id == "gemini-openai":  # Gemini's error, in a list
        return body == [
            {"error": {"code": 429, "message": body[0]["error"]["message"], "status": "RESOURCE_EXHAUSTED"}}
        ]
    if provider_id == "anthropic":
        return body["type"] == "error" and error["type"] == "rate_limit_error"
    if provider_id in ("gemini", "vertex-gemini", "vertex-anthropic"):
        return error == {"code": 429, "message": error["message"], "status": "RESOURCE_EXHAUSTED"}
    if provider_id == "bedrock":
        return headers.get("x-amzn-errortype") == "ThrottlingException" and set(body) == {"message"}
    if provider_id in ("openai", "deepseek", "openai-responses"):
        return error["code"] == "rate_limit_exceeded" and set(error) == {"message", "type", "param", "code"}
    if provider_id == "openrouter":
        return error["code"] == 429 and isinstance(error["message"], str)
    if provider_id == "zai":
        return error["code"] == "1302"
    if provider_id == "ollama":
        return set(body) == {"error"} and isinstance(body["error"], str)
    if provider_id == "mistral":
        return body["object"] == "error" and isinstance(body["message"], str)
    raise AssertionError(f"no expectation for {provider_id}")


def test_an_error_fault_answers_with_the_providers_error_body(provider_id: str, emu: Emulator) -> None:
    emu.fault(Fault.error(429, retry_after=7, times=2))
    req = prepare(emu, provider_id, conversation())
    for _ in range(2):
        status, headers, raw = send(emu, req)
        assert status == 429
        assert headers.get("retry-after") == "7"
        assert _rate_limited(provider_id, headers, json.loads(raw)), raw
    status, headers, raw = send(emu, req)  # the fault is spent: the provider logic answers
    assert status == 200, raw
    assert "retry-after" not in headers


def test_rejections_list_the_4xx_answers_in_order(provider_id: str, emu: Emulator) -> None:
    req = prepare(emu, provider_id, conversation())
    emu.fault(Fault.error(429))
    emu.fault(Fault.error(500))
    answers = [send(emu, req) for _ in range(3)]
    assert [status for status, _, _ in answers] == [429, 500, 200]
    (refused,) = emu.rejections
    assert (refused.request.raw, refused.status) == (emu.requests[0].raw, 429)
    assert refused.body == json.loads(answers[0][2])  # the body the client got
    emu.clear_requests()
    assert emu.rejections == []


@pytest.mark.parametrize(
    ("provider_id", "status", "expected"),
    [
        ("anthropic", 529, lambda h, b: b["error"]["type"] == "overloaded_error"),
        ("anthropic", 500, lambda h, b: b["error"]["type"] == "api_error"),
        ("gemini", 503, lambda h, b: b["error"]["status"] == "UNAVAILABLE"),
        ("bedrock", 500, lambda h, b: h["x-amzn-errortype"] == "InternalServerException"),
        ("openai", 500, lambda h, b: b["error"]["type"] == "server_error"),
    ],
)
def test_other_error_statuses(
    provider_id: str, status: int, expected: Callable[[Mapping[str, str], Any], bool], emu: Emulator
) -> None:
    emu.fault(Fault.error(status))
    got, headers, raw = send(emu, prepare(emu, provider_id, conversation()))
    assert got == status
    assert "retry-after" not in headers
    assert expected(headers, json.loads(raw)), raw


def test_a_malformed_fault_answers_200_with_a_body_that_is_not_json(provider_id: str, emu: Emulator) -> None:
    emu.fault(Fault.malformed())
    req = prepare(emu, provider_id, conversation())
    status, _, raw = send(emu, req)
    assert status == 200
    with pytest.raises(ValueError, match=r"Expecting|Unterminated|Invalid"):
        json.loads(raw)
    assert send(emu, req)[0] == 200


@pytest.mark.parametrize("provider_id", ["anthropic", "openai", "ollama", "gemini"])
def test_a_malformed_stream_has_an_event_whose_data_is_not_json(provider_id: str, emu: Emulator) -> None:
    emu.fault(Fault.malformed())
    status, _, raw = send(emu, prepare(emu, provider_id, conversation(), stream=True))
    assert status == 200
    lines = [line.removeprefix("data:").strip() for line in raw.decode().splitlines() if line.strip()]
    data = [line for line in lines if not line.startswith("event:")]
    assert data
    for item in data:
        with pytest.raises(ValueError, match=r"Expecting|Unterminated|Invalid"):
            json.loads(item)


def _raw_post(emu: Emulator, req: thinkseal.PreparedRequest) -> tuple[int, int | None, bytes]:
    """(status, declared length, bytes read before the connection closed)."""
    address = urlsplit(emu.base_url)
    connection = http.client.HTTPConnection(address.hostname or "", address.port, timeout=5)
    try:
        headers = {"content-type": "application/json", **req.headers, **CREDENTIALS}
        connection.request("POST", address.path + req.path, body=req.content, headers=headers)
        answer = connection.getresponse()
        declared = answer.getheader("content-length")
        try:
            data = answer.read()
        except http.client.IncompleteRead as cut:
            data = cut.partial
        return answer.status, None if declared is None else int(declared), data
    finally:
        connection.close()


def test_a_truncated_body_is_shorter_than_declared(provider_id: str, emu: Emulator) -> None:
    emu.fault(Fault.truncated())
    req = prepare(emu, provider_id, conversation())
    status, declared, data = _raw_post(emu, req)
    assert status == 200
    assert declared is not None
    assert 0 < len(data) < declared
    status, declared, data = _raw_post(emu, req)  # spent: the next answer is whole
    assert (status, len(data)) == (200, declared)


@pytest.mark.parametrize(("provider_id", "final"), [("anthropic", b"message_stop"), ("openrouter", b"[DONE]")])
def test_a_truncated_stream_ends_before_its_final_event(provider_id: str, final: bytes, emu: Emulator) -> None:
    req = prepare(emu, provider_id, conversation(), stream=True)
    status, _, whole = send(emu, req)
    assert status == 200
    assert final in whole
    emu.fault(Fault.truncated())
    status, _, cut = send(emu, req)
    assert status == 200
    assert final not in cut
    assert 0 < len(cut) < len(whole)


def test_a_slow_fault_answers_after_the_delay(provider_id: str, emu: Emulator) -> None:
    emu.fault(Fault.slow(0.4))
    req = prepare(emu, provider_id, conversation())
    started = time.monotonic()
    status, _, raw = send(emu, req)
    assert time.monotonic() - started >= 0.4
    assert status == 200, raw
    assert req.receive(json.loads(raw)).content == "Done."


@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_a_hang_times_out_on_the_client_and_stop_still_returns(provider_id: str) -> None:
    with emulate(provider_id) as emu:
        emu.fault(Fault.hang())
        req = prepare(emu, provider_id, conversation())
        with pytest.raises((TimeoutError, socket.timeout, urllib.error.URLError)):
            send(emu, req, timeout=0.3)
        started = time.monotonic()
        emu.stop()
        assert time.monotonic() - started < 2


def test_a_fault_must_happen_at_least_once() -> None:
    with emulate("anthropic") as emu, pytest.raises(ValueError, match="times"):
        emu.fault(Fault.slow(1, times=0))


# -- rotate_keys ------------------------------------------------------------------------------


def _invalid_signature(provider_id: str, body: Any) -> bool:
    text = json.dumps(body).lower()
    if provider_id == "openai-responses":
        return body["error"]["code"] == "invalid_encrypted_content" and "could not be verified" in text
    if provider_id == "gemini":
        return body["error"] == {"code": 400, "message": "Corrupted thought signature.", "status": "INVALID_ARGUMENT"}
    if provider_id == "gemini-openai":
        return body == [
            {"error": {"code": 400, "message": "Corrupted thought signature.", "status": "INVALID_ARGUMENT"}}
        ]
    if provider_id == "vertex-gemini":
        return body["error"]["status"] == "INVALID_ARGUMENT" and "thought signature is not valid" in text
    if provider_id in ("anthropic", "vertex-anthropic"):
        return body["error"]["type"] == "invalid_request_error" and "invalid `signature`" in text
    if provider_id == "bedrock":
        return "invalid `signature`" in body["message"].lower()
    if provider_id == "openrouter":
        return "invalid `signature`" in body["error"]["message"].lower()
    if provider_id == "mistral":
        return body["object"] == "error" and "invalid signature" in text
    raise AssertionError(f"no expectation for {provider_id}")


@pytest.mark.parametrize("provider_id", SEALED)
def test_rotate_keys_makes_a_replay_of_sealed_thinking_fail(provider_id: str, emu: Emulator) -> None:
    emu.script(Step(thinking="I should look it up.", calls=[("lookup", {"q": 1})]))
    first = prepare(emu, provider_id, conversation())
    status, _, raw = send(emu, first)
    assert status == 200, raw
    reply = first.receive(json.loads(raw))
    assert reply.has_sealed_thinking
    conv = conversation().append(reply, ToolMessage("one", reply.tool_calls[0].id))
    replay = prepare(emu, provider_id, conv)
    assert [entry.kept for entry in replay.report] == [True]
    status, _, raw = send(emu, replay)
    assert status == 200, raw  # before the rotation, the sealed thinking verifies
    emu.rotate_keys()
    status, _, raw = send(emu, replay)
    assert status == 400, raw
    assert _invalid_signature(provider_id, json.loads(raw)), raw


# -- require_auth ------------------------------------------------------------------------------


def _auth_error(provider_id: str, body: Any) -> bool:
    error = body.get("error") if isinstance(body, dict) else None
    if provider_id == "gemini-openai":
        return body[0]["error"]["code"] == 401 and body[0]["error"]["status"] == "UNAUTHENTICATED"
    if provider_id == "anthropic":
        return error["type"] == "authentication_error"
    if provider_id in ("gemini", "vertex-gemini", "vertex-anthropic"):
        return error["code"] == 401 and error["status"] == "UNAUTHENTICATED"
    if provider_id == "bedrock":
        return set(body) == {"message"}
    if provider_id in ("openai", "deepseek", "openai-responses"):
        return error["code"] == "invalid_api_key"
    if provider_id in ("openrouter", "zai"):
        return isinstance(error["message"], str)
    if provider_id == "mistral":
        return body["message"] == "Unauthorized"
    raise AssertionError(f"no expectation for {provider_id}")


def test_require_auth_answers_401_without_the_providers_header(provider_id: str, emu: Emulator) -> None:
    req = prepare(emu, provider_id, conversation())
    headers = {"content-type": "application/json", **req.headers}
    status, _, raw = post(emu.base_url + req.path, req.content, headers)
    if provider_id == "ollama":  # Ollama takes no credentials
        assert status == 200, raw
        return
    assert status == 401, raw
    assert _auth_error(provider_id, json.loads(raw)), raw
    assert send(emu, req)[0] == 200


def test_without_require_auth_no_header_is_needed(provider_id: str) -> None:
    with emulate(provider_id, require_auth=False) as emu:
        req = prepare(emu, provider_id, conversation())
        status, _, raw = post(emu.base_url + req.path, req.content, {"content-type": "application/json", **req.headers})
        assert status == 200, raw


def test_a_given_port_is_used() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    with emulate("ollama", port=port) as emu:
        assert emu.base_url == f"http://127.0.0.1:{port}"


# -- the pytest fixture ---------------------------------------------------------------------------


def test_the_fixture_starts_an_emulator_and_stops_it(thinkseal_emulator: Any) -> None:
    emu = thinkseal_emulator("anthropic")
    assert emu.require_auth
    req = prepare(emu, "anthropic", conversation())
    assert send(emu, req)[0] == 200
    other = thinkseal_emulator("gemini", require_auth=False)
    assert other.base_url != emu.base_url


def test_the_plugin_stops_its_emulators_at_teardown(tmp_path: Any) -> None:
    # A separate pytest run, which finds the fixture through the installed pytest11 entry point.
    (tmp_path / "test_plugin.py").write_text(
        textwrap.dedent(
            """
        import urllib.request, urllib.error
        import pytest

        URLS = []

        def test_serve(thinkseal_emulator):
            emu = thinkseal_emulator("ollama")
            URLS.append(emu.base_url)
            body = b'{"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": false}'
            with urllib.request.urlopen(emu.base_url + "/api/chat", data=body, timeout=5) as answer:
                assert answer.status == 200

        def test_stopped():
            with pytest.raises(urllib.error.URLError):
                urllib.request.urlopen(URLS[0] + "/api/chat", data=b"{}", timeout=2)
        """
        )
    )
    run = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider", str(tmp_path)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert "2 passed" in run.stdout


def test_the_plugin_imports_no_emulator() -> None:
    code = (
        "import sys, thinkseal.testing.pytest_plugin; "
        "sys.exit(any(m.startswith('thinkseal.testing.') and m != 'thinkseal.testing.pytest_plugin' "
        "for m in sys.modules))"
    )
    assert subprocess.run([sys.executable, "-c", code], check=False).returncode == 0


def test_the_emulators_work_without_any_provider_sdk() -> None:
    # A process where importing an SDK (or pydantic) fails, as if none were installed.
    code = textwrap.dedent(
        """
        import sys
        for name in ("openai", "mistralai", "pydantic", "pydantic_core", "anthropic", "boto3", "botocore",
                     "ollama", "google", "httpx"):
            sys.modules[name] = None
        import json, urllib.request
        import thinkseal
        from thinkseal import Conversation, UserMessage
        from thinkseal.testing import EMULATOR_IDS, Step, emulate

        for provider_id in EMULATOR_IDS:
            with emulate(provider_id, require_auth=False) as emu:
                emu.script(Step(text="Hello."))
                conv = Conversation([UserMessage("Hi")])
                req = thinkseal.provider(provider_id).prepare(conv, model="m", **emu.options)
                headers = {**req.headers, "content-type": "application/json"}
                request = urllib.request.Request(emu.base_url + req.path, data=req.content, headers=headers)
                with urllib.request.urlopen(request, timeout=10) as answer:
                    assert req.receive(json.loads(answer.read())).content == "Hello.", provider_id
        assert not any(sys.modules.get(name) for name in ("openai", "mistralai", "pydantic"))
        print("ok", len(EMULATOR_IDS))
        """
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["ok", str(len(PROVIDER_IDS))]
