"""The client's parts without a server: error bodies of every shape, the
``retry-after`` forms, stream framing split at every byte, credentials and
base URLs."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from email.utils import format_datetime

import pytest
from botocore.credentials import Credentials as AwsCredentials  # type: ignore[import-untyped]
from google.oauth2.credentials import Credentials as GoogleCredentials

import thinkseal
from thinkseal import Conversation, ProviderError, ResponseError, UserMessage, ValidationError
from thinkseal.client._errors import provider_error, retry_after
from thinkseal.client._events import decoder
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing.bedrock import eventstream_frame


@pytest.mark.parametrize(
    ("body", "headers", "kind", "message"),
    [
        (
            {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}},
            {},
            "overloaded_error",
            "Overloaded",
        ),
        (
            {"error": {"message": "Rate limit", "type": "requests", "param": None, "code": "rate_limit_exceeded"}},
            {},
            "requests",
            "Rate limit",
        ),
        (
            {"error": {"code": 429, "message": "Quota", "status": "RESOURCE_EXHAUSTED"}},
            {},
            "RESOURCE_EXHAUSTED",
            "Quota",
        ),
        ([{"error": {"code": 400, "message": "Bad", "status": "INVALID_ARGUMENT"}}], {}, "INVALID_ARGUMENT", "Bad"),
        (
            {"object": "error", "message": "Bad key", "type": "invalid_request_error"},
            {},
            "invalid_request_error",
            "Bad key",
        ),
        ({"detail": [{"loc": ["body"], "msg": "field required"}]}, {}, None, "field required"),
        (
            {"message": "Too many tokens"},
            {"x-amzn-errortype": "ThrottlingException:http://internal"},
            "ThrottlingException",
            "Too many tokens",
        ),
        ({"error": "model 'x' not found"}, {}, None, "model 'x' not found"),
        ({"error": {"code": 502, "message": "Upstream"}}, {}, "502", "Upstream"),
    ],
)
def test_every_error_body_shape_is_read(body: object, headers: dict[str, str], kind: str | None, message: str) -> None:
    error = provider_error("p", 400, headers, json.dumps(body).encode())
    assert error.type == kind
    assert message in error.message
    assert error.status == 400


def test_an_unreadable_error_body_keeps_its_text_and_the_request_id() -> None:
    error = provider_error("p", 502, {"x-request-id": "req_9"}, b"<html>Bad gateway</html>")
    assert error.message == "<html>Bad gateway</html>"
    assert error.request_id == "req_9"
    assert "req_9" in str(error)
    assert provider_error("p", 500, {}, b"").message == "(empty body)"
    assert provider_error("p", 500, {}, b"\xff\xfe" * 2000).message  # not UTF-8, very long: still an error
    deep = b"[" * 100_000 + b"]" * 100_000
    assert provider_error("p", 500, {}, deep).status == 500


def test_retry_after_forms() -> None:
    assert retry_after({"retry-after": "3"}) == 3.0
    assert retry_after({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after({"retry-after": "soon"}) is None
    assert retry_after({}) is None
    assert retry_after({"retry-after": "-4"}) is None  # delay-seconds has no sign
    later = format_datetime(datetime.now(UTC) + timedelta(seconds=30), usegmt=True)
    assert 25 < (retry_after({"retry-after": later}) or 0) <= 30


SSE = (
    b": keep-alive\r\n\r\n"
    b'event: message_start\r\ndata: {"type": "a"}\r\n\r\n'
    b'data: {"type":\ndata: "b"}\n\n'
    b"data: [DONE]\n\n"
)


@pytest.mark.parametrize("cut", range(len(SSE) + 1))
def test_sse_is_the_same_wherever_the_bytes_are_split(cut: int) -> None:
    frames = decoder("sse", "p")
    events = frames.feed(SSE[:cut]) + frames.feed(SSE[cut:]) + frames.close()
    assert events == [{"type": "a"}, {"type": "b"}]
    assert frames.done


def test_sse_without_a_final_blank_line_still_delivers_a_whole_event() -> None:
    frames = decoder("sse", "p")
    assert frames.feed(b'data: {"x": 1}') == []
    assert frames.close() == [{"x": 1}]


def test_stream_events_that_are_not_json_objects_name_their_position() -> None:
    frames = decoder("sse", "p")
    frames.feed(b'data: {"ok": 1}\n\n')
    with pytest.raises(ResponseError, match="stream event 2"):
        frames.feed(b"data: {not json\n\n")
    with pytest.raises(ResponseError, match="JSON object"):
        decoder("ndjson", "p").feed(b"[1, 2]\n")


@pytest.mark.parametrize(
    ("stream_format", "raw"),
    [
        ("sse", b'event: error\ndata: {"type": "error", "error": {"type": "overloaded_error", "message": "Busy"}}\n\n'),
        ("sse", b'data: {"error": {"message": "Busy", "type": "server_error"}}\n\n'),
        ("ndjson", b'{"error": "Busy"}\n'),
    ],
)
def test_error_events_in_a_stream_raise_provider_error(stream_format: str, raw: bytes) -> None:
    with pytest.raises(ProviderError, match="Busy"):
        decoder(stream_format, "p").feed(raw)


def test_ndjson_split_anywhere() -> None:
    raw = b'{"a": 1}\n{"b": 2}\r\n{"c": 3}'
    for cut in range(len(raw) + 1):
        frames = decoder("ndjson", "p")
        assert frames.feed(raw[:cut]) + frames.feed(raw[cut:]) + frames.close() == [{"a": 1}, {"b": 2}, {"c": 3}]


def test_aws_event_stream_frames_split_anywhere_and_a_cut_frame_is_an_error() -> None:
    raw = eventstream_frame("messageStart", {"role": "assistant"}) + eventstream_frame(
        "messageStop", {"stopReason": "x"}
    )
    for cut in range(0, len(raw) + 1, 7):
        frames = decoder("aws-eventstream", "bedrock")
        events = frames.feed(raw[:cut]) + frames.feed(raw[cut:]) + frames.close()
        assert events == [{"messageStart": {"role": "assistant"}}, {"messageStop": {"stopReason": "x"}}]
    frames = decoder("aws-eventstream", "bedrock")
    frames.feed(raw[:-5])
    with pytest.raises(ResponseError, match="inside an event frame"):
        frames.close()


# -- credentials and addresses ----------------------------------------------------------


def test_keys_come_from_the_usual_variables(monkeypatch: pytest.MonkeyPatch) -> None:
    for provider in PROVIDER_IDS:
        for name in thinkseal.provider(provider).connection.key_env:
            monkeypatch.delenv(name, raising=False)
    with pytest.raises(ValidationError, match="ANTHROPIC_API_KEY"):
        thinkseal.Client("anthropic")
    monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-env")
    headers = _headers(thinkseal.Client("anthropic"), "anthropic", max_tokens=10)
    assert headers["x-api-key"] == "sk-env"
    assert (
        _headers(thinkseal.Client("anthropic", api_key="sk-arg"), "anthropic", max_tokens=10)["x-api-key"] == "sk-arg"
    )
    monkeypatch.setenv("GOOGLE_API_KEY", "g-key")
    assert _headers(thinkseal.Client("gemini"), "gemini")["x-goog-api-key"] == "g-key"
    monkeypatch.setenv("OPENAI_API_KEY", "o-key")
    assert _headers(thinkseal.Client("openai"), "openai")["authorization"] == "Bearer o-key"
    assert "authorization" not in _headers(thinkseal.Client("ollama"), "ollama")  # local: no key needed


def test_a_key_never_shows_in_repr() -> None:
    assert "sk-secret" not in repr(thinkseal.Client("anthropic", api_key="sk-secret"))


def test_base_urls(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OLLAMA_HOST", "gpu-box:11434")
    assert _url(thinkseal.Client("ollama"), "ollama") == "http://gpu-box:11434/api/chat"
    monkeypatch.setenv("ANTHROPIC_BASE_URL", "https://proxy.example/")
    assert _url(thinkseal.Client("anthropic", api_key="k"), "anthropic", max_tokens=1) == (
        "https://proxy.example/v1/messages"
    )
    client = thinkseal.Client("bedrock", api_key="bedrock-api-key", region="eu-west-1")
    assert _url(client, "bedrock") == "https://bedrock-runtime.eu-west-1.amazonaws.com/model/m/converse"
    vertex = thinkseal.Client("vertex-gemini", api_key="token")
    assert _url(vertex, "vertex-gemini", project="p", location="europe-west4").startswith(
        "https://europe-west4-aiplatform.googleapis.com/v1/projects/p/locations/europe-west4/"
    )
    assert _url(vertex, "vertex-gemini", project="p", location="global").startswith(
        "https://aiplatform.googleapis.com/v1/projects/p/locations/global/"
    )


def test_bedrock_is_signed_with_sigv4_over_the_exact_body() -> None:
    client = thinkseal.Client("bedrock", credentials=AwsCredentials("AKIDEXAMPLE", "secret"), region="us-east-1")
    exchange = client._exchange
    req = thinkseal.provider("bedrock").prepare(Conversation([UserMessage("hi")]), model="m")
    headers = exchange.request_headers(req, exchange.url(req))
    assert headers["authorization"].startswith("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/")
    assert "/us-east-1/bedrock/aws4_request" in headers["authorization"]
    assert exchange.content(req) == req.content  # the signed bytes are the ones sent
    other_req = thinkseal.provider("bedrock").prepare(Conversation([UserMessage("hi!")]), model="m")
    other = exchange.request_headers(other_req, exchange.url(other_req))
    assert other["authorization"].split("Signature=")[1] != headers["authorization"].split("Signature=")[1]


def test_vertex_uses_google_auth_credentials() -> None:
    client = thinkseal.Client("vertex-anthropic", credentials=GoogleCredentials(token="ya29.token"))
    assert _headers(client, "vertex-anthropic", max_tokens=1, project="p", region="us-east5")["authorization"] == (
        "Bearer ya29.token"
    )


def _prepared(provider: str, **options: object) -> thinkseal.PreparedRequest:
    return thinkseal.provider(provider).prepare(Conversation([UserMessage("hi")]), model="m", **options)


def _headers(client: thinkseal.Client, provider: str, **options: object) -> dict[str, str]:
    req = _prepared(provider, **options)
    exchange = client._exchange
    return exchange.request_headers(req, exchange.url(req))


def _url(client: thinkseal.Client, provider: str, **options: object) -> str:
    return client._exchange.url(_prepared(provider, **options))
