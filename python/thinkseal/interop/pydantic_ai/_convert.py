"""pydantic-ai: ``ModelMessage`` lists (``ModelRequest`` / ``ModelResponse``) to a
``Conversation`` and back. pydantic-ai (``pydantic-ai-slim``) is imported only
inside these functions.

``import_history`` returns the conversation with what it could not hold
(``ImportedHistory``: ``conversation``, ``instructions``, ``dropped``);
``import_messages`` returns the conversation alone. Both take the messages as
objects or in the JSON form ``ModelMessagesTypeAdapter.dump_python(...,
mode="json")`` writes.

Requests: ``SystemPromptPart`` -> ``SystemMessage`` in place (one of a request
already answered whose scope is ``"request"`` is dropped: pydantic-ai showed
it with that request only); ``ModelRequest.instructions``, the instructions
in force (the last request's, as pydantic-ai sends them), -> one
``SystemMessage`` right after the leading system messages, where pydantic-ai
puts them on the wire; ``UserPromptPart`` -> ``UserMessage`` (text,
``ImageUrl`` and image ``BinaryContent`` -> ``Image``, ``DocumentUrl`` and PDF
``BinaryContent`` -> ``Document``, text/plain ``BinaryContent`` -> a text
``Document``, ``CachePoint`` -> ``CacheBreakpoint``); ``ToolReturnPart`` ->
``ToolMessage`` (``is_error`` for the ``failed`` and ``retried`` outcomes; a
non-string or blank return value kept as ``Native("pydantic-ai", {"type":
"tool-return", "content": value})`` with its JSON text); the deprecated
``RetryPromptPart`` -> an error ``ToolMessage`` (with a tool name) or a
``UserMessage`` of its ``model_response()`` text; ``RetryFeedbackPart`` -> a
``UserMessage`` of its text. The agent's bookkeeping parts (instruction,
tool-availability, capability and settings deltas) describe the agent, not
the conversation: they are dropped, and listed in ``dropped``.

Responses: ``TextPart`` -> text; ``ToolCallPart`` -> ``ToolCall``;
``ThinkingPart`` by its ``provider_name`` (table in docs/interop.md):

- ``"anthropic"``, ``"bedrock"``: ``signature`` -> signed ``ThinkingBlock.Text``;
  id ``"redacted_thinking"`` / ``"redacted_content"`` -> ``Redacted(signature)``;
- ``"openai"`` (Responses): the parts of one reasoning item (same ``id``; the
  first carries ``encrypted_content`` as its signature) -> the summary as
  unsigned ``Text`` and ``Opaque("openai-responses", item)``, as the
  openai-responses adapter keeps a received item;
- no signature, id or details: unsigned ``Text``;
- anything else (another provider's signature, ``provider_details``): kept
  losslessly as ``Opaque("pydantic-ai", part as JSON)``, which no adapter sends.

A part ``ThinksealModel`` wrote for sealed data pydantic-ai has no field for
(another provider's opaque thinking or native block: ``provider_name``
``"thinkseal"``, ``provider_details`` ``{"thinkseal": {"kind": "opaque" |
"native", "provider": id, "data": text}}``) imports as that block again.

Every other part (native tool calls and returns, files, compaction, text with
citations or details, multimodal content thinkseal has no type for) is kept
as ``Native("pydantic-ai", part as JSON)``, restored exactly on export. Ids of
text and tool-call parts, timestamps, usage and run metadata (none of which a
model is sent) are not kept and not listed in ``dropped``. pydantic-ai's
history holds no tool definitions (they belong to the ``Agent``): ``dropped``
always says so, naming the tools the history calls.

Free values (tool-call arguments, tool returns, kept parts) are held to
``thinkseal.limits()`` like any other import: ``ValidationError`` at the path
of the offending field. Imported thinking is never bound:
``Conversation.rebind(origin)`` vouches for it.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, NamedTuple

from ..._blocks import ThinkingBlock
from ..._content import IMAGE_MEDIA_TYPES, CacheBreakpoint, ContentPart, Document, Image, Native
from ..._conversation import Conversation
from ..._errors import ValidationError
from ..._messages import AssistantMessage, Message, Part, SystemMessage, ToolCall, ToolMessage, UserMessage
from ...providers.openai_responses import FOLLOWING
from .._common import arguments, assistant, compact, dumps, expect, fail, items_of, json_value, made, refuse, shown

if TYPE_CHECKING:
    from pydantic_ai.messages import ModelMessage

__all__ = ["Dropped", "ImportedHistory", "export_messages", "import_history", "import_messages"]

PYDANTIC_AI: Final = "pydantic-ai"
RESPONSES: Final = "openai-responses"
SUMMARY_SEPARATOR: Final = "\n\n"
_CLAUDE: Final = ("anthropic", "bedrock")
_REDACTED_IDS: Final = {"anthropic": "redacted_thinking", "bedrock": "redacted_content"}
_ERROR_OUTCOMES: Final = ("failed", "retried")
_EXPORTED_OUTCOMES: Final = ("success", "failed")
# The agent's bookkeeping parts, and why a conversation does not hold them.
_BOOKKEEPING: Final = {
    "instruction": "an instruction part (instructions come in as ModelRequest.instructions)",
    "instruction-delta": "a change to one of the agent's append-mode instruction blocks, "
    "which pydantic-ai renders anew for each request from the agent's state",
    "instruction-baseline": "the record of what a request's instructions were made of; never sent to a model",
    "tool-availability-delta": "a change to the agent's tools (tools belong to the Agent)",
    "capability-load-delta": "a capability the agent loaded; never sent to a model",
    "model-settings-delta": "a change to the model settings (request options, not conversation)",
}
# A reply's sealed part pydantic-ai has no field for travels in provider_details under this key
# (ThinksealModel writes it), so the next call reads back the very block the ledger recorded.
CARRIED: Final = "thinkseal"
_CARRIED_KINDS: Final = ("opaque", "native")
_TOOL_NAMES_SHOWN: Final = 10
_TARGET: Final = "pydantic-ai's message format"


class Dropped(NamedTuple):
    """Something of a pydantic-ai history its conversation does not hold:
    ``path`` names it in the history (``messages[0].instructions``,
    ``messages[2].parts[1]``; ``tools`` for the tool definitions, which a
    history never holds), ``why`` says what it is and why it is not kept."""

    path: str
    why: str


class ImportedHistory(NamedTuple):
    """What ``import_history`` read: the ``conversation``; ``instructions``,
    the index in it of the system message holding the instructions in force
    (``ModelRequest.instructions``), or None when none are; and ``dropped``,
    what the history holds that the conversation does not."""

    conversation: Conversation
    instructions: int | None
    dropped: tuple[Dropped, ...]


_ADAPTERS: list[tuple[Any, Any, Any, Any]] = []  # built on first use: building them costs milliseconds


def _adapters() -> tuple[Any, Any, Any, Any]:
    """pydantic's adapters for response parts, user content, whole messages,
    and any value (what pydantic writes for a field typed ``Any``)."""
    if not _ADAPTERS:
        import pydantic  # noqa: PLC0415
        from pydantic_ai import messages as pm  # noqa: PLC0415

        _ADAPTERS.append(
            (
                pydantic.TypeAdapter(pm.ModelResponsePart),
                pydantic.TypeAdapter(pm.UserContent),
                pydantic.TypeAdapter(pm.ModelMessage),
                pydantic.TypeAdapter(Any),
            )
        )
    return _ADAPTERS[0]


def _serializer(adapter: Any) -> Callable[[Any], Any]:
    """``adapter``'s JSON-mode dump, refusing a value that does not match its type."""
    return functools.partial(adapter.dump_python, mode="json", warnings="error")


def _pydantic(path: str, call: Callable[[], Any]) -> Any:
    """``call()`` (pydantic-ai writing a value it holds), its failure a ``ValidationError`` at ``path``."""
    try:
        return call()
    except ValidationError:
        raise
    except Exception as err:  # pydantic-ai's and pydantic's own exceptions say why
        reason = str(err).splitlines()[0] if str(err) else type(err).__name__
        raise fail(path, f"pydantic-ai cannot write it as JSON: {reason:.200}") from None


def _field(part: object, name: str, kind: type | tuple[type, ...], path: str) -> Any:
    """The attribute ``name`` of a pydantic-ai object, if it is a ``kind``."""
    return expect(getattr(part, name, None), kind, f"{path}.{name}")


def _kept(adapter: Any, part: object, path: str) -> dict[str, Any]:
    """``part`` as pydantic-ai writes it (JSON, without its timestamp). Its
    fields are checked first, so a bad value is named at its own path."""
    if dataclasses.is_dataclass(part) and not isinstance(part, type):
        anything = _serializer(_adapters()[3])
        for field in dataclasses.fields(part):
            json_value(getattr(part, field.name, None), f"{path}.{field.name}", level=2, convert=anything)
    value = json_value(_pydantic(path, lambda: _serializer(adapter)(part)), path)
    if not isinstance(value, dict):
        raise fail(path, f"cannot keep a {type(part).__name__}")
    value.pop("timestamp", None)
    return value


# -- import ------------------------------------------------------------------------------


def import_messages(messages: Sequence[ModelMessage | Mapping[str, Any]]) -> Conversation:
    """A conversation from pydantic-ai's ``ModelMessage`` list (what
    ``result.all_messages()`` returns, or ``ModelMessagesTypeAdapter`` loads),
    the messages as objects or in their JSON form:
    ``import_history(messages).conversation``. ``ValidationError`` names the
    offending part (``messages[3].parts[1]``)."""
    return import_history(messages).conversation


def import_history(messages: Sequence[ModelMessage | Mapping[str, Any]]) -> ImportedHistory:
    """The conversation of a pydantic-ai ``ModelMessage`` list, the index of
    the system message that holds its instructions, and what it does not hold
    (``ImportedHistory``). ``ValidationError`` names the offending part."""
    from pydantic_ai import messages as pm  # noqa: PLC0415

    history = _history(pm, messages)
    reader = _Reader(pm)
    last_response = max((k for k, (m, _) in enumerate(history) if isinstance(m, pm.ModelResponse)), default=-1)
    out: list[Message] = []
    for k, (message, path) in enumerate(history):
        if isinstance(message, pm.ModelRequest):
            for part, where in items_of(message.parts, f"{path}.parts"):
                out.extend(reader.request_part(part, where, answered=k < last_response))
        else:
            out.append(reader.response(message, path))
    index = None
    instructions = reader.instructions(history)
    if instructions is not None:
        # pydantic-ai sends them after the leading system prompts, before the first other message.
        index = next((i for i, m in enumerate(out) if not isinstance(m, SystemMessage)), len(out))
        out.insert(index, made(instructions[1], SystemMessage, instructions[0]))
    reader.note_tools()
    return ImportedHistory(made("messages", Conversation, out), index, tuple(reader.dropped))


def _history(pm: Any, messages: object) -> list[tuple[Any, str]]:
    """The messages with their paths; one in JSON form read as pydantic-ai reads it."""
    if isinstance(messages, (str, bytes)) or not isinstance(messages, Sequence):
        raise fail("messages", f"expected a list of ModelMessage, got {type(messages).__name__}")
    out: list[tuple[Any, str]] = []
    for i, given in enumerate(messages):
        path = f"messages[{i}]"
        message = _validated(given, path) if isinstance(given, Mapping) else given
        if not isinstance(message, (pm.ModelRequest, pm.ModelResponse)):
            raise fail(path, f"expected a ModelRequest or ModelResponse, got {type(message).__name__}")
        out.append((message, path))
    return out


def _validated(message: Mapping[str, Any], path: str) -> Any:
    """A message in JSON form as the pydantic-ai object it describes."""
    import pydantic  # noqa: PLC0415

    try:
        return _adapters()[2].validate_python(message)
    except pydantic.ValidationError as err:
        first = err.errors()[0]
        raise fail(_located(message, first["loc"], path, first["type"] == "missing"), first["msg"]) from None
    except RecursionError:
        raise fail(path, "nested too deeply to read") from None


def _located(value: Any, loc: Sequence[Any], path: str, missing: bool) -> str:
    """The path of a pydantic error's ``loc`` in ``value``: steps that are not
    keys or indices of the value are the names of union members, left out."""
    for n, step in enumerate(loc):
        if isinstance(value, Mapping) and isinstance(step, str) and step in value:
            path, value = f"{path}.{step}", value[step]
        elif isinstance(value, (list, tuple)) and isinstance(step, int) and 0 <= step < len(value):
            path, value = f"{path}[{step}]", value[step]
        elif missing and n == len(loc) - 1 and isinstance(step, str):
            path = f"{path}.{step}"
    return path


class _Reader:
    """One history's parts read into thinkseal messages, with what is dropped."""

    def __init__(self, pm: Any) -> None:
        self.pm = pm
        self.dropped: list[Dropped] = []
        self.tools: dict[str, None] = {}  # the tool names the history holds, in order

    def drop(self, path: str, why: str) -> None:
        self.dropped.append(Dropped(path, why))

    def tool(self, name: object) -> None:
        if isinstance(name, str):
            self.tools[name] = None

    # -- requests

    def request_part(self, part: object, path: str, *, answered: bool) -> list[Message]:
        pm = self.pm
        if isinstance(part, pm.SystemPromptPart):
            return self.system_prompt(part, path, answered)
        if isinstance(part, pm.UserPromptPart):
            content = _field(part, "content", (str, list, tuple), path)
            if isinstance(content, str):
                return [made(path, UserMessage, content)]
            parts = [self.user_content(item, where) for item, where in items_of(content, f"{path}.content")]
            return [made(path, UserMessage, parts)]
        if isinstance(part, pm.ToolReturnPart):
            return [self.tool_return(part, path)]
        if isinstance(part, pm.RetryPromptPart):
            text = expect(_pydantic(path, part.model_response), str, path)
            self.tool(part.tool_name)
            if part.tool_name is not None:
                return [made(path, ToolMessage, text, part.tool_call_id, True)]
            return [made(path, UserMessage, text)]
        if isinstance(part, pm.RetryFeedbackPart):
            text = expect(_pydantic(path, part.model_response), str, path)
            return [made(path, UserMessage, text)]
        kind = getattr(part, "part_kind", None)
        if isinstance(kind, str) and kind in _BOOKKEEPING:
            self.drop(path, _BOOKKEEPING[kind])
            added = getattr(part, "tools_added", None)
            if kind == "tool-availability-delta" and isinstance(added, (list, tuple)):
                for name in added:
                    self.tool(name)
            return []
        raise fail(path, f"{type(part).__name__} has no counterpart in a thinkseal conversation")

    def system_prompt(self, part: Any, path: str, answered: bool) -> list[Message]:
        content = _field(part, "content", str, path)
        if part.scope == "request":
            if answered:
                self.drop(
                    path,
                    "a request-scoped system prompt of a request already answered: pydantic-ai sends it "
                    "with its own request only",
                )
                return []
            self.drop(f"{path}.scope", "scope 'request' is not kept: the prompt exports as conversation-scoped")
        if not content.strip():
            self.drop(path, "a blank system prompt: nothing for the model")
            return []
        if part.context_id is not None:
            self.drop(
                f"{path}.context_id",
                "pydantic-ai sends this prompt as a <pyai:context> element replacing the earlier ones with its id; "
                "the system message holds its text as written",
            )
        return [made(path, SystemMessage, content)]

    def user_content(self, item: Any, path: str) -> ContentPart:
        pm = self.pm
        if isinstance(item, str):
            return item
        if isinstance(item, pm.CachePoint):
            ttl = getattr(item, "ttl", None)
            return made(path, CacheBreakpoint, None if ttl == "5m" else ttl)
        plain_url = not getattr(item, "vendor_metadata", None) and not getattr(item, "force_download", False)
        plain_url = plain_url and getattr(item, "_media_type", None) is None
        plain_url = plain_url and getattr(item, "_identifier", None) is None
        if type(item) is pm.ImageUrl and plain_url:
            return made(path, Image, url=item.url)
        if type(item) is pm.DocumentUrl and plain_url:
            return made(path, Document, url=item.url)
        media, data = getattr(item, "media_type", None), getattr(item, "data", None)
        if (
            isinstance(item, pm.BinaryContent)
            and isinstance(media, str)
            and isinstance(data, bytes)
            and data
            and not getattr(item, "vendor_metadata", None)
            and getattr(item, "_identifier", None) is None
        ):
            if media in IMAGE_MEDIA_TYPES:
                return made(path, Image, data, media)
            if media == "application/pdf":
                return made(path, Document, data)
            if media == "text/plain":
                try:
                    text = data.decode("utf-8")
                except UnicodeDecodeError:
                    text = ""
                if text.strip():
                    return made(path, Document, text=text)
        value = _kept(_adapters()[1], item, path)
        return made(path, Native, PYDANTIC_AI, compact(value, path), _text_of(item))

    def tool_return(self, part: Any, path: str) -> ToolMessage:
        self.tool(part.tool_name)
        outcome = part.outcome
        if outcome not in _EXPORTED_OUTCOMES:
            self.drop(
                f"{path}.outcome",
                f"the outcome {outcome!r:.40} is not kept "
                "(a tool message exports as 'failed' when it is an error, else as 'success')",
            )
        if getattr(part, "tool_kind", None) is not None:
            self.drop(f"{path}.tool_kind", "the kind of a framework tool's return is not kept")
        value = part.content
        body: list[ContentPart] | str
        if isinstance(value, str) and value.strip():
            body = value
        else:
            where = f"{path}.content"
            # Level 2: the value is kept inside the native block's object, which Native holds to the limits too.
            plain = json_value(value, where, level=2, convert=_serializer(self.pm.tool_return_ta))
            text = _pydantic(where, lambda: part.model_response_str(wrap_if_error=False)) or None
            kept = dumps({"type": "tool-return", "content": plain})
            body = [made(where, Native, PYDANTIC_AI, kept, text)]
        return made(path, ToolMessage, body, part.tool_call_id, outcome in _ERROR_OUTCOMES)

    def instructions(self, history: list[tuple[Any, str]]) -> tuple[str, str] | None:
        """The instructions in force and their path: the last request's, or,
        when the last request holds only tool results, the one before it (as
        pydantic-ai picks them); every other request's that differ are dropped."""
        pm = self.pm
        requests = [(m, f"{path}.instructions") for m, path in history if isinstance(m, pm.ModelRequest)]
        for message, path in requests:
            expect(message.instructions, (str, type(None)), path, "str or null")
        chosen = requests[-1] if requests else None
        if chosen is not None and chosen[0].instructions is None and len(requests) > 1:
            results = (pm.ToolReturnPart, pm.RetryFeedbackPart, pm.RetryPromptPart)
            if all(isinstance(p, results) for p in chosen[0].parts):
                chosen = requests[-2]
        text = chosen[0].instructions if chosen is not None else None
        for message, path in requests:
            if message.instructions is not None and message.instructions != text:
                self.drop(
                    path,
                    "instructions a later request replaced: pydantic-ai sends each request its own, "
                    "and the conversation holds the ones in force",
                )
        if text is None or chosen is None:
            return None
        if not text.strip():
            self.drop(chosen[1], "blank instructions: nothing for the model")
            return None
        return text, chosen[1]

    def note_tools(self) -> None:
        names = [shown(name) for name in list(self.tools)[:_TOOL_NAMES_SHOWN]]
        more = len(self.tools) - len(names)
        called = f"; it names {', '.join(names)}{f' and {more} more' if more > 0 else ''}" if names else ""
        self.drop(
            "tools",
            f"pydantic-ai's history holds no tool definitions: they belong to the Agent{called} "
            "(add them with Conversation.with_tools)",
        )

    # -- responses

    def response(self, message: Any, path: str) -> AssistantMessage:
        pm = self.pm
        items = items_of(message.parts, f"{path}.parts")
        for part, where in items:
            if type(part) is pm.ThinkingPart:
                _field(part, "content", str, where)
                for name in ("id", "signature", "provider_name"):
                    _field(part, name, (str, type(None)), where)
        parts: list[Part] = []
        j = 0
        while j < len(items):
            taken, consumed = self.response_parts([p for p, _ in items], j, items[j][1])
            parts.extend(taken)
            j += consumed
        return assistant(parts, f"{path}.parts")

    def response_parts(self, items: list[Any], j: int, path: str) -> tuple[list[Part], int]:
        """The thinkseal parts of ``items[j]`` (and of the parts of its reasoning
        item that follow it), and how many pydantic-ai parts they took."""
        pm = self.pm
        part = items[j]
        carried = _carried(pm, part, path)
        if carried is not None:
            return [carried], 1
        if type(part) is pm.TextPart and not part.provider_details and not part.citations:
            return [_field(part, "content", str, path)], 1
        if type(part) is pm.ToolCallPart:
            self.tool(part.tool_name)
            args = arguments(part.args if part.args is not None else {}, f"{path}.args")
            return [made(path, ToolCall, part.tool_call_id, part.tool_name, args)], 1
        if type(part) is pm.ThinkingPart:
            found = _thinking(pm, items, j, path)
            if found is not None:
                return found
        if isinstance(part, pm.BaseToolCallPart):
            self.tool(getattr(part, "tool_name", None))
        value = _kept(_adapters()[0], part, path)
        if type(part) is pm.ThinkingPart:
            return [made(path, ThinkingBlock.Opaque, PYDANTIC_AI, dumps(value))], 1
        text = part.content if type(part) is pm.TextPart else None
        return [made(path, Native, PYDANTIC_AI, dumps(value), text or None)], 1


def _carried(pm: Any, part: object, path: str) -> Part | None:
    """The block a part ``ThinksealModel`` wrote carries (``CARRIED``), or None for any other part."""
    if type(part) not in (pm.ThinkingPart, pm.TextPart) or getattr(part, "provider_name", None) != CARRIED:
        return None
    details = getattr(part, "provider_details", None)
    value = details.get(CARRIED) if isinstance(details, dict) and len(details) == 1 else None
    if not isinstance(value, dict) or set(value) != {"kind", "provider", "data"}:
        return None
    kind, provider, data = value["kind"], value["provider"], value["data"]
    if kind not in _CARRIED_KINDS or not isinstance(provider, str) or not isinstance(data, str):
        return None
    where = f"{path}.provider_details.{CARRIED}"
    if kind == "opaque":
        return made(where, ThinkingBlock.Opaque, provider, data)
    text = getattr(part, "content", None) if type(part) is pm.TextPart else None
    return made(where, Native, provider, data, text or None)


def _carry(pm: Any, part: ThinkingBlock.Opaque | Native) -> Any:
    """``part`` as a pydantic-ai part that ``_carried`` reads back: a native block with text as
    that text (what the model said), anything else as an empty thinking part."""
    kind = "native" if isinstance(part, Native) else "opaque"
    details = {CARRIED: {"kind": kind, "provider": part.provider, "data": part.data}}
    if isinstance(part, Native) and part.text:
        return pm.TextPart(content=part.text, provider_name=CARRIED, provider_details=details)
    return pm.ThinkingPart(content="", provider_name=CARRIED, provider_details=details)


def _text_of(item: object) -> str | None:
    text = getattr(item, "content", None)
    return text if isinstance(text, str) and text else None


def _thinking(pm: Any, items: list[Any], j: int, path: str) -> tuple[list[Part], int] | None:
    part = items[j]
    provider = part.provider_name
    if part.provider_details:
        return None
    if provider in _CLAUDE:
        if part.id is None and part.signature:
            return [made(path, ThinkingBlock.Text, part.content, part.signature)], 1
        if part.id == _REDACTED_IDS[provider] and part.signature and not part.content:
            return [made(path, ThinkingBlock.Redacted, part.signature)], 1
    if provider == "openai" and part.id:
        # One reasoning item: the parts with its id that follow, the signature on the first only.
        group = [part]
        while (
            j + len(group) < len(items)
            and type(items[j + len(group)]) is pm.ThinkingPart
            and items[j + len(group)].id == part.id
            and items[j + len(group)].provider_name == provider
            and not items[j + len(group)].signature
            and not items[j + len(group)].provider_details
            and items[j + len(group)].content
        ):
            group.append(items[j + len(group)])
        item: dict[str, Any] = {
            "type": "reasoning",
            "id": part.id,
            "summary": [{"type": "summary_text", "text": p.content} for p in group if p.content],
        }
        if part.signature:
            item["encrypted_content"] = part.signature
        if len(group) > 1 and not part.content:
            return None  # an empty summary part among others: not an item pydantic-ai writes
        summary = SUMMARY_SEPARATOR.join(p.content for p in group)
        blocks: list[Part] = [made(path, ThinkingBlock.Text, summary)] if summary else []
        blocks.append(made(path, ThinkingBlock.Opaque, RESPONSES, compact(item, path, sort=True)))
        return blocks, len(group)
    if part.id is None and not part.signature and provider is None and part.content:
        return [made(path, ThinkingBlock.Text, part.content)], 1
    return None


# -- export ------------------------------------------------------------------------------


def export_messages(conversation: Conversation, *, instructions: int | None = None) -> list[ModelMessage]:
    """``conversation``'s messages as pydantic-ai ``ModelMessage``\\ s: each run
    of system, user and tool messages one ``ModelRequest``, each assistant turn
    one ``ModelResponse``. ``instructions`` is the index of the system message
    that holds the agent's instructions (``ImportedHistory.instructions``):
    it goes out as every request's ``instructions``, as an ``Agent`` run
    writes them, not as a ``SystemPromptPart``. Tools and the response format
    belong to the agent in pydantic-ai and are not part of its history.
    Raises ``ValidationError`` for a part the format cannot hold (another
    provider's opaque thinking or native block, a tool result for a call the
    history does not hold, a tool result of several parts)."""
    if not isinstance(conversation, Conversation):
        raise ValidationError("conversation: expected a Conversation", path="conversation")
    from pydantic_ai import messages as pm  # noqa: PLC0415

    text = _instructions_text(conversation, instructions)
    response_ta, content_ta, _, _ = _adapters()
    names = {call.id: call.name for m in conversation if isinstance(m, AssistantMessage) for call in m.tool_calls}
    out: list[Any] = []
    request: list[Any] = []
    for i, message in enumerate(conversation.messages):
        if isinstance(message, AssistantMessage):
            if request:
                out.append(pm.ModelRequest(parts=request, instructions=text))
                request = []
            out.append(pm.ModelResponse(parts=_response_wire(pm, response_ta, message, i)))
        elif i != instructions:
            request.append(_request_wire(pm, content_ta, message, i, names))
    if request:
        out.append(pm.ModelRequest(parts=request, instructions=text))
    if text is not None and not any(isinstance(m, pm.ModelRequest) for m in out):
        out.insert(0, pm.ModelRequest(parts=[], instructions=text))  # a history of instructions and replies only
    return out


def reply_parts(message: AssistantMessage) -> list[Any]:
    """A reply's parts as pydantic-ai response parts for ``ThinksealModel``:
    every sealed datum in a field that ``import_history`` reads back as the
    same block, so the ledger recognises the turn on the next call."""
    from pydantic_ai import messages as pm  # noqa: PLC0415

    return _response_wire(pm, _adapters()[0], message, 0, carry=True)


def _instructions_text(conversation: Conversation, index: object) -> str | None:
    """The text of the system message at ``index``, the agent's instructions (None: no index)."""
    if index is None:
        return None
    messages = conversation.messages
    if not isinstance(index, int) or isinstance(index, bool) or not 0 <= index < len(messages):
        raise fail("instructions", f"expected the index of a message of the conversation, got {index!r:.40}")
    message = messages[index]
    if not isinstance(message, SystemMessage):
        raise fail("instructions", f"messages[{index}] is a {type(message).__name__}, not a SystemMessage")
    if not isinstance(message.content, str) and len(message.content) != 1:
        raise refuse(index, ".content", "instructions of several parts or with a cache breakpoint", _TARGET)
    return message.text


def _request_wire(pm: Any, content_ta: Any, message: Message, index: int, names: dict[str, str]) -> Any:
    if isinstance(message, SystemMessage):
        if not isinstance(message.content, str) and len(message.content) != 1:
            raise refuse(index, ".content", "a system prompt of several parts or with a cache breakpoint", _TARGET)
        return pm.SystemPromptPart(content=message.text)
    if isinstance(message, UserMessage):
        if isinstance(message.content, str):
            return pm.UserPromptPart(content=message.content)
        return pm.UserPromptPart(
            content=[_content_wire(pm, content_ta, p, index, j) for j, p in enumerate(message.content)]
        )
    assert isinstance(message, ToolMessage)
    name = names.get(message.tool_call_id)
    if name is None:
        raise refuse(
            index,
            ".tool_call_id",
            "a tool result for a call the history does not hold",
            _TARGET,
            "it needs the tool name",
        )
    content: Any
    if isinstance(message.content, str):
        content = message.content
    elif len(message.content) == 1 and (kept := _tool_return(message.content[0])) is not None:
        content = kept[0]
    else:
        raise refuse(index, ".content", "a tool result of several parts", _TARGET)
    return pm.ToolReturnPart(
        tool_name=name,
        content=content,
        tool_call_id=message.tool_call_id,
        outcome="failed" if message.is_error else "success",
    )


def _tool_return(part: object) -> tuple[Any] | None:
    """The tool return value a tool message's one part holds (as a 1-tuple: the value may be None)."""
    if isinstance(part, str):
        return (part,)
    if isinstance(part, Native) and part.provider == PYDANTIC_AI and part.type == "tool-return":
        value = part.value
        if "content" in value:
            return (value["content"],)
    return None


def _content_wire(pm: Any, content_ta: Any, part: ContentPart, index: int, j: int) -> Any:
    if isinstance(part, str):
        return part
    if isinstance(part, CacheBreakpoint):
        return pm.CachePoint(ttl=part.ttl or "5m")
    if isinstance(part, Image):
        if part.url is not None:
            return pm.ImageUrl(url=part.url)
        return pm.BinaryContent(data=part.data or b"", media_type=part.media_type or "")
    if isinstance(part, Document) and part.title is None and not part.citations:
        if part.url is not None:
            return pm.DocumentUrl(url=part.url)
        if part.data is not None:
            return pm.BinaryContent(data=part.data, media_type="application/pdf")
        return pm.BinaryContent(data=(part.text or "").encode(), media_type="text/plain")
    if isinstance(part, Native) and part.provider == PYDANTIC_AI:
        return content_ta.validate_python(part.value)
    hint = "pydantic-ai documents have no title or citations" if isinstance(part, Document) else ""
    raise refuse(index, f".content[{j}]", part, _TARGET, hint)


def _response_wire(
    pm: Any, response_ta: Any, message: AssistantMessage, index: int, *, carry: bool = False
) -> list[Any]:
    """``message``'s parts as pydantic-ai response parts. With ``carry`` (a reply
    ``ThinksealModel`` returns), a part pydantic-ai has no field for, or that
    its fields would not give back exactly, is carried (``_carry``) instead
    of refused."""
    origin = message.thinking_binding.origin.provider if message.thinking_binding is not None else None
    claude = "bedrock" if origin == "bedrock" else "anthropic"
    parts = message.parts
    out: list[Any] = []
    for j, part in enumerate(parts):
        if isinstance(part, str):
            out.append(pm.TextPart(content=part))
        elif isinstance(part, ToolCall):
            out.append(pm.ToolCallPart(tool_name=part.name, args=_plain(part.arguments), tool_call_id=part.id))
        elif isinstance(part, ThinkingBlock.Text) and part.is_sealed:
            out.append(pm.ThinkingPart(content=part.text, signature=part.signature, provider_name=claude))
        elif isinstance(part, ThinkingBlock.Text):
            after = parts[j + 1] if j + 1 < len(parts) else None
            if isinstance(after, ThinkingBlock.Opaque) and after.provider == RESPONSES:
                item = json.loads(after.data)
                if SUMMARY_SEPARATOR.join(_summaries(item)) == part.text and (
                    not carry or _exact_reasoning(pm, after, index, j + 1) is not None
                ):
                    continue  # the summary of the reasoning item after it
            out.append(pm.ThinkingPart(content=part.text))
        elif isinstance(part, ThinkingBlock.Redacted):
            out.append(pm.ThinkingPart(content="", id=_REDACTED_IDS[claude], signature=part.data, provider_name=claude))
        elif isinstance(part, ThinkingBlock.Opaque) and part.provider == RESPONSES and carry:
            exact = _exact_reasoning(pm, part, index, j)
            out.extend(exact if exact is not None else [_carry(pm, part)])
        elif isinstance(part, ThinkingBlock.Opaque) and part.provider == RESPONSES:
            item = json.loads(part.data)
            if isinstance(item, dict):
                item.pop(FOLLOWING, None)  # the adapter's own record beside a stored item, not OpenAI's
            out.extend(_reasoning_wire(pm, item, index, j))
        elif isinstance(part, (ThinkingBlock.Opaque, Native)) and part.provider == PYDANTIC_AI:
            value = json.loads(part.data)
            out.append(response_ta.validate_python(value))
        elif isinstance(part, (ThinkingBlock.Opaque, Native)) and carry:
            out.append(_carry(pm, part))
        else:
            raise refuse(index, f".parts[{j}]", part, _TARGET)
    return out


def _exact_reasoning(pm: Any, part: ThinkingBlock.Opaque, index: int, j: int) -> list[Any] | None:
    """The pydantic-ai parts of a reasoning item, if reading them back gives this very block."""
    try:
        wire = _reasoning_wire(pm, json.loads(part.data), index, j)
    except ValidationError:
        return None
    found = _thinking(pm, wire, 0, f"messages[{index}].parts[{j}]")
    return wire if found is not None and found[1] == len(wire) and found[0][-1] == part else None


def _summaries(item: Any) -> list[str]:
    summary = item.get("summary") if isinstance(item, dict) else None
    return [p.get("text", "") for p in summary or () if isinstance(p, dict)]


def _reasoning_wire(pm: Any, item: Any, index: int, j: int) -> list[Any]:
    if (
        not isinstance(item, dict)
        or set(item) - {"type", "id", "summary", "encrypted_content"}
        or item.get("type") != "reasoning"
        or not isinstance(item.get("id"), str)
    ):
        raise refuse(
            index, f".parts[{j}]", "a reasoning item with fields besides id, summary and encrypted_content", _TARGET
        )
    texts = [t for t in _summaries(item) if t] or [""]
    signature = item.get("encrypted_content")
    out = []
    for k, text in enumerate(texts):
        out.append(
            pm.ThinkingPart(
                content=text, id=item["id"], signature=signature if k == 0 else None, provider_name="openai"
            )
        )
    return out


def _plain(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_plain(v) for v in value]
    return value
