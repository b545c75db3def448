"""``StreamParser.ended``: a stream has ended exactly when ``finish`` gives its
reply, at every prefix of its events. The gateway holds a stream's end back
until the reply is recorded, so this is what it goes by. Checked on every
provider's emulated stream and on the stream fixtures of
tests/providers/fixtures (the providers' own stream shapes)."""

from __future__ import annotations

import json

import httpx
import pytest

import thinkseal
from thinkseal import Conversation, ResponseError, SystemMessage, Tool, UserMessage
from thinkseal.client._events import decoder
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import Step, emulate

from ..client.test_loop import MODELS
from .support import FIXTURES

LOOKUP = Tool("lookup", "Look something up", {"type": "object", "properties": {"q": {"type": "integer"}}})
# The stream fixtures: (provider, file under fixtures/<provider>/).
RECORDED = [
    ("anthropic", "stream_interleaved.json"),
    ("anthropic", "stream_web_search.json"),
    ("bedrock", "stream_interleaved.json"),
    ("bedrock", "stream_citations.json"),
    ("deepseek", "tool_call.stream.json"),
    ("gemini-openai", "text_stream.json"),
    ("mistral", "stream_answer.json"),
    ("mistral", "stream_tool_call.json"),
    ("ollama", "stream_answer.ndjson"),
    ("ollama", "stream_tool_call.ndjson"),
    ("openrouter", "tool_call.stream.json"),
]


def finishes(provider: str, events: list[dict[str, object]]) -> tuple[bool, bool]:
    """A fresh parser fed ``events``: whether it says it ended, and whether ``finish`` gives a reply."""
    parser = thinkseal.provider(provider).new_stream()
    for event in events:
        parser.feed(event)
    try:
        parser.finish()
    except ResponseError:
        return parser.ended(), False
    return parser.ended(), True


def check_every_prefix(provider: str, events: list[dict[str, object]]) -> None:
    seen = [finishes(provider, events[:k]) for k in range(len(events) + 1)]
    assert [ended for ended, _ in seen] == [finished for _, finished in seen]
    first = [ended for ended, _ in seen].index(True)  # it ends, and stays ended from then on
    assert first > 0
    assert all(ended for ended, _ in seen[first:])


def emulated_stream(provider: str) -> list[dict[str, object]]:
    """The events of a streamed reply (thinking and a tool call) from ``provider``'s emulator, over HTTP."""
    conversation = Conversation([SystemMessage("Be brief."), UserMessage("What is q?")], tools=[LOOKUP])
    with emulate(provider, require_auth=False) as emu:
        emu.script(Step(thinking="First I look up 1.", calls=[("lookup", {"q": 1})]))
        options = {**emu.options, **emu.thinking_options}
        req = thinkseal.provider(provider).prepare(conversation, model=MODELS[provider], stream=True, **options)
        raw = httpx.post(emu.base_url + req.path, content=req.content, headers=dict(req.headers), timeout=10)
        assert raw.status_code == 200, raw.text
    frames = decoder(thinkseal.provider(provider).connection.stream_format, provider)
    return [*frames.feed(raw.content), *frames.close()]


@pytest.mark.parametrize("provider", PROVIDER_IDS)
def test_an_emulated_stream_has_ended_exactly_when_it_can_be_finished(provider: str) -> None:
    events = emulated_stream(provider)
    assert len(events) >= 3
    check_every_prefix(provider, events)


@pytest.mark.parametrize(("provider", "name"), RECORDED, ids=[f"{p}-{n}" for p, n in RECORDED])
def test_a_stream_fixture_has_ended_exactly_when_it_can_be_finished(provider: str, name: str) -> None:
    text = (FIXTURES / provider / name).read_text(encoding="utf-8")
    events = [json.loads(line) for line in text.splitlines() if line] if name.endswith(".ndjson") else json.loads(text)
    check_every_prefix(provider, events)
