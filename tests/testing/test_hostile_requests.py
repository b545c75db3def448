"""Every emulator (``thinkseal.testing.EMULATOR_IDS``) against requests a real
provider answers with a 4xx: a body that is not JSON, nested too deeply, too
long, or badly framed; and a body sent ``Transfer-Encoding: chunked``, which
it reads like any other. Over raw ``http.client`` connections, so a dropped
connection or a hang shows; a connection that got an error is used again
where HTTP lets it."""

from __future__ import annotations

import http.client
import json
import random
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import pytest

import thinkseal
from thinkseal import Conversation, Tool, UserMessage
from thinkseal.testing import EMULATOR_IDS, Emulator, emulate

CREDENTIALS = {"x-api-key": "test-key", "authorization": "Bearer test-key", "x-goog-api-key": "test-key"}

# The quoted invalid-JSON answers (docs/testing.md says where each comes from).
OPENAI_INVALID_JSON = "We could not parse the JSON body of your request. (HINT: This likely means"
QUOTED_INVALID_JSON: dict[str, tuple[int, str]] = {
    "anthropic": (400, "The request body is not valid JSON: unexpected end of data: line 1 column 11 (char 10)"),
    "vertex-anthropic": (400, "The request body is not valid JSON: unexpected end of data: line 1 column 11"),
    "openai": (400, OPENAI_INVALID_JSON),
    "openai-responses": (400, OPENAI_INVALID_JSON),
    "gemini": (400, "Invalid JSON payload received. Unexpected end of string."),
    "vertex-gemini": (400, "Invalid JSON payload received. Unexpected end of string."),
    "ollama": (400, "unexpected EOF"),
    "deepseek": (400, "Failed to parse the request body as JSON: "),
    "bedrock": (400, "Malformed input request: "),
    "mistral": (422, "json_invalid"),
}


@pytest.fixture(params=EMULATOR_IDS)
def provider_id(request: pytest.FixtureRequest) -> str:
    value: str = request.param
    return value


@pytest.fixture
def emu(provider_id: str) -> Iterator[Emulator]:
    with emulate(provider_id) as running:
        yield running


def prepared(emu: Emulator, provider_id: str) -> thinkseal.PreparedRequest:
    conv = Conversation([UserMessage("Hi")])
    return thinkseal.provider(provider_id).prepare(conv, model="model-a", **emu.options)


def target(emu: Emulator, req: thinkseal.PreparedRequest) -> tuple[str, dict[str, str]]:
    """The request's path on the emulator and the headers to send it with."""
    return urlsplit(emu.base_url).path + req.path, {"content-type": "application/json", **req.headers, **CREDENTIALS}


def connect(emu: Emulator) -> http.client.HTTPConnection:
    return http.client.HTTPConnection(*urlsplit(emu.server_url).netloc.split(":"), timeout=10)


def exchange(
    connection: http.client.HTTPConnection, path: str, body: bytes, headers: Mapping[str, str], **kwargs: Any
) -> tuple[int, Mapping[str, str], bytes]:
    connection.request("POST", path, body=body, headers=dict(headers), **kwargs)
    answer = connection.getresponse()
    return answer.status, {k.lower(): v for k, v in answer.getheaders()}, answer.read()


def error_text(raw: bytes) -> str:
    """Every string in a JSON error body, joined (each provider nests its message its own way)."""
    found: list[str] = []
    stack = [json.loads(raw)]
    while stack:
        node = stack.pop()
        if isinstance(node, str):
            found.append(node)
        elif isinstance(node, dict):
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return " | ".join(found)


def assert_still_serving(
    connection: http.client.HTTPConnection, path: str, req: thinkseal.PreparedRequest, headers: Mapping[str, str]
) -> None:
    """The same connection carries a valid request next, and it is answered."""
    status, _, raw = exchange(connection, path, req.content, headers)
    assert status == 200, raw


# -- a body that is not JSON ----------------------------------------------------------


def test_a_body_that_is_not_json_gets_the_providers_4xx(provider_id: str, emu: Emulator) -> None:
    req = prepared(emu, provider_id)
    path, headers = target(emu, req)
    connection = connect(emu)
    status, answer_headers, raw = exchange(connection, path, b'{"model": ', headers)
    assert 400 <= status < 500, (status, raw)
    assert "emulator error" not in raw.decode()
    assert answer_headers["content-type"].startswith("application/json")
    if provider_id in QUOTED_INVALID_JSON:
        expected_status, expected_text = QUOTED_INVALID_JSON[provider_id]
        assert status == expected_status
        assert expected_text in error_text(raw), raw
    assert_still_serving(connection, path, req, headers)


@pytest.mark.parametrize(
    "body",
    [b"", b"\xff\xfe{}", b'{"a": NaN}', b"[1, 2", b'{"model": "m"} trailing', b'{"s": "\\ud800"'],
    ids=["empty", "not-utf8", "nan", "cut", "trailing", "lone-surrogate"],
)
def test_other_bodies_that_are_not_json(provider_id: str, emu: Emulator, body: bytes) -> None:
    req = prepared(emu, provider_id)
    path, headers = target(emu, req)
    connection = connect(emu)
    status, _, raw = exchange(connection, path, body, headers)
    assert 400 <= status < 500, (status, raw)
    json.loads(raw)
    assert_still_serving(connection, path, req, headers)


# -- nesting --------------------------------------------------------------------------


@pytest.mark.parametrize("depth", [200, 100_000])
def test_a_deeply_nested_body_gets_a_4xx_not_a_dropped_connection(provider_id: str, emu: Emulator, depth: int) -> None:
    req = prepared(emu, provider_id)
    path, headers = target(emu, req)
    body = dict(req.body)
    body["metadata"] = "@"
    deep = json.dumps(body).replace('"@"', "[" * depth + "]" * depth).encode()
    connection = connect(emu)
    status, _, raw = exchange(connection, path, deep, headers)
    assert 400 <= status < 500, (status, raw[:300])
    assert "emulator error" not in raw.decode()
    assert_still_serving(connection, path, req, headers)


def test_nesting_up_to_the_bound_is_read(provider_id: str, emu: Emulator) -> None:
    req = prepared(emu, provider_id)
    path, headers = target(emu, req)
    emu.max_depth = 3
    status, _, raw = exchange(connect(emu), path, b'{"a": [[1]]}', headers)
    assert "nested deeper" not in raw.decode()  # read, and refused for what it says, if at all
    status, _, raw = exchange(connect(emu), path, b'{"a": [[[1]]]}', headers)
    assert 400 <= status < 500, raw


# -- length ---------------------------------------------------------------------------


def test_a_body_over_the_limit_gets_a_4xx_and_the_connection_stays_usable(provider_id: str, emu: Emulator) -> None:
    req = prepared(emu, provider_id)
    path, headers = target(emu, req)
    emu.max_body_bytes = len(req.content)
    connection = connect(emu)
    status, _, raw = exchange(connection, path, req.content + b" " * 4096, headers)
    assert status in (400, 413), (status, raw)
    assert error_text(raw)
    assert_still_serving(connection, path, req, headers)


def test_the_default_bound_is_32_mib() -> None:
    assert Emulator.max_body_bytes == 32 * 1024 * 1024


def test_a_body_over_the_limit_sent_chunked_is_refused_too(emu: Emulator, provider_id: str) -> None:
    req = prepared(emu, provider_id)
    path, headers = target(emu, req)
    emu.max_body_bytes = 100
    connection = connect(emu)
    pieces = iter([b" " * 80, b" " * 80, req.content])
    status, _, raw = exchange(connection, path, pieces, headers, encode_chunked=True)  # type: ignore[arg-type]
    assert status in (400, 413), (status, raw)
    emu.max_body_bytes = 1 << 20
    assert_still_serving(connection, path, req, headers)


# -- framing --------------------------------------------------------------------------


def test_a_chunked_body_is_read_whole(provider_id: str, emu: Emulator) -> None:
    req = prepared(emu, provider_id)
    path, headers = target(emu, req)
    cut = len(req.content) // 3
    pieces = iter([req.content[:cut], req.content[cut : 2 * cut], req.content[2 * cut :]])
    connection = connect(emu)
    status, _, raw = exchange(connection, path, pieces, headers, encode_chunked=True)  # type: ignore[arg-type]
    assert status == 200, raw
    assert emu.requests[-1].raw == req.content
    assert emu.requests[-1].body == req.body
    assert "content-length" not in emu.requests[-1].headers
    assert_still_serving(connection, path, req, headers)


def raw_exchange(emu: Emulator, data: bytes) -> bytes:
    """``data`` written on a new socket; everything read back until the server closes."""
    host, port = urlsplit(emu.server_url).netloc.split(":")
    with socket.create_connection((host, int(port)), timeout=10) as sock:
        sock.sendall(data)
        received = b""
        while chunk := sock.recv(65536):
            received += chunk
    return received


@pytest.mark.parametrize(
    "framing",
    [
        b"Content-Length: ten\r\n\r\n{}",
        b"Transfer-Encoding: chunked\r\n\r\nzz\r\n{}\r\n0\r\n\r\n",
        b"Transfer-Encoding: chunked\r\n\r\n2\r\n{}XX0\r\n\r\n",
    ],
    ids=["bad-length", "bad-chunk-size", "chunk-without-crlf"],
)
def test_a_body_that_cannot_be_delimited_gets_a_400_and_a_close(
    provider_id: str, emu: Emulator, framing: bytes
) -> None:
    req = prepared(emu, provider_id)
    path, headers = target(emu, req)
    head = f"POST {path} HTTP/1.1\r\nHost: x\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    received = raw_exchange(emu, head.encode() + framing)
    status_line, _, rest = received.partition(b"\r\n")
    assert status_line.startswith(b"HTTP/1.1 400"), received[:200]
    assert b"connection: close" in rest.lower()
    json.loads(rest.split(b"\r\n\r\n", 1)[1])


# -- concurrent first requests, each emulator's SDK imported for the first time ----------


def test_concurrent_first_requests_in_a_fresh_process_are_all_answered() -> None:
    # Each run is a new process, so every SDK import really is the first;
    # three runs, since an import race does not lose every time.
    code = textwrap.dedent(
        """
        import json, sys, threading, urllib.error, urllib.request
        import thinkseal
        from thinkseal import Conversation, Tool, UserMessage
        from thinkseal.testing import EMULATOR_IDS, emulator

        running = [emulator(p, require_auth=False).start() for p in EMULATOR_IDS]
        jobs = []
        for emu in running:
            req = thinkseal.provider(emu.provider).prepare(
                Conversation([UserMessage("Hi")]), model="m", **emu.options
            )
            headers = {**req.headers, "content-type": "application/json"}
            jobs += [(emu.base_url + req.path, req.content, headers)] * 8
        answers = []
        start = threading.Barrier(len(jobs))

        def send(url, body, headers):
            start.wait()
            request = urllib.request.Request(url, data=body, headers=headers)
            try:
                with urllib.request.urlopen(request, timeout=60) as answer:
                    answers.append(answer.status)
            except urllib.error.HTTPError as err:
                answers.append((err.code, err.read()[:200].decode()))
            except OSError as err:
                answers.append(repr(err))

        threads = [threading.Thread(target=send, args=job) for job in jobs]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        for emu in running:
            emu.stop()
        print(json.dumps([a for a in answers if a != 200][:3]), answers.count(200), len(jobs))
        """
    )
    for _ in range(3):
        run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False, timeout=300)
        assert run.returncode == 0, run.stderr
        failures, answered, sent = run.stdout.split(" ", 1)[0], *run.stdout.split()[-2:]
        assert failures == "[]", run.stdout
        assert answered == sent


# -- JSON of the wrong shape -----------------------------------------------------------------

ODD_VALUES: list[Any] = [None, 1, -1, 0.5, "", "x", [], {}, [1], {"a": 1}, True, [None], [{}], [{"type": "text"}]]


def _paths(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[Any, ...]]:
    yield path
    children = value.items() if isinstance(value, dict) else enumerate(value) if isinstance(value, list) else ()
    for key, child in children:
        yield from _paths(child, (*path, key))


def _child(node: Any, key: Any) -> Any:
    if isinstance(node, dict):
        return node.get(key)
    if isinstance(node, list) and isinstance(key, int) and key < len(node):
        return node[key]
    return None


def _mutated(body: Any, rng: random.Random) -> Any:
    """``body`` with one to three members replaced by a value of another type, or removed."""
    copy = json.loads(json.dumps(body))
    paths = [p for p in _paths(copy) if p]
    for _ in range(rng.randint(1, 3)):
        path = rng.choice(paths)
        node = copy
        for key in path[:-1]:
            node = _child(node, key)
        if isinstance(node, dict) and rng.random() < 0.2:
            node.pop(path[-1], None)
        elif isinstance(node, dict) or (isinstance(node, list) and isinstance(path[-1], int) and path[-1] < len(node)):
            node[path[-1]] = json.loads(json.dumps(rng.choice(ODD_VALUES)))
    return copy


def test_json_of_the_wrong_shape_gets_a_4xx_never_a_5xx(provider_id: str, emu: Emulator) -> None:
    req = thinkseal.provider(provider_id).prepare(
        Conversation([UserMessage("Hi")], [Tool("lookup", "Look", {"type": "object"})]),
        model="model-a",
        **emu.thinking_options,
    )
    path, headers = target(emu, req)
    rng = random.Random(f"{provider_id}/shapes")
    connection = connect(emu)
    answered = []
    for _ in range(60):
        body = _mutated(req.body, rng)
        status, _, raw = exchange(connection, path, json.dumps(body).encode(), headers)
        assert status < 500, (body, raw[:300])
        answered.append(status)
    assert any(400 <= s < 500 for s in answered)  # the mutations were refused, not all ignored
