"""Hypothesis strategies for conversations each interop format can hold."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import strategies as st
from pydantic_ai.messages import (
    ModelMessagesTypeAdapter,
    ModelRequest,
    ModelResponse,
    SystemPromptPart,
    TextPart,
    ToolCallPart,
    ToolReturnPart,
    UserPromptPart,
)

from thinkseal import (
    AssistantMessage,
    CacheBreakpoint,
    Conversation,
    Document,
    Image,
    Message,
    Native,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
)

text = st.text(alphabet="ab \u00e9\u4e2d\n\U0001f600", min_size=1, max_size=6).filter(lambda s: bool(s.strip()))
any_text = st.text(alphabet="ab \u00e9", max_size=4)
word = st.text(alphabet="abcxyz", min_size=1, max_size=5)
signature = st.text(alphabet="ABCabc0123+/=", min_size=1, max_size=8)
ttl = st.sampled_from([None, "5m", "1h"])
scalars = st.one_of(st.none(), st.booleans(), st.integers(-5, 5), word)
json_value = st.recursive(
    scalars, lambda inner: st.lists(inner, max_size=2) | st.dictionaries(word, inner, max_size=2), max_leaves=4
)
json_object = st.dictionaries(word, json_value, max_size=3)
url = word.map(lambda w: f"https://example.com/{w}")
png = st.binary(min_size=1, max_size=8)
title = st.none() | text

images = st.builds(Image, png, st.sampled_from(["image/png", "image/jpeg", "image/webp"])) | st.builds(
    lambda u: Image(url=u), url
)
breakpoints = st.builds(CacheBreakpoint, ttl)
calls = st.builds(ToolCall, word.map(lambda w: f"call_{w}"), word, json_object)
signed = st.builds(ThinkingBlock.Text, any_text, signature)
unsigned = st.builds(ThinkingBlock.Text, text)
redacted = st.builds(ThinkingBlock.Redacted, signature)
parameters = st.just({"type": "object", "properties": {}}) | st.builds(
    lambda k: {"type": "object", "properties": {k: {"type": "string"}}, "required": [k]}, word
)


def sorted_json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True)


def with_breakpoints(parts: list[Any], marks: list[CacheBreakpoint | None]) -> tuple[Any, ...]:
    """``parts`` with the breakpoint ``marks[i]`` (when not None) after part i."""
    out: list[Any] = []
    for part, mark in zip(parts, marks, strict=False):
        out.append(part)
        if mark is not None:
            out.append(mark)
    return tuple(out)


@st.composite
def content(draw: st.DrawFn, kinds: st.SearchStrategy[Any], marks: bool = True) -> Any:
    """String content, or a non-empty list of parts (with breakpoints when ``marks``)."""
    if draw(st.booleans()):
        return draw(text)
    parts = draw(st.lists(kinds, min_size=1, max_size=3))
    if not marks:
        return tuple(parts)
    return with_breakpoints(parts, draw(st.lists(st.none() | breakpoints, min_size=len(parts), max_size=len(parts))))


def tools(cache: bool) -> st.SearchStrategy[list[Tool]]:
    caches = (st.none() | breakpoints) if cache else st.none()
    tool = st.builds(Tool, word, st.just("") | text, parameters, caches)
    return st.lists(tool, max_size=2, unique_by=lambda t: t.name)


# -- Anthropic ---------------------------------------------------------------------------

anthropic_documents = st.one_of(
    st.builds(lambda d, t, c: Document(d, title=t, citations=c), png, title, st.booleans()),
    st.builds(lambda u, t, c: Document(url=u, title=t, citations=c), url, title, st.booleans()),
    st.builds(lambda x, t, c: Document(text=x, title=t, citations=c), text, title, st.booleans()),
)
anthropic_natives = st.builds(
    lambda w, v: Native.of("anthropic", {"type": "search_result", "source": w, "content": v}), word, json_value
)
anthropic_parts = st.one_of(text, images, anthropic_documents, anthropic_natives)
anthropic_assistant_natives = st.one_of(
    st.builds(
        lambda w: Native.of("anthropic", {"type": "server_tool_use", "id": w, "name": "web_search", "input": {}}), word
    ),
    st.builds(
        lambda t: Native.of("anthropic", {"type": "text", "text": t, "citations": [{"type": "char_location"}]}, text=t),
        text,
    ),
)


@st.composite
def anthropic_conversations(draw: st.DrawFn) -> Conversation:
    messages: list[Message] = []
    if draw(st.booleans()):
        messages.append(SystemMessage(draw(content(text))))
    for _ in range(draw(st.integers(0, 5))):
        kind = draw(st.sampled_from(["user", "tool", "assistant"]))
        if kind == "user":
            messages.append(UserMessage(draw(content(anthropic_parts))))
        elif kind == "tool":
            messages.append(ToolMessage(draw(content(anthropic_parts)), draw(word), draw(st.booleans())))
        else:
            parts = draw(st.lists(any_text | calls | signed | redacted | anthropic_assistant_natives, max_size=4))
            messages.append(AssistantMessage.from_parts(parts))
    fmt = draw(st.none() | st.builds(lambda s: {"type": "json_schema", "json_schema": {"schema": s}}, parameters))
    return Conversation(messages, draw(tools(cache=True)), fmt)


# -- OpenAI chat -------------------------------------------------------------------------

chat_documents = st.builds(lambda d, t: Document(d, title=t), png, title)
chat_natives = st.builds(
    lambda w: Native.of("openai", {"type": "input_audio", "input_audio": {"data": w, "format": "wav"}}), word
)
chat_parts = st.one_of(text, images, chat_documents, chat_natives)
openrouter_items = st.builds(
    lambda t, s: ThinkingBlock.Opaque("openrouter", sorted_json({"type": "reasoning.text", "text": t, "signature": s})),
    text,
    signature,
)
refusals = st.builds(lambda t: Native.of("openai", {"type": "refusal", "refusal": t}, text=t), text)


@st.composite
def chat_assistants(draw: st.DrawFn) -> AssistantMessage:
    parts: list[Any] = []
    if draw(st.booleans()):
        parts.append(draw(unsigned))
    parts += draw(st.lists(openrouter_items, max_size=2))
    parts += draw(st.lists(any_text | refusals, max_size=2))
    parts += draw(st.lists(calls, max_size=2))
    return AssistantMessage.from_parts(parts)


@st.composite
def chat_conversations(draw: st.DrawFn) -> Conversation:
    messages: list[Message] = []
    for _ in range(draw(st.integers(0, 6))):
        kind = draw(st.sampled_from(["system", "user", "tool", "assistant"]))
        if kind == "system":
            messages.append(SystemMessage(draw(content(text))))
        elif kind == "user":
            messages.append(UserMessage(draw(content(chat_parts))))
        elif kind == "tool":
            messages.append(ToolMessage(draw(content(chat_parts)), draw(word), draw(st.booleans())))
        else:
            messages.append(draw(chat_assistants()))
    fmt = draw(st.none() | st.builds(lambda o: {"type": "json_schema", "json_schema": o}, json_object))
    return Conversation(messages, draw(tools(cache=True)), fmt)


# -- OpenAI Responses ----------------------------------------------------------------------

responses_documents = st.builds(lambda d, t: Document(d, title=t), png, title) | st.builds(
    lambda u, t: Document(url=u, title=t), url, title
)
responses_natives = st.builds(lambda w: Native.of("openai-responses", {"type": "input_audio", "data": w}), word)
responses_parts = st.one_of(text, images, responses_documents, responses_natives)
item_natives = st.builds(
    lambda w: Native(
        "openai-responses", sorted_json({"type": "web_search_call", "id": f"ws_{w}", "status": "completed"})
    ),
    word,
)


@st.composite
def reasoning_unit(draw: st.DrawFn) -> list[Any]:
    """A reasoning item as the adapter keeps it: its summary text (when it has one), then the item."""
    summary = draw(st.lists(text, max_size=2))
    item: dict[str, Any] = {
        "type": "reasoning",
        "id": f"rs_{draw(word)}",
        "summary": [{"type": "summary_text", "text": s} for s in summary],
    }
    if draw(st.booleans()):
        item["encrypted_content"] = draw(signature)
    joined = "\n\n".join(summary)
    return [
        *([ThinkingBlock.Text(joined)] if joined else []),
        ThinkingBlock.Opaque("openai-responses", sorted_json(item)),
    ]


@st.composite
def responses_conversations(draw: st.DrawFn) -> Conversation:
    messages: list[Message] = []
    for _ in range(draw(st.integers(0, 6))):
        kinds = ["system", "user", "tool"]
        if not messages or not isinstance(messages[-1], AssistantMessage):
            kinds.append("assistant")  # consecutive assistant items make one turn
        kind = draw(st.sampled_from(kinds))
        if kind == "system":
            messages.append(SystemMessage(draw(content(text, marks=False))))
        elif kind == "user":
            messages.append(UserMessage(draw(content(responses_parts, marks=False))))
        elif kind == "tool":
            messages.append(ToolMessage(draw(content(responses_parts, marks=False)), draw(word), draw(st.booleans())))
        else:
            units = draw(
                st.lists(
                    st.one_of(
                        any_text.map(lambda t: [t]),
                        calls.map(lambda c: [c]),
                        item_natives.map(lambda n: [n]),
                        reasoning_unit(),
                    ),
                    min_size=1,
                    max_size=4,
                )
            )
            messages.append(AssistantMessage.from_parts([p for unit in units for p in unit]))
    fmt = draw(
        st.none()
        | st.just({"type": "json_object"})
        | st.builds(lambda n, s: {"type": "json_schema", "json_schema": {"name": n, "schema": s}}, word, parameters)
    )
    return Conversation(messages, draw(tools(cache=False)), fmt)


# -- pydantic-ai -----------------------------------------------------------------------------

pai_documents = st.one_of(
    st.builds(Document, png),
    st.builds(lambda u: Document(url=u), url),
    st.builds(lambda x: Document(text=x), text),
)
pai_parts = st.one_of(text, images, pai_documents)


@st.composite
def pydantic_ai_conversations(draw: st.DrawFn) -> Conversation:
    messages: list[Message] = []
    call_ids: list[str] = []
    for n in range(draw(st.integers(0, 6))):
        kind = draw(
            st.sampled_from(["system", "user", "tool", "assistant"] if call_ids else ["system", "user", "assistant"])
        )
        if kind == "system":
            messages.append(SystemMessage(draw(text)))
        elif kind == "user":
            parts = draw(st.lists(pai_parts, min_size=1, max_size=3))
            marks = draw(
                st.lists(
                    st.none() | st.builds(CacheBreakpoint, st.sampled_from([None, "1h"])),
                    min_size=len(parts),
                    max_size=len(parts),
                )
            )
            messages.append(UserMessage(draw(text) if draw(st.booleans()) else with_breakpoints(parts, marks)))
        elif kind == "tool":
            messages.append(ToolMessage(draw(text), draw(st.sampled_from(call_ids)), draw(st.booleans())))
        else:
            units = draw(
                st.lists(
                    st.one_of(
                        any_text.map(lambda t: [t]),
                        calls.map(lambda c: [c]),
                        signed.map(lambda b: [b]),
                        redacted.map(lambda b: [b]),
                        unsigned.map(lambda b: [b]),
                        reasoning_unit(),
                    ),
                    max_size=4,
                )
            )
            parts = [p for unit in units for p in unit]
            # Unique reasoning item ids: pydantic-ai groups the parts of one item by id.
            fixed = []
            for k, part in enumerate(parts):
                if isinstance(part, ThinkingBlock.Opaque):
                    item = {**json.loads(part.data), "id": f"rs_{n}_{k}"}
                    fixed.append(ThinkingBlock.Opaque("openai-responses", sorted_json(item)))
                else:
                    fixed.append(part)
            message = AssistantMessage.from_parts(fixed)
            call_ids += [c.id for c in message.tool_calls]
            messages.append(message)
    return Conversation(messages)


# -- pydantic-ai histories, as an Agent run writes them ----------------------------------------

tool_return_values = st.one_of(
    text,  # most tools return a string
    st.sampled_from(["", "  ", '{"temp": 18}', "[tool error] x"]),
    st.none(),
    json_value,
    st.lists(text, max_size=2),
)


@st.composite
def pydantic_ai_histories(draw: st.DrawFn) -> list[Any]:
    """Requests and responses in turn: the system prompt opening the first
    request, the same instructions on every request, tool results (string or
    not, failed or not) answering the calls of the response before them."""
    instructions = draw(st.none() | text)
    opening = [SystemPromptPart(draw(text))] if draw(st.booleans()) else []
    out: list[Any] = [ModelRequest(parts=[*opening, UserPromptPart(draw(text))], instructions=instructions)]
    for n in range(draw(st.integers(0, 3))):
        parts: list[Any] = [TextPart(draw(text))] if draw(st.booleans()) else []
        calls = [ToolCallPart(draw(word), draw(json_object), f"call_{n}_{k}") for k in range(draw(st.integers(0, 2)))]
        out.append(ModelResponse(parts=[*parts, *calls] or [TextPart(draw(text))]))
        returns = [
            ToolReturnPart(
                call.tool_name,
                draw(tool_return_values),
                call.tool_call_id,
                outcome=draw(st.sampled_from(["success", "failed"])),
            )
            for call in calls
        ]
        follow = [UserPromptPart(draw(text))] if draw(st.booleans()) or not returns else []
        out.append(ModelRequest(parts=[*returns, *follow], instructions=instructions))
    return out


def history(messages: list[Any]) -> Any:
    """What a pydantic-ai history says: each message's kind, parts and
    instructions, as pydantic-ai writes them as JSON, without the times, ids,
    usage and run metadata it stamps on each run (none of which a model is sent)."""
    out = []
    for message in ModelMessagesTypeAdapter.dump_python(messages, mode="json"):
        parts = [{k: v for k, v in part.items() if k != "timestamp"} for part in message["parts"]]
        entry = {"kind": message["kind"], "parts": parts}
        if message["kind"] == "request":
            entry["instructions"] = message["instructions"]
        out.append(entry)
    return out
