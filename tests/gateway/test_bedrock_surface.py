"""The gateway's Bedrock surface (Converse and ConverseStream) driven by
boto3's ``bedrock-runtime`` client, only its ``endpoint_url`` pointed at the
gateway, with thinkseal's Bedrock emulator as the upstream.

The emulator checks that a request is signed (SigV4) or carries a bearer
token, not the signature itself: the tests recompute every signature the
gateway made with botocore, over the bytes, path and headers the emulator
received. A failure scenario runs twice, straight to the emulator and through
the gateway, and the emulator's own refusals are counted each way."""

from __future__ import annotations

import json
import logging
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from urllib.parse import quote

import boto3
import httpx
import pytest
from botocore import UNSIGNED
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config as BotoConfig
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from thinkseal import AssistantMessage, SystemMessage, ToolMessage, UserMessage, ValidationError
from thinkseal._content import CacheBreakpoint, Native
from thinkseal.gateway import Config
from thinkseal.gateway._bedrock_surface import import_converse
from thinkseal.testing import Request, Step
from thinkseal.testing.anthropic import Call, Redact, Think
from thinkseal.testing.bedrock import BedrockEmulator

from .conftest import serve

SONNET = "anthropic.claude-sonnet-4-5-20250929-v1:0"
OPUS = "us.anthropic.claude-opus-4-1-20250805-v1:0"
ARN = "arn:aws:bedrock:us-east-1:123456789012:application-inference-profile/abc123"
REGION = "us-east-1"
TOKEN = "bedrock-api-key-ABSKQmVkcm9ja0FQSUtleS"  # a Bedrock API key, as a bearer token
CLIENT_KEYS = ("AKIACLIENT0000000000", "client-secret-0123456789abcdef0123456789", "client-session-token")
ROUTE_KEYS = ("AKIAROUTE00000000000", "route-secret-abcdef0123456789abcdef012345", "route-session-token-xyz")
INVALID = "Invalid `signature` in `thinking` block"

TOOLS = {
    "tools": [
        {
            "toolSpec": {
                "name": "lookup",
                "description": "Look a number up.",
                "inputSchema": {"json": {"type": "object", "properties": {"q": {"type": "integer"}}}},
            }
        }
    ]
}
THINKING = {"thinking": {"type": "enabled", "budget_tokens": 1024}}


@pytest.fixture
def emu() -> Iterator[BedrockEmulator]:
    with BedrockEmulator(require_auth=True) as emulator:
        yield emulator


@pytest.fixture
def route_keys(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The route's AWS keys in the environment; the route table's keys naming them."""
    for name, value in zip(("ROUTE_AKID", "ROUTE_SECRET", "ROUTE_TOKEN"), ROUTE_KEYS, strict=True):
        monkeypatch.setenv(name, value)
    return {
        "aws_region": REGION,
        "aws_access_key_id_env": "ROUTE_AKID",
        "aws_secret_access_key_env": "ROUTE_SECRET",
        "aws_session_token_env": "ROUTE_TOKEN",
    }


def route(emu: BedrockEmulator, prefix: str = "/bedrock", **extra: Any) -> dict[str, Any]:
    return {"prefix": prefix, "provider": "bedrock", "upstream": emu.base_url, **extra}


@contextmanager
def serving(*routes: dict[str, Any], **gateway: Any) -> Iterator[str]:
    with serve({"gateway": gateway, "routes": list(routes)}) as served:
        yield served.url


def client(endpoint: str, *, bearer: bool = False) -> Any:
    """boto3's client for ``endpoint``: SigV4 with the client's own keys, or a
    Bedrock API key. botocore sends ``AWS_BEARER_TOKEN_BEDROCK`` only over
    HTTPS, and the gateway here listens on plain loopback HTTP: the bearer
    client is unsigned and puts the header on itself, as botocore would."""
    config = BotoConfig(retries={"max_attempts": 1}, signature_version=UNSIGNED if bearer else None)
    made = boto3.client(
        "bedrock-runtime",
        endpoint_url=endpoint,
        region_name=REGION,
        aws_access_key_id=CLIENT_KEYS[0],
        aws_secret_access_key=CLIENT_KEYS[1],
        aws_session_token=CLIENT_KEYS[2],
        config=config,
    )
    if bearer:

        def authorise(request: Any, **_: Any) -> None:
            request.headers["Authorization"] = f"Bearer {TOKEN}"

        made.meta.events.register("request-created.bedrock-runtime.*", authorise)
    sent: list[bytes] = []
    made.meta.events.register("before-send.bedrock-runtime.*", lambda request, **_: sent.append(request.body))
    made.sent = sent  # the bodies boto3 sent, in order
    return made


def assemble(events: Any) -> dict[str, Any]:
    """A ConverseStream reply as one message, as an application puts it back in its history."""
    blocks: dict[int, dict[str, Any]] = {}
    for event in events:
        if "contentBlockStart" in event:
            start = event["contentBlockStart"]
            use = start["start"]["toolUse"]
            blocks[start["contentBlockIndex"]] = {"toolUse": {**use, "input": ""}}
        elif "contentBlockDelta" in event:
            index, delta = event["contentBlockDelta"]["contentBlockIndex"], event["contentBlockDelta"]["delta"]
            if "text" in delta:
                block = blocks.setdefault(index, {"text": ""})
                block["text"] += delta["text"]
            elif "toolUse" in delta:
                blocks[index]["toolUse"]["input"] += delta["toolUse"]["input"]
            elif "redactedContent" in delta["reasoningContent"]:
                redacted = blocks.setdefault(index, {"reasoningContent": {"redactedContent": b""}})
                redacted["reasoningContent"]["redactedContent"] += delta["reasoningContent"]["redactedContent"]
            else:
                reasoning = blocks.setdefault(index, {"reasoningContent": {"reasoningText": {"text": ""}}})
                text = reasoning["reasoningContent"]["reasoningText"]
                for key, value in delta["reasoningContent"].items():
                    text[key] = text.get(key, "") + value
    for block in blocks.values():
        if "toolUse" in block:
            block["toolUse"]["input"] = json.loads(block["toolUse"]["input"] or "{}")
    return {"role": "assistant", "content": [blocks[i] for i in sorted(blocks)]}


class Session:
    """An application's conversation in boto3's own shapes."""

    def __init__(self, bedrock: Any) -> None:
        self.client = bedrock
        self.messages: list[dict[str, Any]] = []
        self.headers: dict[str, str] = {}
        self.refused = 0

    def send(self, model: str, *, stream: bool = False) -> bool:
        params: dict[str, Any] = {
            "modelId": model,
            "messages": self.messages,
            "system": [{"text": "Be brief."}],
            "toolConfig": TOOLS,
            "inferenceConfig": {"maxTokens": 2048},
            "additionalModelRequestFields": THINKING,
        }
        try:
            if stream:
                response = self.client.converse_stream(**params)
                message = assemble(response["stream"])
            else:
                response = self.client.converse(**params)
                message = response["output"]["message"]
        except ClientError as err:
            if err.response["ResponseMetadata"]["HTTPStatusCode"] != 400:
                raise
            self.refused += 1
            return False
        self.headers = response["ResponseMetadata"]["HTTPHeaders"]
        self.messages.append(message)
        return True

    def ask(self, model: str, text: str, *, stream: bool = False) -> bool:
        self.messages.append({"role": "user", "content": [{"text": text}]})
        return self.send(model, stream=stream)

    def results(self, model: str, *, stream: bool = False) -> bool:
        calls = [b["toolUse"] for b in self.messages[-1]["content"] if "toolUse" in b]
        assert calls
        content = [{"toolResult": {"toolUseId": c["toolUseId"], "content": [{"text": "42"}]}} for c in calls]
        self.messages.append({"role": "user", "content": content})
        return self.send(model, stream=stream)

    def loop(self, emu: BedrockEmulator, model: str, text: str, *, stream: bool = False) -> bool:
        """A question, a call with signed thinking, its result, the answer."""
        emu.clear_script()  # what a refused request left queued
        emu.script(Step(thinking="Look it up first.", calls=[("lookup", {"q": 1})]), Step(text="42."))
        return self.ask(model, text, stream=stream) and self.results(model, stream=stream)

    def counts(self) -> tuple[int, int]:
        return int(self.headers["thinkseal-kept"]), int(self.headers["thinkseal-unsealed"])


def verify_signature(request: Request, base_url: str, keys: tuple[str, str, str]) -> str:
    """Check the SigV4 signature of ``request`` (as the emulator received it)
    with ``keys``, as AWS would; return the signed header names."""
    headers = dict(request.headers)
    found = re.fullmatch(
        r"AWS4-HMAC-SHA256 Credential=([^/]+)/(\d{8})/([^/]+)/bedrock/aws4_request, "
        r"SignedHeaders=([a-z0-9;-]+), Signature=([0-9a-f]{64})",
        headers["authorization"],
    )
    assert found is not None, headers["authorization"]
    assert found[1] == keys[0]
    assert found[3] == REGION
    signed = found[4].split(";")
    aws = AWSRequest(method=request.method, url=base_url + request.path, data=request.raw)
    for name in signed:
        aws.headers[name] = headers[name]
    aws.context["timestamp"] = headers["x-amz-date"]
    signer = SigV4Auth(Credentials(*keys), "bedrock", REGION)
    expected = signer.signature(signer.string_to_sign(aws, signer.canonical_request(aws)), aws)
    assert found[5] == expected
    return found[4]


# -- tool loops through the gateway -----------------------------------------------------------


@pytest.mark.parametrize("stream", [False, True], ids=["converse", "converse-stream"])
def test_a_tool_loop_is_recorded_and_replayed_byte_for_byte(emu: BedrockEmulator, stream: bool) -> None:
    # unseal: the signed turn is kept only because the gateway recorded it (from the JSON, or the relayed stream).
    with serving(route(emu), unknown_seals="unseal") as url:
        bedrock = client(url + "/bedrock", bearer=True)
        session = Session(bedrock)
        assert session.loop(emu, SONNET, "What is 1?", stream=stream)
        assert session.counts() == (1, 0)
        assert session.loop(emu, SONNET, "And 2?", stream=stream)
        assert session.counts() == (2, 0)
    assert [r.raw for r in emu.requests] == bedrock.sent  # nothing to change: every byte as boto3 wrote it
    action = "converse-stream" if stream else "converse"
    assert {r.path for r in emu.requests} == {f"/model/{SONNET}/{action}"}  # the id as the server decoded it
    assert emu.rejections == []


@pytest.mark.parametrize("stream", [False, True], ids=["converse", "converse-stream"])
def test_redacted_and_signed_thinking_are_kept_as_they_came(emu: BedrockEmulator, stream: bool) -> None:
    with serving(route(emu), unknown_seals="unseal") as url:
        bedrock = client(url + "/bedrock", bearer=True)
        session = Session(bedrock)
        emu.script(Think("First."), Redact("hidden"), Think("Then."), Call("tooluse_1", "lookup", {"q": 1}))
        assert session.ask(SONNET, "What is 1?", stream=stream)
        kinds = [next(iter(b["reasoningContent"])) for b in session.messages[-1]["content"] if "reasoningContent" in b]
        assert kinds == ["reasoningText", "redactedContent", "reasoningText"]
        emu.script(Step(text="42."))
        assert session.results(SONNET, stream=stream)
        assert session.counts() == (1, 0)
    assert [r.raw for r in emu.requests] == bedrock.sent
    assert emu.rejections == []


def test_the_event_stream_reaches_the_client_unchanged(emu: BedrockEmulator) -> None:
    body = json.dumps({"messages": [{"role": "user", "content": [{"text": "Hi"}]}], "toolConfig": TOOLS})
    headers = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json"}
    emu.script(Step(thinking="Think.", text="Hi."))
    direct = httpx.post(emu.url(f"/model/{SONNET}/converse-stream"), content=body, headers=headers)
    emu.script(Step(thinking="Think.", text="Hi."))
    with serving(route(emu)) as url:
        via = httpx.post(f"{url}/bedrock/model/{SONNET}/converse-stream", content=body, headers=headers)
    assert via.status_code == direct.status_code == 200
    assert via.headers["content-type"] == "application/vnd.amazon.eventstream"
    assert via.content == direct.content
    assert len(via.content) > 200


def model_switch(session: Session, emu: BedrockEmulator, switched: Any, model: str, via: bool) -> Session:
    """A tool loop on Sonnet, then the next question to Opus (``switched``: the
    client that reaches it asking for ``model``)."""
    assert session.loop(emu, SONNET, "What is 1?")
    session.client = switched
    emu.script(Step(thinking="Again.", text="42 again."))
    if session.ask(model, "Say it again.") and via:
        assert session.counts() == (0, 1)  # the call turn, signed by Sonnet
        assert session.headers["thinkseal-reasons"] == "origin-mismatch=1"
        assert emu.requests[-1].path == f"/model/{quote(OPUS, safe='')}/converse"
        sent = emu.requests[-1].body["messages"]
        assert not any("reasoningContent" in block for m in sent for block in m["content"])
    return session


def test_a_model_switch_is_refused_without_the_gateway_and_unsealed_through_it(
    emu: BedrockEmulator,
) -> None:
    direct = client(emu.base_url, bearer=True)
    session = model_switch(Session(direct), emu, direct, OPUS, via=False)
    assert session.refused == 1
    assert [r.body["message"] for r in emu.rejections] == [
        "The model returned the following errors: messages.1.content.0: " + INVALID
    ]
    before = len(emu.rejections)
    with serving(route(emu), route(emu, "/opus", models={SONNET: OPUS})) as url:
        sonnet = client(url + "/bedrock", bearer=True)
        opus = client(url + "/opus", bearer=True)
        session = model_switch(Session(sonnet), emu, opus, SONNET, via=True)
    assert session.refused == 0
    assert len(emu.rejections) == before  # none through the gateway


@pytest.mark.parametrize("auth", ["bearer", "sigv4"])
def test_a_stale_signature_is_retried_once_unsealed(
    emu: BedrockEmulator, route_keys: dict[str, str], auth: str
) -> None:
    with serving(route(emu, **(route_keys if auth == "sigv4" else {}))) as url:
        session = Session(client(url + "/bedrock", bearer=auth == "bearer"))
        assert session.loop(emu, SONNET, "What is 1?")
        emu.rotate_keys()  # every signature issued so far stops verifying
        emu.script(Step(text="Again."))
        assert session.ask(SONNET, "Again?")
    assert len(emu.rejections) == 1  # refused once upstream, answered to the client
    assert INVALID in emu.rejections[0].body["message"]
    assert session.headers["thinkseal-recovered"] == "2"  # after the question; the system prompt is no message
    assert session.counts() == (0, 1)
    if auth == "sigv4":  # the retried body, edited, is signed anew
        assert emu.requests[-1].raw != emu.requests[-2].raw
        verify_signature(emu.requests[-1], emu.base_url, ROUTE_KEYS)


# -- credentials --------------------------------------------------------------------------------


def test_a_sigv4_request_is_signed_again_with_the_routes_keys(
    emu: BedrockEmulator, route_keys: dict[str, str], caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with serving(route(emu, **route_keys), unknown_seals="unseal") as url:
        bedrock = client(url + "/bedrock")
        session = Session(bedrock)
        assert session.loop(emu, SONNET, "What is 1?")
        assert session.counts() == (1, 0)  # the account (the route's key id) is the same for each request
        for request in emu.requests:
            signed = verify_signature(request, emu.base_url, ROUTE_KEYS)
            assert {"host", "x-amz-date", "x-amz-security-token"} <= set(signed.split(";"))
            assert request.headers["x-amz-security-token"] == ROUTE_KEYS[2]
        with pytest.raises(AssertionError):  # the client's own signature would not verify there
            verify_signature(emu.requests[-1], emu.base_url, CLIENT_KEYS)
        sent = len(bedrock.sent)
        with pytest.raises(ClientError):  # a path the surface does not read: forwarded, signed again too
            bedrock.invoke_model(modelId=SONNET, body=b'{"prompt": "Hi"}')
        assert emu.requests[-1].path == f"/model/{SONNET}/invoke"
        assert emu.requests[-1].raw == bedrock.sent[sent]
        verify_signature(emu.requests[-1], emu.base_url, ROUTE_KEYS)
    assert bedrock.sent[:sent] == [r.raw for r in emu.requests[:sent]]
    # Even at DEBUG, where botocore logs a canonical request (the client's own, with its token, here).
    assert all(secret not in caplog.text for secret in (ROUTE_KEYS[1], ROUTE_KEYS[2], CLIENT_KEYS[1]))


def test_a_mapped_model_is_signed_for_the_path_it_goes_to(emu: BedrockEmulator, route_keys: dict[str, str]) -> None:
    with serving(route(emu, models={SONNET: OPUS}, **route_keys)) as url:
        session = Session(client(url + "/bedrock"))
        assert session.loop(emu, SONNET, "What is 1?")
        emu.script(Step(text="Fine."))
        assert session.ask(SONNET, "More?")
    assert {r.path for r in emu.requests} == {f"/model/{quote(OPUS, safe='')}/converse"}
    for request in emu.requests:
        verify_signature(request, emu.base_url, ROUTE_KEYS)


def test_a_bearer_token_passes_through_unchanged(emu: BedrockEmulator, route_keys: dict[str, str]) -> None:
    plain, keyed = route(emu), route(emu, "/keyed", **route_keys)
    with serving(plain, keyed, unknown_seals="unseal") as url:
        for prefix in ("/bedrock", "/keyed"):  # a route with keys forwards a bearer token as it came, too
            session = Session(client(url + prefix, bearer=True))
            assert session.loop(emu, SONNET, f"What is 1 at {prefix}?")
            assert session.counts() == (1, 0)
    assert {r.headers["authorization"] for r in emu.requests} == {f"Bearer {TOKEN}"}
    assert not any("x-amz-security-token" in r.headers for r in emu.requests)


def test_a_route_with_keys_signs_a_request_that_came_without_credentials(
    emu: BedrockEmulator, route_keys: dict[str, str]
) -> None:
    raw = b'{"messages": [{"role": "user", "content": [{"text": "Hi"}]}]}'
    emu.script(Step(text="Hello."))
    with serving(route(emu, **route_keys)) as url:
        answer = httpx.post(f"{url}/bedrock/model/{SONNET}/converse", content=raw)
    assert answer.status_code == 200
    assert emu.requests[-1].raw == raw
    verify_signature(emu.requests[-1], emu.base_url, ROUTE_KEYS)


def test_a_sigv4_request_to_a_route_without_keys_is_refused(emu: BedrockEmulator) -> None:
    with serving(route(emu)) as url:
        session = Session(client(url + "/bedrock"))
        emu.script(Step(text="Hi."))
        with pytest.raises(ClientError) as caught:
            session.ask(SONNET, "Hi?")
        stale = (
            "AWS4-HMAC-SHA256 Credential=AKIA0/20260101/us-east-1/bedrock/aws4_request, SignedHeaders=host, Signature=0"
        )
        answer = httpx.post(
            f"{url}/bedrock/model/{SONNET}/converse", content=b'{"messages": []}', headers={"authorization": stale}
        )
    assert caught.value.response["ResponseMetadata"]["HTTPStatusCode"] == 401
    assert answer.status_code == 401
    message = answer.json()["error"]["message"]
    assert "aws_access_key_id_env" in message
    assert "Bearer" in message
    assert emu.requests == []  # never forwarded with a signature that cannot verify


def test_a_route_key_replaces_a_signature_and_what_came_with_it(
    emu: BedrockEmulator, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BEDROCK_KEY", TOKEN)
    with serving(route(emu, api_key_env="BEDROCK_KEY")) as url:
        session = Session(client(url + "/bedrock"))
        emu.script(Step(text="Hi."))
        assert session.ask(SONNET, "Hi?")
    sent = emu.requests[-1].headers
    assert sent["authorization"] == f"Bearer {TOKEN}"
    assert not {"x-amz-date", "x-amz-security-token"} & set(sent)


def test_a_request_with_nothing_to_change_goes_out_byte_for_byte(emu: BedrockEmulator) -> None:
    raw = (
        b'{ "messages" : [ {"role":"user","content":[{"text":"Hi"}]} ],\n'
        b'  "inferenceConfig": {"maxTokens": 64, "stopSequences": ["\\u00e9"]}, "x-extra": [1.50, 2e3] }'
    )
    headers = {"authorization": f"Bearer {TOKEN}", "content-type": "application/json", "x-custom": "kept"}
    emu.script(Step(text="Hello."))
    with serving(route(emu)) as url:
        answer = httpx.post(f"{url}/bedrock/model/{quote(SONNET, safe='')}/converse", content=raw, headers=headers)
    assert answer.status_code == 200
    assert answer.headers["thinkseal-kept"] == "0"
    sent = emu.requests[-1]
    assert sent.raw == raw
    assert sent.headers["authorization"] == f"Bearer {TOKEN}"
    assert sent.headers["x-custom"] == "kept"


# -- model ids with '/' (ARNs) ----------------------------------------------------------------


def test_an_arn_in_the_path_is_refused_and_a_mapped_alias_reaches_it(
    emu: BedrockEmulator,
) -> None:
    with serving(route(emu, models={"my-profile": ARN}), unknown_seals="unseal") as url:
        session = Session(client(url + "/bedrock", bearer=True))
        emu.script(Step(text="Hi."))
        assert not session.ask(ARN, "Hi?")  # boto3 writes its '/' as %2F: refused with a 400
        answer = httpx.post(f"{url}/bedrock/model/{quote(ARN, safe='')}/converse", content=b"{}")
        assert answer.status_code == 400
        assert "escaped '.', '/'" in answer.json()["error"]["message"]
        assert emu.requests == []
        session.messages.clear()
        assert session.loop(emu, "my-profile", "What is 1?")
        assert session.counts() == (1, 0)
    assert {r.path for r in emu.requests} == {f"/model/{quote(ARN, safe='')}/converse"}


# -- configuration ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("extra", "path"),
    [
        ({"aws_region": REGION}, "routes[0].aws_access_key_id_env"),
        (
            {"aws_region": "us-east-1.evil#", "aws_access_key_id_env": "A", "aws_secret_access_key_env": "S"},
            "routes[0].aws_region",
        ),
        (
            {"aws_region": REGION, "aws_access_key_id_env": "UNSET_X", "aws_secret_access_key_env": "S"},
            "routes[0].aws_access_key_id_env",
        ),
        (
            {"aws_region": REGION, "aws_access_key_id_env": "A", "aws_secret_access_key_env": "NL"},
            "routes[0].aws_secret_access_key_env",
        ),
        (
            {"aws_region": REGION, "aws_access_key_id_env": "A", "aws_secret_access_key_env": "S", "api_key_env": "S"},
            "routes[0].api_key_env",
        ),
    ],
)
def test_bad_aws_keys_are_configuration_errors_naming_the_key(
    extra: dict[str, Any], path: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("A", "AKIA0000")
    monkeypatch.setenv("S", "secret-value")
    monkeypatch.setenv("NL", "secret-value\n")
    monkeypatch.delenv("UNSET_X", raising=False)
    table = {"prefix": "/b", "provider": "bedrock", "upstream": "https://bedrock-runtime.us-east-1.amazonaws.com"}
    with pytest.raises(ValidationError) as caught:
        Config.of({"routes": [{**table, **extra}]})
    assert caught.value.path == path
    assert "secret-value" not in str(caught.value)


def test_aws_keys_are_for_bedrock_routes_and_never_shown(
    route_keys: dict[str, str],
) -> None:
    table = {"prefix": "/a", "provider": "anthropic", "upstream": "https://api.anthropic.com", **route_keys}
    with pytest.raises(ValidationError) as caught:
        Config.of({"routes": [table]})
    assert caught.value.path == "routes[0].aws_region"
    config = Config.of({"routes": [{**table, "provider": "bedrock"}]})
    shown = repr(config.routes[0])
    assert ROUTE_KEYS[0] in shown
    assert ROUTE_KEYS[1] not in shown
    assert ROUTE_KEYS[2] not in shown


# -- reading bodies -----------------------------------------------------------------------------


def test_a_body_reads_as_the_adapter_writes_it() -> None:
    body = {
        "system": [{"text": "Be brief."}, {"cachePoint": {"type": "default"}}],
        "messages": [
            {"role": "user", "content": [{"text": "Go"}, {"image": {"format": "png", "source": {"bytes": "iVBO"}}}]},
            {
                "role": "assistant",
                "content": [
                    {"reasoningContent": {"reasoningText": {"text": "Hm.", "signature": "c2ln"}}},
                    {"toolUse": {"toolUseId": "t1", "name": "lookup", "input": {"q": 1}}},
                    {"cachePoint": {"type": "default"}},
                ],
            },
            {
                "role": "user",
                "content": [
                    {"toolResult": {"toolUseId": "t1", "content": [{"json": {"n": 42}}], "status": "error"}},
                    {"cachePoint": {"type": "default"}},
                    {"text": "Well?"},
                ],
            },
        ],
        "toolConfig": {**TOOLS, "toolChoice": {"auto": {}}},
    }
    conversation, turns = import_converse(body)
    assert turns == {2: 1}
    system, user, call, result, text = conversation.messages
    assert isinstance(system, SystemMessage)
    assert system.parts == ("Be brief.", CacheBreakpoint())
    assert isinstance(user, UserMessage)
    assert isinstance(user.parts[1], Native)
    assert isinstance(call, AssistantMessage)
    assert [c.id for c in call.tool_calls] == ["t1"]
    assert call.has_sealed_thinking  # the cache point is no part of the turn
    assert isinstance(result, ToolMessage)
    assert result.is_error
    assert isinstance(result.parts[0], Native)
    assert isinstance(text, UserMessage)
    assert [t.name for t in conversation.tools] == ["lookup"]


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"messages": {"role": "user"}}, "messages"),
        ({"messages": [{"role": "tool", "content": [{"text": "x"}]}]}, "messages[0].role"),
        ({"messages": [{"role": "user", "content": []}]}, "messages[0].content"),
        (
            {
                "messages": [
                    {"role": "user", "content": [{"text": "a"}, {"toolResult": {"toolUseId": "t", "content": []}}]}
                ]
            },
            "messages[0].content[1]",
        ),
        (
            {"messages": [{"role": "assistant", "content": [{"toolUse": {"toolUseId": "t", "name": 3, "input": {}}}]}]},
            "messages[0].content[0].toolUse.name",
        ),
        ({"messages": [], "toolConfig": {"tools": [{"systemTool": {"name": "x"}}]}}, "toolConfig.tools[0]"),
    ],
)
def test_bad_bodies_raise_validation_errors_naming_the_field(body: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        import_converse(body)
    assert caught.value.path == path
