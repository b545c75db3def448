"""openai-agents' Responses items to a ``Conversation`` and a reply back to
Responses output items, on top of ``thinkseal.interop.openai``'s Responses
converter.

That converter holds what the Responses format holds (text, function calls,
OpenAI's own reasoning items and other items). Everything else a reply can
carry — Claude's signed and redacted thinking, Gemini's and OpenRouter's
opaque blocks, other providers' native blocks — goes into the item list as a
*carrier* item, in its place among the others: a ``reasoning`` item (a
``message`` for a native block with text, so the Runner sees that text) whose
``provider_data`` holds ``{"model": ..., "thinkseal": {"v": 1, "parts": [...]}}``,
the parts exactly as ``AssistantMessage.to_dict`` writes them (the one copy of
the sealed data: ``encrypted_content`` stays unset). ``provider_data``
is openai-agents' own field for other providers' data: it survives
``result.to_input_list()``, JSON and sessions, and agents' own
``OpenAIResponsesModel`` drops such reasoning items (and the field) before
sending, so a history written here can still go to it. The reasoning item's
``content`` repeats the thinking text for readers (agents' convention for
Claude); thinkseal reads only ``provider_data.thinkseal``.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any, Final

from ..._blocks import ThinkingBlock
from ..._content import Native
from ..._conversation import Conversation
from ..._errors import ResponseError, ValidationError
from ..._messages import AssistantMessage, Message, Part, ToolCall, message_from_dict
from ..openai import _summary, export_responses, import_responses

FAKE_ID: Final = "__fake_id__"  # agents' placeholder id (agents.models.fake_id), never sent to OpenAI
RESPONSES: Final = "openai-responses"
MARK: Final = "thinkseal"
VERSION: Final = 1
_PLACEHOLDER: Final = "thinkseal_carrier"  # an item type no API has: kept by the converter as a native part


# -- input items -> Conversation -----------------------------------------------------------


def to_conversation(
    instructions: str | None,
    items: str | Sequence[Any],
    tools: Sequence[Mapping[str, Any]],
    text: Mapping[str, Any] | None,
) -> Conversation:
    """The conversation the Runner's request stands for: its instructions, its
    input items (carrier items decoded), its function tools (in the Responses
    shape) and its ``text.format``."""
    if isinstance(items, str):
        items = [{"role": "user", "content": items}]
    if not isinstance(items, Sequence):
        raise ValidationError(f"input: expected a list of items, got {type(items).__name__}", path="input")
    plain: list[Any] = []
    carried: list[tuple[Part, ...]] = []
    for i, raw in enumerate(items):
        item = _as_dict(raw, f"input[{i}]")
        extra = item.pop("provider_data", None)
        if isinstance(extra, Mapping) and MARK in extra:
            plain.append({"type": _PLACEHOLDER, "index": len(carried)})
            carried.append(_carried(extra[MARK], f"input[{i}].provider_data.{MARK}"))
            continue
        if item.get("id") == FAKE_ID:
            del item["id"]
        plain.append(item)
    conversation = import_responses(plain, instructions=instructions, tools=tools, text=text)
    if not carried:
        return conversation
    return conversation.with_messages([_restored(m, carried) for m in conversation.messages])


def _as_dict(raw: object, path: str) -> dict[str, Any]:
    dump = getattr(raw, "model_dump", None)
    if callable(dump):  # an output item object pasted back as input
        raw = dump(mode="json", exclude_unset=True)
    if not isinstance(raw, Mapping):
        raise ValidationError(f"{path}: expected an item (an object), got {type(raw).__name__}", path=path)
    return dict(raw)


def _carried(mark: object, path: str) -> tuple[Part, ...]:
    if not isinstance(mark, Mapping) or mark.get("v") != VERSION or not isinstance(mark.get("parts"), list):
        raise ValidationError(f"{path}: expected {{'v': {VERSION}, 'parts': [...]}} as thinkseal writes it", path=path)
    try:
        message = message_from_dict({"role": "assistant", "parts": mark["parts"], "binding": None})
    except ValidationError as err:
        raise ValidationError(f"{path}: {err}", path=f"{path}.{err.path}" if err.path else path) from None
    assert isinstance(message, AssistantMessage)
    return message.parts


def _restored(message: Message, carried: Sequence[tuple[Part, ...]]) -> Message:
    if not isinstance(message, AssistantMessage):
        return message
    parts: list[Part] = []
    changed = False
    for part in message.parts:
        value = part.value if isinstance(part, Native) and part.provider == RESPONSES else None
        if isinstance(value, Mapping) and value.get("type") == _PLACEHOLDER and set(value) == {"type", "index"}:
            parts.extend(carried[value["index"]])
            changed = True
        else:
            parts.append(part)
    return AssistantMessage.from_parts(parts) if changed else message


# -- a reply -> output items ----------------------------------------------------------------


def output_items(message: AssistantMessage, model: str) -> list[Any]:
    """``message`` as Responses output items (the ``openai.types.responses``
    models the Runner takes), in the order of its parts."""
    from openai.types.responses import ResponseFunctionToolCall, ResponseReasoningItem  # noqa: PLC0415

    parts = message.parts
    carrier: list[Part] = []
    runs: list[list[Part]] = []
    for j, part in enumerate(parts):
        if _holdable(parts, j):
            carrier.append(part)
            continue
        texted = isinstance(part, Native) and part.text is not None
        if runs and not texted and carrier and _is_placeholder(carrier[-1]) and _thinking_run(runs[-1]):
            runs[-1].append(part)
            continue
        carrier.append(Native(RESPONSES, json.dumps({"type": _PLACEHOLDER, "index": len(runs)})))
        runs.append([part])
    exported = export_responses(Conversation([AssistantMessage.from_parts(carrier)]))["input"]
    out: list[Any] = []
    for item in exported:
        kind = item.get("type")
        if kind == _PLACEHOLDER:
            out.append(_carrier_item(runs[item["index"]], model))
        elif kind is None and item.get("role") == "assistant":
            out.append(_text_message(item["content"]))
        elif kind == "function_call":
            out.append(ResponseFunctionToolCall(id=FAKE_ID, status="completed", **item))
        elif kind == "reasoning":
            out.append(ResponseReasoningItem.model_validate(item))
        else:
            out.append(_output_item(item))
    return out


def _holdable(parts: Sequence[Part], j: int) -> bool:
    """Whether the Responses converter holds ``parts[j]`` as it is."""
    part = parts[j]
    if isinstance(part, (str, ToolCall)):
        return True
    if isinstance(part, (ThinkingBlock.Opaque, Native)):
        return part.provider == RESPONSES
    if isinstance(part, ThinkingBlock.Text) and not part.is_sealed and j + 1 < len(parts):
        after = parts[j + 1]
        if isinstance(after, ThinkingBlock.Opaque) and after.provider == RESPONSES:
            return _summary(json.loads(after.data)) == part.text  # the reasoning item's own summary
    return False


def _is_placeholder(part: Part) -> bool:
    return isinstance(part, Native) and part.provider == RESPONSES and part.value.get("type") == _PLACEHOLDER


def _thinking_run(run: list[Part]) -> bool:
    return not any(isinstance(p, Native) and p.text is not None for p in run)


def _carrier_item(run: list[Part], model: str) -> Any:
    from openai.types.responses import ResponseReasoningItem  # noqa: PLC0415

    parts = AssistantMessage.from_parts(run).to_dict()["parts"]
    provider_data = {"model": model, MARK: {"v": VERSION, "parts": parts}}
    first = run[0]
    if isinstance(first, Native) and first.text is not None:
        return _text_message(first.text, provider_data)
    texts = [{"type": "reasoning_text", "text": p.text} for p in run if isinstance(p, ThinkingBlock.Text) and p.text]
    return ResponseReasoningItem.model_validate(
        {
            "id": FAKE_ID,
            "type": "reasoning",
            "summary": [],
            "content": texts,
            "provider_data": provider_data,
        }
    )


def _text_message(text: str, provider_data: Mapping[str, Any] | None = None) -> Any:
    from openai.types.responses import ResponseOutputMessage  # noqa: PLC0415

    item: dict[str, Any] = {
        "id": FAKE_ID,
        "type": "message",
        "role": "assistant",
        "status": "completed",
        "content": [{"type": "output_text", "text": text, "annotations": []}],
    }
    if provider_data is not None:
        item["provider_data"] = provider_data
    return ResponseOutputMessage.model_validate(item)


def _output_item(item: Mapping[str, Any]) -> Any:
    """Another Responses item the reply kept whole (a web search call, a
    message with annotations, ...), as the SDK's output item type."""
    from openai.types.responses import ResponseOutputItem  # noqa: PLC0415
    from pydantic import TypeAdapter  # noqa: PLC0415

    try:
        return TypeAdapter(ResponseOutputItem).validate_python(dict(item))
    except ValueError as err:
        raise ResponseError(
            f"an item of type {item.get('type')!r} is not a Responses output item openai-agents takes ({err})",
            path="$.output",
        ) from None
