"""Limits that protect a server, each tested at its boundary: the value at the
limit is taken, one more is refused with an error naming the field and the
limit. Limits are process-wide; every test puts the defaults back."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

import thinkseal
from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Conversation,
    Limits,
    ResponseError,
    ThinkingBlock,
    ToolCall,
    UserMessage,
    ValidationError,
)
from thinkseal.testing import Step


@pytest.fixture
def limited() -> Iterator[None]:
    previous = thinkseal.limits()
    yield
    thinkseal.set_limits(previous)


def test_defaults_and_validation(limited: None) -> None:
    assert thinkseal.limits() == thinkseal.DEFAULT_LIMITS == Limits()
    assert Limits().max_depth == 128
    for bad in ({"max_depth": 0}, {"max_string": -1}, {"max_parts": True}, {"max_body": 1.5}, {"max_depth": 257}):
        with pytest.raises(ValidationError, match="Limits"):
            Limits(**bad)  # type: ignore[arg-type]
    with pytest.raises(ValidationError):
        thinkseal.set_limits({"max_depth": 3})  # type: ignore[arg-type]
    old = thinkseal.set_limits(Limits(max_parts=7))
    assert old == Limits()
    assert thinkseal.limits().max_parts == 7


def test_max_string(limited: None) -> None:
    thinkseal.set_limits(Limits(max_string=10))
    assert UserMessage("x" * 10).content == "x" * 10
    with pytest.raises(ValidationError, match=r"UserMessage.content: 11 characters, over the limit of 10"):
        UserMessage("x" * 11)
    with pytest.raises(ValidationError, match=r"max_string"):
        AssistantMessage(None, [ToolCall("c" * 11, "f", {})])
    stored = Conversation([UserMessage("x" * 10)]).to_json()
    thinkseal.set_limits(Limits(max_string=9))
    with pytest.raises(ValidationError, match=r"\$\.messages\[0\].*over the limit of 9"):
        Conversation.from_json(stored)


def test_max_parts(limited: None) -> None:
    thinkseal.set_limits(Limits(max_parts=3))
    assert len(UserMessage(["a", "b", CacheBreakpoint()]).content) == 3
    with pytest.raises(
        ValidationError, match=r"UserMessage.content: 4 parts, over the limit of 3 \(Limits.max_parts\)"
    ):
        UserMessage(["a", "b", "c", "d"])
    calls = [ToolCall(f"c{i}", "f", {}) for i in range(4)]
    AssistantMessage(None, calls[:3])
    with pytest.raises(ValidationError, match=r"AssistantMessage.tool_calls: 4 parts"):
        AssistantMessage(None, calls)
    with pytest.raises(ValidationError, match=r"AssistantMessage.thinking: 4 parts"):
        AssistantMessage("x", thinking=[ThinkingBlock.Text(str(i)) for i in range(4)])
    AssistantMessage.from_parts(["a", "b", "c"])
    with pytest.raises(ValidationError, match=r"AssistantMessage.parts: 4 parts"):
        AssistantMessage.from_parts(["a", "b", "c", "d"])
    # The limit is on the whole turn, however it is made: a turn the constructor
    # or an updater made is one its stored file can be read back into.
    with pytest.raises(ValidationError, match=r"AssistantMessage.parts: 4 parts"):
        AssistantMessage("x", calls[:2], [ThinkingBlock.Text("t")])
    turn = AssistantMessage("x", calls[:1], [ThinkingBlock.Text("t")])
    with pytest.raises(ValidationError, match=r"AssistantMessage.parts: 4 parts"):
        turn.with_tool_calls(calls[:2])
    with pytest.raises(ValidationError, match=r"AssistantMessage.parts: 4 parts"):
        turn.with_thinking([ThinkingBlock.Text("t"), ThinkingBlock.Text("u")])
    assert Conversation.from_json(Conversation([turn]).to_json())[0] == turn


def test_max_string_inside_json_values(limited: None) -> None:
    """Strings inside tool arguments, tool schemas, the response format,
    and options, keys included, are held to ``Limits.max_string`` (a native
    block's text is held to it whole)."""
    thinkseal.set_limits(Limits(max_string=12))
    ToolCall("c", "f", {"k" * 12: "v" * 12})
    with pytest.raises(ValidationError, match=r"ToolCall.arguments.k: a string of 13 characters, over the limit of 12"):
        ToolCall("c", "f", {"k": "v" * 13})
    with pytest.raises(ValidationError, match=r"ToolCall.arguments: object key: a string of 13 characters"):
        ToolCall("c", "f", {"k" * 13: 1})
    with pytest.raises(ValidationError, match=r"Tool.parameters.title: .*Limits.max_string"):
        thinkseal.Tool("f", "d", {"type": "object", "title": "d" * 13})
    with pytest.raises(ValidationError, match=r"Conversation.response_format.x\[0\]: .*Limits.max_string"):
        Conversation([UserMessage("q")], response_format={"type": "json_object", "x": ["y" * 13]})
    with pytest.raises(ValidationError, match=r"metadata.user_id: .*Limits.max_string"):
        thinkseal.provider("anthropic").prepare(
            Conversation([UserMessage("q")]), model="m", max_tokens=8, metadata={"user_id": "u" * 13}
        )


def test_native_blocks_are_held_to_the_depth_limit(limited: None) -> None:
    """A native block nested as deep as the JSON decoder allows is refused when
    made (it would otherwise reach an adapter that cannot handle it)."""
    deep = '{"type":"x","v":' + "[" * 900 + "]" * 900 + "}"
    with pytest.raises(ValidationError, match=r"Native.data.*Limits.max_depth"):
        thinkseal.Native("anthropic", deep)
    within = '{"type":"x","v":' + "[" * 126 + "]" * 126 + "}"
    assert thinkseal.Native("anthropic", within).data == within
    with pytest.raises(ValidationError, match=r"Native.data"):
        thinkseal.Native("anthropic", '{"type":"x","v":"\\ud800"}'.replace("\\\\", "\\"))


def test_max_body_of_a_stored_conversation(limited: None) -> None:
    stored = Conversation([UserMessage("hello")]).to_json()
    thinkseal.set_limits(Limits(max_body=len(stored)))
    assert Conversation.from_json(stored) == Conversation([UserMessage("hello")])
    assert Conversation.from_json(stored.encode()) == Conversation([UserMessage("hello")])
    thinkseal.set_limits(Limits(max_body=len(stored) - 1))
    with pytest.raises(ValidationError, match=r"\$: \d+ bytes, over the limit of \d+ \(Limits.max_body\)"):
        Conversation.from_json(stored)


@pytest.mark.parametrize("streamed", [False, True], ids=["send", "stream"])
def test_max_body_of_a_provider_answer(limited: None, streamed: bool, thinkseal_emulator: object) -> None:
    emu = thinkseal_emulator("anthropic")  # type: ignore[operator]
    conversation = Conversation([UserMessage("Hi")])
    with thinkseal.Client("anthropic", base_url=emu.base_url, api_key="k", max_retries=0) as client:
        emu.script(Step(text="A reply of some length. " * 20))
        reply = _call(client, conversation, emu.options, streamed)
        size = len(emu.requests[-1].raw)  # a request body; the answers are of the same order
        assert reply.message.content
        thinkseal.set_limits(Limits(max_body=max(size // 4, 64)))
        emu.script(Step(text="A reply of some length. " * 20))
        with pytest.raises(ResponseError, match=r"over the limit of \d+ \(Limits.max_body\)"):
            _call(client, conversation, emu.options, streamed)


def _call(client: thinkseal.Client, conversation: Conversation, options: object, streamed: bool) -> thinkseal.Reply:
    model = "claude-sonnet-4-5"
    if not streamed:
        return client.send(conversation, model=model, **options)  # type: ignore[arg-type]
    return client.stream(conversation, model=model, **options).until_done()  # type: ignore[arg-type]


def _nested(levels: int) -> object:
    value: object = 1
    for _ in range(levels):
        value = [value]
    return value


def test_max_depth(limited: None) -> None:
    thinkseal.set_limits(Limits(max_depth=4))
    ToolCall("c", "f", {"v": _nested(3)})  # the arguments object is the first level
    with pytest.raises(ValidationError, match=r"ToolCall.arguments.v\[0\]\[0\]\[0\]: nested deeper than 4 levels"):
        ToolCall("c", "f", {"v": _nested(4)})
    thinkseal.set_limits(Limits())
    assert ToolCall("c", "f", {"v": _nested(126)})  # the default, 128 levels
    with pytest.raises(ValidationError, match=r"Limits.max_depth"):
        ToolCall("c", "f", {"v": _nested(128)})
