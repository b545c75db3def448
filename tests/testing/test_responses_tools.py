"""The Responses emulator's function tools as the API takes them: ``strict``
may be left out (the API defaults it, strict), while the rest of the SDK's
``FunctionToolParam`` is still checked."""

from __future__ import annotations

import json
from collections.abc import Iterator
from typing import Any

import openai
import pytest

from thinkseal.testing import ResponsesEmulator, emulate

from .test_emulators import post

TOOL: dict[str, Any] = {
    "type": "function",
    "name": "lookup",
    "description": "Look something up",
    "parameters": {"type": "object", "properties": {"q": {"type": "integer"}}},
}


@pytest.fixture
def emu() -> Iterator[ResponsesEmulator]:
    with emulate("openai-responses") as running:
        assert isinstance(running, ResponsesEmulator)
        yield running


def send(emu: ResponsesEmulator, tool: dict[str, Any]) -> tuple[int, Any]:
    body = {"model": "gpt-5", "input": "Hi", "tools": [tool], "store": False}
    headers = {"content-type": "application/json", "authorization": "Bearer org-a"}
    status, _, raw = post(emu.url("/responses"), json.dumps(body).encode(), headers)
    return status, json.loads(raw)


@pytest.mark.parametrize("strict", ["absent", True, False, None])
def test_a_function_tool_is_taken_with_or_without_strict(emu: ResponsesEmulator, strict: Any) -> None:
    tool = TOOL if strict == "absent" else {**TOOL, "strict": strict}
    status, answer = send(emu, tool)
    assert status == 200, answer
    assert answer["object"] == "response"
    assert emu.requests[-1].body["tools"] == [tool]  # answered as sent, no default written into it


def test_the_sdk_sends_a_tool_without_strict_and_gets_an_answer(emu: ResponsesEmulator) -> None:
    client = openai.OpenAI(base_url=emu.base_url, api_key="org-a", max_retries=0)
    response = client.responses.create(model="gpt-5", input="Hi", tools=[TOOL], store=False)  # type: ignore[list-item]
    assert response.output_text == "Done."
    assert "strict" not in emu.requests[-1].body["tools"][0]


@pytest.mark.parametrize(
    "tool",
    [{**TOOL, "strict": [True]}, {**TOOL, "stric": True}, {k: v for k, v in TOOL.items() if k != "name"}],
    ids=["strict-not-bool", "misspelt-key", "no-name"],
)
def test_the_rest_of_the_tool_is_still_checked(emu: ResponsesEmulator, tool: dict[str, Any]) -> None:
    status, answer = send(emu, tool)
    assert status == 400, answer
    assert "ResponseCreateParams" in answer["error"]["message"]
