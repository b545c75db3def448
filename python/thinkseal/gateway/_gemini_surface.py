"""Google's ``generateContent`` and ``streamGenerateContent`` as the gateway
serves them, for ``gemini`` (``/v1beta/models/{model}:generateContent``) and
``vertex-gemini`` (``/v1/projects/{p}/locations/{l}/publishers/google/models/{model}:...``).

The model and whether the answer streams are named in the path, not the body:
the route's model map rewrites the path. A request body is read into a
``Conversation`` the way the adapter reads Gemini's own replies, so a model
content the client re-sends as it got it is the very message the ledger
recorded (``_gemini_reply.Gathering``: thought parts, each signature before
its part, ids made for calls Gemini gave none), and a function response
answers the call the adapter would pair it with (its id, else by name and
order). A turn that goes out unsealed is the adapter's own model content for
it (``_gemini.Wire``), with Gemini 3's dummy signature where the adapter puts one.

User and system parts other than plain text, and function-response media,
are kept as the adapter's ``Native`` parts; tools other than function
declarations (Google Search, code execution, ...) are not modelled and pass
through untouched, as does every member thinkseal does not read.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from functools import partial
from typing import Any, Final

from .._content import ContentPart
from .._conversation import Conversation
from .._errors import ThinksealError, ValidationError
from .._messages import AssistantMessage, Message, SystemMessage, ToolMessage, UserMessage
from .._tool import Tool
from ..interop._common import made
from ..providers import Provider
from ..providers._gemini import Wire, strict_model
from ..providers._gemini_reply import Gathering, key, native
from ..providers._response import Node
from ._read_cache import DEFAULT_BYTES, ReadCache
from ._surfaces import Elements, Incoming, ModelInPath, json_of

__all__ = ["GeminiGenerate"]

# The Gemini API's path (any API version) and Vertex AI's publisher-model path.
_PATH: Final = re.compile(
    r"(?P<head>/v1[a-z0-9]*/(?:projects/[^/]+/locations/[^/]+/publishers/google/)?models/)"
    r"(?P<model>[^/:]+):(?P<action>generateContent|streamGenerateContent)"
)


class GeminiGenerate(ModelInPath):
    """``generateContent`` / ``streamGenerateContent`` of ``gemini`` and ``vertex-gemini``."""

    field = "contents"
    path = _PATH

    def __init__(self, adapter: Provider, cache_bytes: int = DEFAULT_BYTES) -> None:
        super().__init__(adapter, cache_bytes)
        self._read: ReadCache[tuple[Message, ...]] = ReadCache(cache_bytes)

    def read(self, body: Mapping[str, Any], path: str) -> Incoming:
        match = self.matched(path, "generateContent")
        model = match["model"]
        conversation, turns = import_contents(body, self.adapter.id)
        return Incoming(conversation, self.field, turns, model, match["action"] == "streamGenerateContent")

    reads_elements = True

    def read_elements(self, body: dict[str, Any], elements: Elements, path: str) -> Incoming:
        """A content is kept under the digest of its bytes and of the model
        content before it (a user content's function responses answer that
        turn's calls)."""
        match = self.matched(path, "generateContent")
        context, _ = import_contents({**body, "contents": []}, self.adapter.id)
        messages: list[Message] = [self._read.same(m) for m in context.messages]
        turns: dict[int, int] = {}
        after = b""  # the digest of the last model content
        last: AssistantMessage | None = None
        for i in range(len(elements)):
            digest = elements.digest(i)
            read = self._read.get(digest + after, partial(self._content, elements, i, last), elements.size(i))
            if len(read) == 1 and isinstance(read[0], AssistantMessage):
                turns[len(messages)] = i
                last, after = read[0], digest
            messages.extend(read)
        conversation = Conversation(messages, context.tools, context.response_format)
        return Incoming(conversation, self.field, turns, match["model"], match["action"] == "streamGenerateContent")

    def _content(self, elements: Elements, index: int, last: AssistantMessage | None) -> tuple[Message, ...]:
        """Content ``index``: its model turn, or the messages of a user content."""
        content = json_of(elements.raw(index))
        where = f"contents[{index}]"
        if not isinstance(content, Mapping):
            raise ValidationError(f"{where}: expected an object", path=where)
        role = content.get("role")
        if role == "model":
            return (_model(content, self.adapter.id, where),)
        if role in ("user", "function", None):
            return tuple(_user(content, self.adapter.id, where, last))
        raise ValidationError(f"{where}.role: expected 'user' or 'model', got {role!r}", path=f"{where}.role")

    def turn_wire(self, turn: AssistantMessage) -> object | None:
        return self.turn_wire_to(turn, None)

    def wire_edits(
        self, incoming: Incoming, index: int, sent: AssistantMessage, model: str
    ) -> dict[int, object | None]:
        return {incoming.turns[index]: self.turn_wire_to(sent, model)}

    def turn_wire_to(self, turn: AssistantMessage, model: str | None) -> object | None:
        """The adapter's model content for ``turn`` as sent to ``model``, whose
        generation decides Gemini 3's dummy signature (unknown: as Gemini 3, as
        the adapter counts a name it does not know)."""
        wire = Wire(self.adapter.id, strict_model(model) if model else True)
        if not wire.goes_out(turn):
            return None  # nothing of it goes out: the contents around it stand together
        return wire.model_wire(turn)


# -- reading a request body --------------------------------------------------------------


def import_contents(body: Mapping[str, Any], provider: str) -> tuple[Conversation, dict[int, int]]:
    """The conversation of a ``generateContent`` body and, for each model turn,
    its content's index in ``contents``. Bad input raises ``ValidationError``
    naming the field."""
    try:
        return _import(body, provider)
    except ValidationError:
        raise
    except ThinksealError as err:  # the reply reader's errors, about a re-sent model content
        where = getattr(err, "path", None) or "contents"
        raise ValidationError(f"{where}: {err}", path=where) from None


def _import(body: Mapping[str, Any], provider: str) -> tuple[Conversation, dict[int, int]]:
    contents = _member(body, "contents")
    if not isinstance(contents, list):
        raise ValidationError("contents: expected a list", path="contents")
    messages: list[Message] = []
    system = _member(body, "systemInstruction")
    if system is not None:
        messages.append(_system(system, provider))
    turns: dict[int, int] = {}
    last: AssistantMessage | None = None
    for i, content in enumerate(contents):
        where = f"contents[{i}]"
        if not isinstance(content, Mapping):
            raise ValidationError(f"{where}: expected an object", path=where)
        role = content.get("role")
        if role == "model":
            last = _model(content, provider, where)
            turns[len(messages)] = i
            messages.append(last)
        elif role in ("user", "function", None):
            messages.extend(_user(content, provider, where, last))
        else:
            raise ValidationError(f"{where}.role: expected 'user' or 'model', got {role!r}", path=f"{where}.role")
    tools = _tools(_member(body, "tools"))
    fmt = _response_format(_member(body, "generationConfig"))
    try:
        return Conversation(messages, tools, fmt), turns
    except ValidationError as err:
        raise ValidationError(f"contents: {err}", path="contents") from None


def _member(value: Mapping[str, Any], camel: str) -> Any:
    """A member in the REST spelling or the snake_case one the API also reads."""
    return value.get(key(Node(value), camel))


def _parts(content: Mapping[str, Any], where: str) -> list[tuple[Mapping[str, Any], str]]:
    parts = content.get("parts")
    if not isinstance(parts, list) or not parts:
        raise ValidationError(f"{where}.parts: expected a non-empty list", path=f"{where}.parts")
    out = []
    for j, part in enumerate(parts):
        if not isinstance(part, Mapping):
            raise ValidationError(f"{where}.parts[{j}]: expected an object", path=f"{where}.parts[{j}]")
        out.append((part, f"{where}.parts[{j}]"))
    return out


def _model(content: Mapping[str, Any], provider: str, where: str) -> AssistantMessage:
    """A model content as the adapter reads it in a reply (``parse``)."""
    _parts(content, where)
    gathering = Gathering(provider, merge=False)
    gathering.add_content(Node(content, where))
    message = gathering.message()
    assert message is not None  # only a lenient reading gives none
    return message


def _content_part(part: Mapping[str, Any], provider: str, where: str) -> ContentPart:
    """A user or system part: its text when that is all it is, else the part
    itself as the adapter's ``Native`` (which the adapter sends verbatim)."""
    text = part.get("text")
    if isinstance(text, str) and text and set(part) == {"text"}:
        return text
    return native(provider, Node(part, where), None)


def _system(value: object, provider: str) -> SystemMessage:
    if isinstance(value, str):
        return made("systemInstruction", SystemMessage, value)
    if not isinstance(value, Mapping):
        raise ValidationError("systemInstruction: expected an object", path="systemInstruction")
    parts = [_content_part(p, provider, w) for p, w in _parts(value, "systemInstruction")]
    return made("systemInstruction", SystemMessage, parts)


def _user(content: Mapping[str, Any], provider: str, where: str, last: AssistantMessage | None) -> list[Message]:
    """A user content: a ``ToolMessage`` per function response (first, as the
    adapter writes them), then one ``UserMessage`` with the other parts."""
    answered: set[str] = set()
    results: list[Message] = []
    others: list[ContentPart] = []
    for part, at in _parts(content, where):
        name = key(Node(part), "functionResponse")
        response = part.get(name)
        if response is None:
            others.append(_content_part(part, provider, at))
            continue
        results.append(_tool_result(response, provider, f"{at}.{name}", last, answered))
    if others:
        results.append(made(where, UserMessage, others))
    return results


def _tool_result(
    response: object, provider: str, where: str, last: AssistantMessage | None, answered: set[str]
) -> ToolMessage:
    if not isinstance(response, Mapping):
        raise ValidationError(f"{where}: expected an object", path=where)
    call_id = _answers(response, where, last, answered)
    answered.add(call_id)
    value = response.get("response")
    if value is None:
        value = {}
    if not isinstance(value, Mapping):
        raise ValidationError(f"{where}.response: expected an object", path=f"{where}.response")
    # The adapter's forms: {"output": text}, {"error": text}, else the object as JSON text.
    only = next(iter(value.values())) if len(value) == 1 else None
    is_error = "error" in value and len(value) == 1
    if set(value) <= {"output", "error"} and isinstance(only, str) and only.strip():
        text = only
    else:
        is_error = False
        text = json.dumps(value, ensure_ascii=False, separators=(",", ":"))
    parts: list[ContentPart] = [text]
    media = response.get("parts")
    if media is not None:
        if not isinstance(media, list):
            raise ValidationError(f"{where}.parts: expected a list", path=f"{where}.parts")
        for k, item in enumerate(media):
            if not isinstance(item, Mapping):
                raise ValidationError(f"{where}.parts[{k}]: expected an object", path=f"{where}.parts[{k}]")
            parts.append(native(provider, Node(item, f"{where}.parts[{k}]"), None))
    return made(where, ToolMessage, parts, call_id, is_error)


def _answers(response: Mapping[str, Any], where: str, last: AssistantMessage | None, answered: set[str]) -> str:
    """The id of the call a function response answers: the call with its id,
    else the first unanswered call of its name in the model turn before it
    (the adapter sends no id for a call Gemini gave none, and pairs by name and order)."""
    name = response.get("name")
    given = response.get("id")
    calls = last.tool_calls if last is not None else ()
    if isinstance(given, str) and given and any(call.id == given for call in calls):
        return given
    for call in calls:
        if call.name == name and call.id not in answered:
            return call.id
    raise ValidationError(f"{where}: answers no function call of the model turn before it", path=where)


def _tools(value: object) -> list[Tool]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise ValidationError("tools: expected a list", path="tools")
    out: list[Tool] = []
    for i, entry in enumerate(value):
        if not isinstance(entry, Mapping):
            raise ValidationError(f"tools[{i}]: expected an object", path=f"tools[{i}]")
        declarations = _member(entry, "functionDeclarations") or []
        if not isinstance(declarations, Sequence):
            raise ValidationError(f"tools[{i}].functionDeclarations: expected a list", path=f"tools[{i}]")
        for j, spec in enumerate(declarations):
            out.append(_tool(spec, f"tools[{i}].functionDeclarations[{j}]"))
    return out


def _tool(spec: object, where: str) -> Tool:
    if not isinstance(spec, Mapping):
        raise ValidationError(f"{where}: expected an object", path=where)
    name = spec.get("name")
    description = spec.get("description") or ""
    parameters = _member(spec, "parametersJsonSchema")
    if parameters is None:
        parameters = _member(spec, "parameters")
    if parameters is None:
        parameters = {"type": "object"}  # a function without parameters
    if not isinstance(name, str) or not isinstance(description, str) or not isinstance(parameters, Mapping):
        raise ValidationError(f"{where}: expected a name, a description and a parameter schema", path=where)
    try:
        return Tool(name, description, parameters)
    except ValidationError as err:
        raise ValidationError(f"{where}: {err}", path=where) from None


def _response_format(config: object) -> dict[str, Any] | None:
    """The response format the adapter would have written these members for."""
    if not isinstance(config, Mapping):
        return None
    schema = _member(config, "responseJsonSchema")
    if schema is not None:
        return {"type": "json_schema", "json_schema": {"schema": schema}}
    if _member(config, "responseMimeType") == "application/json":
        return {"type": "json_object"}
    return None
