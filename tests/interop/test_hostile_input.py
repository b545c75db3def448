"""Hostile input to every import function of ``thinkseal.interop``: values
nested far deeper than ``Limits.max_depth``, values that are not JSON, NaN,
object keys that are not strings, lone surrogates and strings over
``Limits.max_string`` give a ``ValidationError`` naming the offending field,
never ``RecursionError``, ``TypeError``, ``KeyError`` or ``AttributeError``."""

from __future__ import annotations

import copy
import dataclasses
import datetime
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from pydantic_ai.messages import (
    BinaryContent,
    CachePoint,
    ImageUrl,
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    NativeToolCallPart,
    SystemPromptPart,
    TextPart,
    ThinkingPart,
    ToolAvailabilityDeltaPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
    tool_return_ta,
)

import thinkseal
from thinkseal import Limits, Native, ValidationError
from thinkseal.interop import anthropic as ts_anthropic
from thinkseal.interop import openai as ts_openai
from thinkseal.interop import pydantic_ai as ts_pydantic_ai


class Nested(list[Any]):
    """A deeply nested list that a failing test can still print."""

    def __repr__(self) -> str:
        return "<nested list>"


def nest(levels: int) -> list[Any]:
    """A list nested ``levels`` deep, built without recursion."""
    root: list[Any] = Nested()
    inner = root
    for _ in range(levels - 1):
        inner.append([])
        inner = inner[0]
    return root


class Huge(int):
    """An integer too long to write as text (Python's int digit limit), that a failing test can still print."""

    def __repr__(self) -> str:
        return "<10**5000>"


DEEP = nest(100_000)
HUGE = Huge(10**5000)
MAX_DEPTH = thinkseal.limits().max_depth
SHORT_STRINGS = 200


@contextmanager
def short_strings() -> Iterator[None]:
    """``Limits.max_string`` of ``SHORT_STRINGS`` for the block (so an over-long string is cheap to make)."""
    before = thinkseal.set_limits(Limits(max_string=SHORT_STRINGS))
    try:
        yield
    finally:
        thinkseal.set_limits(before)


# Where each import function keeps a free JSON value ``v`` (a block kept as
# Native, tool-call arguments, a tool return), and the path of the JSON value
# that holds it: depth counts from that value, as the core counts a ToolCall's
# arguments from the arguments object.
def anthropic_block(v: Any) -> Any:
    return ts_anthropic.import_messages([{"role": "assistant", "content": [{"type": "weird", "v": v}]}])


def anthropic_input(v: Any) -> Any:
    block = {"type": "tool_use", "id": "c1", "name": "f", "input": {"v": v}}
    return ts_anthropic.import_messages([{"role": "assistant", "content": [block]}])


def chat_part(v: Any) -> Any:
    return ts_openai.import_chat([{"role": "user", "content": [{"type": "weird", "v": v}]}])


def chat_arguments(v: Any) -> Any:
    call = {"id": "c1", "type": "function", "function": {"name": "f", "arguments": {"v": v}}}
    return ts_openai.import_chat([{"role": "assistant", "tool_calls": [call]}])


def responses_item(v: Any) -> Any:
    return ts_openai.import_responses([{"type": "weird", "v": v}])


def responses_reasoning(v: Any) -> Any:
    return ts_openai.import_responses([{"type": "reasoning", "id": "rs_1", "summary": [], "v": v}])


def pydantic_ai_tool_return(v: Any) -> Any:
    return ts_pydantic_ai.import_messages(
        [
            ModelRequest(parts=[UserPromptPart("q")]),
            ModelResponse(parts=[ToolCallPart("f", {}, "c1")]),
            ModelRequest(parts=[ToolReturnPart("f", {"v": v}, "c1")]),
        ]
    )


def pydantic_ai_args(v: Any) -> Any:
    return ts_pydantic_ai.import_messages([ModelResponse(parts=[ToolCallPart("f", {"v": v}, "c1")])])


def pydantic_ai_native_call(v: Any) -> Any:
    return ts_pydantic_ai.import_messages([ModelResponse(parts=[NativeToolCallPart("web_search", {"v": v}, "s1")])])


# (plant, the path of ``v``, its level: the value holding it is level 1)
PLANTS: list[tuple[Callable[[Any], Any], str, int]] = [
    (anthropic_block, "messages[0].content[0].v", 2),
    (anthropic_input, "messages[0].content[0].input.v", 2),
    (chat_part, "messages[0].content[0].v", 2),
    (chat_arguments, "messages[0].tool_calls[0].function.arguments.v", 2),
    (responses_item, "input[0].v", 2),
    (responses_reasoning, "input[0].v", 2),
    (pydantic_ai_tool_return, "messages[2].parts[0].content.v", 3),  # kept in a native block's object
    (pydantic_ai_args, "messages[0].parts[0].args.v", 2),
    (pydantic_ai_native_call, "messages[0].parts[0].args.v", 3),  # the part is kept whole
]
plant_ids = [plant.__name__ for plant, _, _ in PLANTS]


def refused(call: Callable[[], Any]) -> ValidationError:
    with pytest.raises(ValidationError) as info:
        call()
    return info.value


def over_the_limit(at: str, level: int) -> str:
    """The path of the first list nested in ``v`` past ``Limits.max_depth``."""
    return at + "[0]" * (MAX_DEPTH + 1 - level)


@pytest.mark.parametrize(("plant", "at", "level"), PLANTS, ids=plant_ids)
def test_a_value_nested_100000_deep_is_refused_at_the_level_over_the_limit(
    plant: Callable[[Any], Any], at: str, level: int
) -> None:
    err = refused(lambda: plant(DEEP))
    assert err.path == over_the_limit(at, level)
    assert "Limits.max_depth" in str(err)


@pytest.mark.parametrize(("plant", "at", "level"), PLANTS, ids=plant_ids)
def test_a_value_just_over_the_depth_limit_is_refused_and_one_at_it_is_kept(
    plant: Callable[[Any], Any], at: str, level: int
) -> None:
    plant(nest(MAX_DEPTH + 1 - level))  # v's lists fill the levels up to the limit
    err = refused(lambda: plant(nest(MAX_DEPTH + 2 - level)))
    assert err.path == over_the_limit(at, level)


NOT_JSON: list[tuple[str, Any, str, str]] = [
    ("nan", float("nan"), "", "NaN"),
    ("infinity", [1, float("inf")], "[1]", "Infinity"),
    ("object", object(), "", "not a JSON value"),
    ("bytes", {"ok": b"\xff"}, ".ok", "not a JSON value"),
    ("int-key", {1: "one"}, "", "not a string"),
    ("surrogate-value", {"k": "\ud800"}, ".k", "surrogate"),
    ("surrogate", "\udfff", "", "surrogate"),
    ("huge-int", HUGE, "", "too large"),
]


@pytest.mark.parametrize(
    ("plant", "at", "value", "where", "words"),
    [
        pytest.param(plant, at, value, where, words, id=f"{name}-{plant.__name__}")
        for plant, at, _ in PLANTS
        for name, value, where, words in NOT_JSON
        # pydantic-ai writes bytes in a tool return as base64: test_a_tool_return_is_kept_as_pydantic_ai_writes_it
        if not (plant is pydantic_ai_tool_return and name == "bytes")
    ],
)
def test_values_that_are_not_json_are_refused_at_their_path(
    plant: Callable[[Any], Any], at: str, value: Any, where: str, words: str
) -> None:
    err = refused(lambda: plant(value))
    assert err.path == f"{at}{where}"
    assert words in str(err)


@pytest.mark.parametrize(("plant", "at", "level"), PLANTS, ids=plant_ids)
def test_a_string_over_the_string_limit_is_refused_at_its_path(
    plant: Callable[[Any], Any], at: str, level: int
) -> None:
    with short_strings():
        err = refused(lambda: plant(["x" * (SHORT_STRINGS + 1)]))
    assert err.path == f"{at}[0]"
    assert "Limits.max_string" in str(err)


def test_a_tool_return_is_kept_as_pydantic_ai_writes_it() -> None:
    """Python values pydantic-ai serializes (bytes, dates, sets) are not refused:
    the kept JSON is what pydantic-ai itself writes for the tool return."""
    value = {"raw": b"\xff", "when": datetime.date(2025, 1, 2), "tags": frozenset({"a"})}
    conv = pydantic_ai_tool_return(value)
    kept = conv[2].parts[0]
    assert isinstance(kept, Native)
    assert kept.value == {"type": "tool-return", "content": {"v": tool_return_ta.dump_python(value, mode="json")}}


@pytest.mark.parametrize(
    ("call", "path"),
    [
        (
            lambda text: ts_openai.import_responses(
                [{"type": "function_call", "call_id": "c1", "name": "f", "arguments": text}]
            ),
            "input[0].arguments",
        ),
        (
            lambda text: ts_openai.import_chat(
                [{"role": "assistant", "tool_calls": [{"id": "c1", "function": {"name": "f", "arguments": text}}]}]
            ),
            "messages[0].tool_calls[0].function.arguments",
        ),
        (
            lambda text: ts_pydantic_ai.import_messages([ModelResponse(parts=[ToolCallPart("f", text, "c1")])]),
            "messages[0].parts[0].args",
        ),
    ],
    ids=["responses", "chat", "pydantic-ai"],
)
def test_arguments_given_as_json_text_are_held_to_the_same_limits(call: Callable[[str], Any], path: str) -> None:
    assert refused(lambda: call("[" * 100_000)).path == path
    deep = '{"v":' + "[" * MAX_DEPTH + "]" * MAX_DEPTH + "}"
    assert refused(lambda: call(deep)).path == f"{path}.v" + "[0]" * (MAX_DEPTH - 1)
    assert refused(lambda: call('{"v": NaN}')).path == f"{path}.v"
    with short_strings():
        assert refused(lambda: call('{"v": "' + "x" * SHORT_STRINGS + '"}')).path == path


@pytest.mark.parametrize(
    ("call", "path"),
    [
        (lambda v: ts_anthropic.import_messages([], tools=[{"name": "f", "input_schema": v}]), "tools[0].input_schema"),
        (
            lambda v: ts_anthropic.import_messages([], output_config={"format": {"type": "json_schema", "schema": v}}),
            "output_config.format.schema",
        ),
        (
            lambda v: ts_openai.import_chat(
                [], tools=[{"type": "function", "function": {"name": "f", "parameters": v}}]
            ),
            "tools[0].function.parameters",
        ),
        (lambda v: ts_openai.import_chat([], response_format=v), "response_format"),
        (
            lambda v: ts_openai.import_responses([], tools=[{"type": "function", "name": "f", "parameters": v}]),
            "tools[0].parameters",
        ),
        (lambda v: ts_openai.import_responses([], text={"format": v}), "text.format"),
    ],
    ids=["anthropic-tools", "anthropic-output", "chat-tools", "chat-format", "responses-tools", "responses-format"],
)
def test_schemas_and_formats_are_refused_at_their_own_path(call: Callable[[Any], Any], path: str) -> None:
    schema = {"type": "json_schema", "properties": {"v": DEEP}}
    assert refused(lambda: call(schema)).path == f"{path}.properties.v" + "[0]" * (MAX_DEPTH - 2)
    assert refused(lambda: call({"type": "json_schema", "x": float("nan")})).path == f"{path}.x"
    assert refused(lambda: call({"type": "json_schema", 1: "x"})).path == path


@pytest.mark.parametrize(
    ("call", "path"),
    [
        (
            lambda: ts_anthropic.import_messages(
                [{"role": "user", "content": [{"type": "tool_result", "tool_use_id": "c", "content": "x", 7: 1}]}]
            ),
            "messages[0].content[0]",
        ),
        (lambda: ts_openai.import_chat([{"role": "user", "content": "x", 7: 1}]), "messages[0]"),
        (lambda: ts_openai.import_responses([{"role": "user", "content": "x", None: 1}]), "input[0]"),
    ],
    ids=["anthropic", "chat", "responses"],
)
def test_an_object_key_that_is_not_a_string_is_named(call: Callable[[], Any], path: str) -> None:
    err = refused(call)
    assert err.path == path
    assert "not a string" in str(err)


def test_a_huge_role_is_not_repeated_in_the_message() -> None:
    with short_strings():
        err = refused(lambda: ts_openai.import_chat([{"role": "x" * 10_000, "content": "q"}]))
    assert err.path == "messages[0].role"
    assert len(str(err)) < 300


# -- the properties: only ValidationError (with a path) ever escapes ------------------------------

hostile_leaves = st.sampled_from(
    [
        float("nan"),
        float("-inf"),
        object(),
        b"bytes",
        frozenset({1}),
        "\ud800",
        "x" * (SHORT_STRINGS + 1),
        HUGE,
        DEEP,
        nest(MAX_DEPTH + 1),
        [nest(MAX_DEPTH - 1)],
        {1: "x"},
        {None: "x"},
        "[" * 5000,  # JSON text nested past the json module's own recursion limit
    ]
)
keys = st.sampled_from(
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
        "reasoning_details",
        "reasoning_content",
        "cache_control",
        "file",
        "file_data",
        "input_schema",
        "parameters",
        "kind",
        "parts",
        "part_kind",
        "tool_name",
        "args",
        "tool_call_id",
        "instructions",
    ]
)
words = st.sampled_from(
    [
        "user",
        "assistant",
        "tool",
        "system",
        "developer",
        "text",
        "image",
        "document",
        "tool_use",
        "tool_result",
        "thinking",
        "redacted_thinking",
        "function_call",
        "function_call_output",
        "reasoning",
        "message",
        "input_text",
        "output_text",
        "base64",
        "ephemeral",
        "request",
        "response",
        "user-prompt",
        "tool-return",
        "tool-call",
        "system-prompt",
        "{}",
        "[",
        "x",
    ]
)
hostile = st.recursive(
    st.none() | st.booleans() | st.integers(-2, 2) | words | hostile_leaves,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(keys, inner, max_size=4),
    max_leaves=10,
)
hostile_lists = st.lists(hostile, max_size=3) | hostile


def only_validation_errors(call: Callable[[], Any]) -> None:
    """Run ``call`` with short strings; any error it raises is a ValidationError with a path."""
    error: ValidationError | None = None
    with short_strings():
        try:
            call()
        except ValidationError as err:
            error = err
    assert error is None or error.path


# Valid documents of each format, each mutated at up to three places: a member
# replaced by a hostile value, or one added. Random shapes alone rarely get past
# the first field a converter checks; a mutated real document reaches every branch.
PNG = "iVBORw0KGgo="
PDF = "data:application/pdf;base64,JVBERi0xLjc="
SCHEMA = {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}
ANTHROPIC = {
    "system": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
    "messages": [
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Weather?"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": PNG}},
                {"type": "document", "source": {"type": "text", "media_type": "text/plain", "data": "d"}, "title": "t"},
                {"type": "document", "source": {"type": "url", "url": "https://example.com/r.pdf"}},
            ],
        },
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Look it up.", "signature": "c2ln"},
                {"type": "redacted_thinking", "data": "cmVk"},
                {"type": "text", "text": "Checking."},
                {"type": "tool_use", "id": "c1", "name": "get_weather", "input": {"city": "Paris"}},
                {"type": "server_tool_use", "id": "s1", "name": "web_search", "input": {"query": "paris"}},
            ],
        },
        {
            "role": "user",
            "content": [
                {"type": "tool_result", "tool_use_id": "c1", "content": [{"type": "text", "text": "18"}]},
                {"type": "text", "text": "Thanks", "cache_control": {"type": "ephemeral"}},
            ],
        },
        {"role": "assistant", "content": "Done."},
    ],
    "tools": [{"name": "get_weather", "description": "Weather", "input_schema": SCHEMA}],
    "output_config": {"format": {"type": "json_schema", "schema": SCHEMA}},
}
CHAT = {
    "messages": [
        {"role": "system", "content": [{"type": "text", "text": "Be brief.", "cache_control": {"type": "ephemeral"}}]},
        {
            "role": "user",
            "content": [
                {"type": "text", "text": "Weather?"},
                {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}},
                {"type": "file", "file": {"file_data": PDF, "filename": "r.pdf"}},
                {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            ],
        },
        {
            "role": "assistant",
            "reasoning_content": "Look it up.",
            "reasoning_details": [{"type": "reasoning.text", "text": "Look it up.", "signature": "c2ln"}],
            "content": [{"type": "text", "text": "Checking."}, {"type": "refusal", "refusal": "no"}],
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "name": "get_weather", "content": "[tool error] timeout"},
        {"role": "assistant", "content": "Done.", "refusal": "partly"},
    ],
    "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": SCHEMA}}],
    "response_format": {"type": "json_schema", "json_schema": {"name": "answer", "schema": SCHEMA}},
}
RESPONSES = {
    "input": [
        {"role": "developer", "content": [{"type": "input_text", "text": "Be brief."}]},
        {
            "role": "user",
            "content": [
                {"type": "input_text", "text": "Weather?"},
                {"type": "input_image", "image_url": "https://example.com/p.png", "detail": "auto"},
                {"type": "input_file", "file_data": PDF, "filename": "r.pdf"},
                {"type": "input_file", "file_url": "https://example.com/r.pdf"},
            ],
        },
        {
            "type": "reasoning",
            "id": "rs_1",
            "summary": [{"type": "summary_text", "text": "Look."}],
            "encrypted_content": "e",
        },
        {
            "type": "function_call",
            "call_id": "c1",
            "name": "get_weather",
            "arguments": '{"city":"Paris"}',
            "id": "fc_1",
        },
        {"type": "function_call_output", "call_id": "c1", "output": [{"type": "input_text", "text": "18"}]},
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "status": "completed",
            "content": [{"type": "output_text", "text": "Done.", "annotations": []}],
        },
        {"type": "web_search_call", "id": "ws_1", "status": "completed", "action": {"query": "paris"}},
    ],
    "instructions": "Answer in one sentence.",
    "tools": [{"type": "function", "name": "get_weather", "parameters": SCHEMA}],
    "text": {"format": {"type": "json_schema", "name": "answer", "schema": SCHEMA}},
}


def spots(doc: Any) -> list[tuple[Any, Any]]:
    """Every place in ``doc`` a value can be put: each member of each object and
    array, and a new member of each (key None, to be drawn)."""
    out: list[tuple[Any, Any]] = []
    stack = [doc]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            out += [(node, None), *((node, k) for k in node)]
            stack += node.values()
        elif isinstance(node, list):
            out += [(node, None), *((node, i) for i in range(len(node)))]
            stack += node
    return out


@st.composite
def mutated(draw: st.DrawFn, seed: Any) -> Any:
    doc = copy.deepcopy(seed)
    places = spots(doc)
    for _ in range(draw(st.integers(1, 4))):
        container, key = draw(st.sampled_from(places))
        value = draw(st.one_of(hostile_leaves, hostile_leaves, hostile))  # mostly a hostile value itself
        if isinstance(container, list):
            if key is None:
                container.append(value)
            else:
                container[key] = value
        else:
            container[draw(keys | st.sampled_from([1, None])) if key is None else key] = value
    return doc


@given(mutated(ANTHROPIC))
def test_anthropic_import_of_a_spoiled_history_raises_only_validation_errors(doc: Any) -> None:
    only_validation_errors(
        lambda: ts_anthropic.import_messages(
            doc.get("messages"),
            system=doc.get("system"),
            tools=doc.get("tools"),
            output_config=doc.get("output_config"),
        )
    )


@given(mutated(CHAT))
def test_chat_import_of_a_spoiled_history_raises_only_validation_errors(doc: Any) -> None:
    only_validation_errors(
        lambda: ts_openai.import_chat(
            doc.get("messages"), tools=doc.get("tools"), response_format=doc.get("response_format")
        )
    )


@given(mutated(RESPONSES))
def test_responses_import_of_a_spoiled_history_raises_only_validation_errors(doc: Any) -> None:
    only_validation_errors(
        lambda: ts_openai.import_responses(
            doc.get("input"), instructions=doc.get("instructions"), tools=doc.get("tools"), text=doc.get("text")
        )
    )


def test_the_seed_histories_import() -> None:
    """The documents the properties spoil are valid as they stand."""
    assert ts_anthropic.import_messages(
        ANTHROPIC["messages"],
        system=ANTHROPIC["system"],
        tools=ANTHROPIC["tools"],
        output_config=ANTHROPIC["output_config"],
    )
    assert ts_openai.import_chat(CHAT["messages"], tools=CHAT["tools"], response_format=CHAT["response_format"])
    assert ts_openai.import_responses(
        RESPONSES["input"], instructions=RESPONSES["instructions"], tools=RESPONSES["tools"], text=RESPONSES["text"]
    )
    assert ts_pydantic_ai.import_messages(pydantic_ai_seed())


@given(hostile_lists, hostile, hostile, hostile)
def test_anthropic_import_raises_only_validation_errors(messages: Any, system: Any, tools: Any, output: Any) -> None:
    only_validation_errors(lambda: ts_anthropic.import_messages(messages))
    only_validation_errors(lambda: ts_anthropic.import_messages([], system=system, tools=tools, output_config=output))


@given(hostile_lists, hostile, hostile)
def test_chat_import_raises_only_validation_errors(messages: Any, tools: Any, fmt: Any) -> None:
    only_validation_errors(lambda: ts_openai.import_chat(messages))
    only_validation_errors(lambda: ts_openai.import_chat([], tools=tools, response_format=fmt))


@given(hostile_lists, hostile, hostile, hostile)
def test_responses_import_raises_only_validation_errors(items: Any, instructions: Any, tools: Any, text: Any) -> None:
    only_validation_errors(lambda: ts_openai.import_responses(items))
    only_validation_errors(lambda: ts_openai.import_responses([], instructions=instructions, tools=tools, text=text))


# pydantic-ai takes objects: valid parts with any of their fields set to a hostile value
# (dataclasses check nothing on assignment), and message dicts in pydantic-ai's JSON form.
def spoiled(part: Any, field: str, value: Any) -> Any:
    setattr(part, field, value)
    return part


part_fields = {
    "request": [
        (lambda: UserPromptPart("q"), ["content"]),
        (lambda: ToolReturnPart("f", "r", "c1"), ["content", "tool_call_id", "outcome", "tool_name"]),
    ],
    "response": [
        (lambda: TextPart("a"), ["content", "provider_details", "id"]),
        (lambda: ToolCallPart("f", {}, "c1"), ["args", "tool_call_id", "tool_name"]),
        (
            lambda: ThinkingPart("t", signature="s", provider_name="anthropic"),
            ["content", "signature", "id", "provider_name", "provider_details"],
        ),
        (lambda: NativeToolCallPart("web_search", {}, "s1"), ["args", "tool_name", "provider_details"]),
    ],
}


@st.composite
def hostile_parts(draw: st.DrawFn, side: str) -> Any:
    make, fields = draw(st.sampled_from(part_fields[side]))
    part = make()
    if draw(st.booleans()):
        part = spoiled(part, draw(st.sampled_from(fields)), draw(hostile))
    return part


@st.composite
def hostile_messages(draw: st.DrawFn) -> Any:
    kind = draw(st.sampled_from(["request", "response", "dict", "other"]))
    if kind == "dict":
        return draw(st.dictionaries(keys, hostile, max_size=4))
    if kind == "other":
        return draw(hostile)
    parts = draw(st.lists(hostile_parts(kind) | hostile, max_size=3))
    message = ModelRequest(parts=[]) if kind == "request" else ModelResponse(parts=[])
    message.parts = parts  # past the constructor's checks, as a hand-built history could be
    if kind == "request" and draw(st.booleans()):
        message.instructions = draw(hostile)
    return message


@given(st.lists(hostile_messages(), max_size=3) | hostile)
def test_pydantic_ai_import_raises_only_validation_errors(messages: Any) -> None:
    only_validation_errors(lambda: ts_pydantic_ai.import_messages(messages))


def pydantic_ai_seed() -> list[Any]:
    return [
        ModelRequest(
            parts=[
                SystemPromptPart("Be brief."),
                UserPromptPart(
                    [
                        "Weather?",
                        ImageUrl("https://example.com/p.png"),
                        BinaryContent(b"RIFF", media_type="audio/wav"),
                        CachePoint(),
                    ]
                ),
            ],
            instructions="Answer in one sentence.",
        ),
        ModelResponse(
            parts=[
                ThinkingPart("Look it up.", signature="c2ln", provider_name="anthropic"),
                ThinkingPart("Step.", id="rs_1", signature="gAAA", provider_name="openai"),
                ThinkingPart("More.", id="rs_1", provider_name="openai"),
                TextPart("Checking."),
                ToolCallPart("get_weather", {"city": "Paris"}, "c1"),
                NativeToolCallPart("web_search", {"query": "paris"}, "s1", provider_name="anthropic"),
            ]
        ),
        ModelRequest(
            parts=[
                ToolReturnPart("get_weather", {"temp": 18}, "c1"),
                UserPromptPart("Thanks"),
                ToolAvailabilityDeltaPart(tools_added=["get_time"]),
            ],
            instructions="Answer in one sentence.",
        ),
        ModelResponse(parts=[TextPart("Done.")]),
    ]


@st.composite
def spoiled_history(draw: st.DrawFn) -> list[Any]:
    """The seed history with up to three fields of its parts (or of a message) set to a hostile value."""
    messages = pydantic_ai_seed()
    targets = [*messages, *(part for message in messages for part in message.parts)]
    for _ in range(draw(st.integers(1, 3))):
        target = draw(st.sampled_from(targets))
        fields = [f.name for f in dataclasses.fields(target) if f.name != "part_kind"]
        setattr(target, draw(st.sampled_from(fields)), draw(hostile_leaves | hostile))
    return messages


@given(spoiled_history())
def test_pydantic_ai_import_of_a_spoiled_history_raises_only_validation_errors(messages: Any) -> None:
    only_validation_errors(lambda: ts_pydantic_ai.import_messages(messages))


@given(mutated(ModelMessagesTypeAdapter.dump_python(pydantic_ai_seed(), mode="json")))
def test_pydantic_ai_import_of_a_spoiled_json_history_raises_only_validation_errors(stored: Any) -> None:
    only_validation_errors(lambda: ts_pydantic_ai.import_messages(stored))
