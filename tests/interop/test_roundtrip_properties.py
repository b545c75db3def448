"""Round-trip properties of every converter: ``import(export(conv)) == conv`` for
generated conversations restricted to what each format can hold, and bad
input only ever raises ``ValidationError``."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import ModelMessage, ModelRequest

from thinkseal import AssistantMessage, Conversation, Origin, SystemMessage, ValidationError
from thinkseal.interop import anthropic as ts_anthropic
from thinkseal.interop import openai as ts_openai
from thinkseal.interop import pydantic_ai as ts_pydantic_ai

from .strategies import (
    anthropic_conversations,
    chat_conversations,
    history,
    json_value,
    pydantic_ai_conversations,
    pydantic_ai_histories,
    responses_conversations,
    text,
)


def unbound(conv: Conversation) -> Conversation:
    """``conv`` with every binding stripped (imports are never bound)."""
    return conv.with_messages(
        [AssistantMessage.from_parts(m.parts) if isinstance(m, AssistantMessage) else m for m in conv]
    )


def same(a: Conversation, b: Conversation) -> None:
    assert a == b
    # Equality ignores how a single text part was given; the part layout must match too.
    for x, y in zip(a, b, strict=True):
        assert type(x) is type(y)
        assert x.parts == y.parts
    assert a.tools == b.tools
    assert [t.cache for t in a.tools] == [t.cache for t in b.tools]


@given(anthropic_conversations())
def test_anthropic_round_trip(conv: Conversation) -> None:
    exported = ts_anthropic.export_messages(conv)
    back = ts_anthropic.import_messages(
        exported["messages"],
        system=exported.get("system"),
        tools=exported.get("tools"),
        output_config=exported.get("output_config"),
    )
    same(back, conv)
    # Exporting again gives the same dicts: the export is a function of the conversation's value.
    assert ts_anthropic.export_messages(back) == exported


@given(chat_conversations(), st.sampled_from(["reasoning_content", "reasoning"]))
def test_chat_round_trip(conv: Conversation, field: Any) -> None:
    exported = ts_openai.export_chat(conv, reasoning_field=field)
    back = ts_openai.import_chat(
        exported["messages"], tools=exported.get("tools"), response_format=exported.get("response_format")
    )
    same(back, conv)
    assert ts_openai.export_chat(back, reasoning_field=field) == exported


@given(responses_conversations())
def test_responses_round_trip(conv: Conversation) -> None:
    exported = ts_openai.export_responses(conv)
    back = ts_openai.import_responses(exported["input"], tools=exported.get("tools"), text=exported.get("text"))
    same(back, conv)
    assert ts_openai.export_responses(back) == exported


@given(pydantic_ai_conversations())
def test_pydantic_ai_round_trip(conv: Conversation) -> None:
    exported = ts_pydantic_ai.export_messages(conv)
    back = ts_pydantic_ai.import_messages(exported)
    assert list(back) == list(conv), (list(back), list(conv), exported)
    same(back, conv)


@given(pydantic_ai_conversations(), text)
def test_pydantic_ai_instructions_round_trip(conv: Conversation, instructions: str) -> None:
    """The agent's instructions, after the leading system messages, go out as
    every request's ``instructions`` and come back to the same place."""
    at = next((i for i, m in enumerate(conv) if not isinstance(m, SystemMessage)), len(conv))
    with_instructions = conv.with_messages([*conv[:at], SystemMessage(instructions), *conv[at:]])
    exported = ts_pydantic_ai.export_messages(with_instructions, instructions=at)
    requests = [m for m in exported if isinstance(m, ModelRequest)]
    assert requests
    assert all(m.instructions == instructions for m in requests)
    imported = ts_pydantic_ai.import_history(exported)
    same(imported.conversation, with_instructions)
    assert imported.instructions == at
    assert [d.path for d in imported.dropped] == ["tools"]


@given(pydantic_ai_histories())
def test_pydantic_ai_history_round_trips(messages: list[ModelMessage]) -> None:
    """``export(import(x)) == x`` for histories as an Agent writes them: tool
    results of any value (strings above all, also blank ones, None and JSON),
    the same instructions on every request, the system prompt first."""
    imported = ts_pydantic_ai.import_history(messages)
    exported = ts_pydantic_ai.export_messages(imported.conversation, instructions=imported.instructions)
    assert history(exported) == history(messages)


@given(anthropic_conversations())
def test_bound_turns_round_trip_unbound(conv: Conversation) -> None:
    """A bound history exports its bytes; the import is the same history, unbound."""
    bound = conv.rebind(Origin("anthropic", "claude-sonnet-4-5"))
    exported = ts_anthropic.export_messages(bound)
    back = ts_anthropic.import_messages(
        exported["messages"],
        system=exported.get("system"),
        tools=exported.get("tools"),
        output_config=exported.get("output_config"),
    )
    assert back == unbound(bound)
    assert all(m.thinking_binding is None for m in back if isinstance(m, AssistantMessage))


# -- bad input never escapes as anything but ValidationError --------------------------------

shapes = st.recursive(
    json_value
    | st.sampled_from(
        ["user", "assistant", "tool", "system", "text", "image", "tool_result", "function_call", "reasoning"]
    ),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                [
                    "role",
                    "content",
                    "type",
                    "text",
                    "source",
                    "data",
                    "id",
                    "name",
                    "input",
                    "tool_use_id",
                    "is_error",
                    "signature",
                    "thinking",
                    "tool_calls",
                    "function",
                    "arguments",
                    "call_id",
                    "output",
                    "summary",
                    "image_url",
                    "url",
                    "media_type",
                    "x",
                ]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=12,
)


def only_validation_errors(call: Any) -> None:
    error: ValidationError | None = None
    try:
        call()
    except ValidationError as err:
        error = err
    assert error is None or error.path


@given(st.lists(shapes, max_size=3))
def test_anthropic_bad_input_raises_validation_error(messages: Any) -> None:
    only_validation_errors(lambda: ts_anthropic.import_messages(messages))


@given(st.lists(shapes, max_size=3))
def test_chat_bad_input_raises_validation_error(messages: Any) -> None:
    only_validation_errors(lambda: ts_openai.import_chat(messages))


@given(st.lists(shapes, max_size=3))
def test_responses_bad_input_raises_validation_error(items: Any) -> None:
    only_validation_errors(lambda: ts_openai.import_responses(items))


@pytest.mark.parametrize("bad", [None, "text", 3, {"role": "user"}])
def test_not_a_list_names_the_argument(bad: Any) -> None:
    for call in (ts_anthropic.import_messages, ts_openai.import_chat, ts_openai.import_responses):
        with pytest.raises(ValidationError) as info:
            call(bad)
        assert info.value.path in ("messages", "input")
