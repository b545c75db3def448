"""The Claude emulators' API version checks: every ``anthropic-version``
Anthropic lists is taken (the installed SDK's default among them), an unknown
one is refused with Anthropic's own body, and the sampling parameters
version 2026-10-21 removed are refused under it. Claude on Vertex AI: its
``anthropic_version`` body field likewise."""

from __future__ import annotations

import http.client
import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import urlsplit

import anthropic
import pytest

from thinkseal.testing import AnthropicEmulator, emulate

from .test_emulators import post

BODY = {"model": "claude-sonnet-4-5", "max_tokens": 64, "messages": [{"role": "user", "content": "Hi"}]}
VERTEX_PATH = "/v1/projects/p/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5:rawPredict"


@pytest.fixture
def emu() -> Iterator[AnthropicEmulator]:
    with emulate("anthropic") as running:
        assert isinstance(running, AnthropicEmulator)
        yield running


def send(emu: AnthropicEmulator, headers: Mapping[str, str], body: Mapping[str, Any] = BODY) -> tuple[int, Any]:
    status, _, raw = post(
        emu.url("/v1/messages"),
        json.dumps(body).encode(),
        {"content-type": "application/json", "x-api-key": "k", **headers},
    )
    return status, json.loads(raw)


def refusal(message: str) -> dict[str, Any]:
    return {"type": "error", "error": {"type": "invalid_request_error", "message": message}}


@pytest.mark.parametrize("version", ["2023-01-01", "2023-06-01", "2026-10-21"])
def test_every_listed_version_is_taken(emu: AnthropicEmulator, version: str) -> None:
    status, answer = send(emu, {"anthropic-version": version})
    assert status == 200, answer
    assert answer["content"] == [{"type": "text", "text": "Done."}]


def test_the_installed_sdk_with_its_default_version_is_answered(emu: AnthropicEmulator) -> None:
    client = anthropic.Anthropic(base_url=emu.base_url, api_key="test-key", max_retries=0)
    message = client.messages.create(
        model="claude-sonnet-4-5", max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
    )
    assert message.content[0].type == "text"
    sent = emu.requests[-1].headers["anthropic-version"]
    assert sent == anthropic._constants.ANTHROPIC_API_VERSION


@pytest.mark.parametrize("version", ["2023-10-01", "2024-10-22", "", "latest"])
def test_an_unknown_version_gets_anthropics_answer(emu: AnthropicEmulator, version: str) -> None:
    status, answer = send(emu, {"anthropic-version": version})
    assert status == 400
    assert answer == refusal(f"anthropic-version: {json.dumps(version)} is not a valid version")


def test_a_missing_version_is_required(emu: AnthropicEmulator) -> None:
    status, answer = send(emu, {})
    assert (status, answer) == (400, refusal("anthropic-version: header is required"))


def test_a_version_sent_twice_reads_as_both_joined(emu: AnthropicEmulator) -> None:
    # As Anthropic answers a proxy that adds its own header to the client's.
    request_headers = [("anthropic-version", "2023-06-01"), ("anthropic-version", "2023-06-01")]
    host, port = urlsplit(emu.server_url).netloc.split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.putrequest("POST", "/v1/messages")
    data = json.dumps(BODY).encode()
    for name, value in [*request_headers, ("x-api-key", "k"), ("content-length", str(len(data)))]:
        connection.putheader(name, value)
    connection.endheaders(data)
    answer = connection.getresponse()
    assert answer.status == 400
    assert json.loads(answer.read()) == refusal('anthropic-version: "2023-06-01, 2023-06-01" is not a valid version')


@pytest.mark.parametrize(("name", "value"), [("temperature", 1.0), ("top_p", 0.9), ("top_k", 5)])
def test_version_2026_10_21_refuses_the_sampling_parameters(emu: AnthropicEmulator, name: str, value: float) -> None:
    status, answer = send(emu, {"anthropic-version": "2026-10-21"}, {**BODY, name: value})
    assert (status, answer) == (400, refusal(f"{name}: Extra inputs are not permitted"))
    status, answer = send(emu, {"anthropic-version": "2023-06-01"}, {**BODY, name: value})
    assert status == 200, answer


# -- Claude on Vertex AI ------------------------------------------------------------------------


def vertex_send(emu: AnthropicEmulator, body: Mapping[str, Any]) -> tuple[int, Any]:
    headers = {"content-type": "application/json", "authorization": "Bearer token"}
    status, _, raw = post(emu.url(VERTEX_PATH), json.dumps(body).encode(), headers)
    return status, json.loads(raw)


@pytest.mark.parametrize("version", ["vertex-2023-10-16", "2026-10-21"])
def test_vertex_takes_its_version_and_2026_10_21(version: str) -> None:
    with emulate("vertex-anthropic") as emu:
        assert isinstance(emu, AnthropicEmulator)
        body = {k: v for k, v in BODY.items() if k != "model"}
        status, answer = vertex_send(emu, {**body, "anthropic_version": version})
        assert status == 200, answer
        status, answer = vertex_send(emu, {**body, "anthropic_version": "2023-06-01"})
        assert status == 400
        assert "anthropic_version" in answer["error"]["message"]


def test_the_installed_sdks_vertex_client_is_answered() -> None:
    with emulate("vertex-anthropic") as emu:
        client = anthropic.AnthropicVertex(
            project_id="p", region="us-east5", access_token="token", base_url=emu.base_url + "/v1", max_retries=0
        )
        message = client.messages.create(
            model="claude-sonnet-4-5", max_tokens=64, messages=[{"role": "user", "content": "Hi"}]
        )
        assert message.content[0].type == "text"
        assert emu.requests[-1].body["anthropic_version"] == anthropic._constants.ANTHROPIC_API_VERSION
