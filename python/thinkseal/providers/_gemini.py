"""Google's ``generateContent`` wire, shared by the ``gemini`` (Gemini API) and
``vertex-gemini`` (Vertex AI) adapters: the two services take the same request
bodies and return the same replies; only the path differs (each adapter
module says how it builds its own). Replies and streams are read in
``_gemini_reply``.

What Gemini requires, and what thinkseal does about it, is in
docs/providers.md#gemini. In short:

- Each ``thoughtSignature`` is kept as ``ThinkingBlock.Opaque(<adapter id>,
  '{"thoughtSignature":"..."}')`` right before the part it came on, and goes
  back on that part only while the turn is kept; unsealing drops the Opaque
  blocks and nothing else. Thought summaries are unsigned ``Text`` blocks.
- Gemini 3's function-call rule: ``DUMMY_SIGNATURE`` goes on the first call of
  every model turn that would go out without a signature, for every model
  ``strict_model`` does not know to predate Gemini 3.
- Calls without an id pair with their ``functionResponse`` parts by name and
  order; options use the REST names, ``thinkingConfig`` is checked in Google's
  wording.
- Fragment caches: model turns are mapped once per (adapter, strictness), a
  user turn of one message once per message, and a user turn that joins
  several (parallel function responses) once per request while it is in the
  unsettled tail, then once into the shared cache (``providers/_wire.py``).
  Only JSON bytes are kept, and a model turn's function-call count beside them.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from functools import partial
from types import MappingProxyType
from typing import Any, ClassVar, Final, assert_never

from .._blocks import ThinkingBlock
from .._content import CacheBreakpoint, ContentPart, Document, Image, Native, unknown_part
from .._conversation import Conversation
from .._errors import ValidationError
from .._messages import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage, UserMessage
from .._replay import Replay
from .._tool import Tool
from ._base import Built, Provider
from ._chat import b64
from ._claude import Refused, located, plan_turns
from ._gemini_reply import DUMMY_SIGNATURE, SIGNATURE, GeminiReader, is_generated
from ._options import BODY_FIELDS, check_choice, check_flag, check_number, check_object, frozen_options
from ._options import response_format as checked_format
from ._wire import counted, dumps, fragment, splice, wire_messages

THINKING_LEVELS: Final[tuple[str, ...]] = ("minimal", "low", "medium", "high", "xhigh")
# Google's wording (docs/providers.md, Gemini).
BOTH_BUDGET_AND_LEVEL: Final[str] = "You can only set only one of thinking budget and thinking level."

# Image types Gemini documents for image understanding; function responses take fewer.
IMAGE_TYPES: Final[frozenset[str]] = frozenset({"image/png", "image/jpeg", "image/webp", "image/heic", "image/heif"})
RESPONSE_IMAGE_TYPES: Final[frozenset[str]] = frozenset({"image/png", "image/jpeg", "image/webp"})

# Body fields thinkseal builds from the conversation and prepare()'s own arguments.
_RESERVED: Final[Mapping[str, str]] = MappingProxyType(
    {
        **BODY_FIELDS,
        "contents": "contents come from the conversation",
        "systemInstruction": "put SystemMessage(s) in the conversation",
    }
)
# REST names thinkseal checks, by their snake_case spelling (which the API
# also reads, but would slip past the checks).
_CAMEL: Final[Mapping[str, str]] = MappingProxyType(
    {
        "generation_config": "generationConfig",
        "system_instruction": "systemInstruction",
        "tool_config": "toolConfig",
        "safety_settings": "safetySettings",
        "cached_content": "cachedContent",
        "thinking_config": "thinkingConfig",
        "max_output_tokens": "maxOutputTokens",
        "top_p": "topP",
        "top_k": "topK",
        "candidate_count": "candidateCount",
        "stop_sequences": "stopSequences",
        "response_mime_type": "responseMimeType",
        "response_schema": "responseSchema",
        "response_json_schema": "responseJsonSchema",
        "thinking_budget": "thinkingBudget",
        "thinking_level": "thinkingLevel",
        "include_thoughts": "includeThoughts",
    }
)
_FORMAT_FIELDS: Final[tuple[str, ...]] = ("responseSchema", "responseJsonSchema")
# Documented thinkingBudget ranges (thinking page): (model prefix, low, high, can disable with 0).
_BUDGETS: Final[tuple[tuple[str, int, int, bool], ...]] = (
    ("gemini-2.5-pro", 128, 32768, False),
    ("gemini-2.5-flash-lite", 512, 24576, True),
    ("gemini-2.5-flash", 1, 24576, True),
)


def strict_model(model: str) -> bool:
    """Whether ``model`` enforces Gemini 3's function-call signature rule: every
    model but the Gemini 1.x and 2.x generations (an alias such as
    ``gemini-flash-latest`` may point at Gemini 3, so unknown names count)."""
    name = model.rsplit("/", 1)[-1]
    return re.match(r"gemini-[12](\.|-|$)", name) is None


# -- options ---------------------------------------------------------------------


def _refuse_snake(options: Mapping[str, Any], where: str) -> None:
    for key in options:
        camel = _CAMEL.get(key)
        if camel is not None:
            path = f"{where}.{key}" if where else key
            raise ValidationError(
                f"{path}: use the REST field name {camel!r} (the one thinkseal checks)",
                path=path,
            )


def check_thinking(config: Mapping[str, Any], model: str, path: str) -> None:
    """``generationConfig.thinkingConfig`` as the thinking page documents it."""
    _refuse_snake(config, path)
    budget = config.get("thinkingBudget")
    level = config.get("thinkingLevel")
    if budget is not None and level is not None:
        raise ValidationError(BOTH_BUDGET_AND_LEVEL, path=f"{path}.thinkingLevel")
    if level is not None:
        if not isinstance(level, str):
            raise ValidationError(f"{path}.thinkingLevel: expected a string", path=f"{path}.thinkingLevel")
        check_choice(level.lower(), THINKING_LEVELS, f"{path}.thinkingLevel")
    check_flag(config.get("includeThoughts"), f"{path}.includeThoughts")
    if budget is None:
        return
    check_number(config, "thinkingBudget", -1, integer=True, path=f"{path}.thinkingBudget")
    if not budget_in_range(model, budget):
        raise ValidationError(invalid_budget(budget), path=f"{path}.thinkingBudget")


def budget_in_range(model: str, budget: int) -> bool:
    """Whether ``model`` takes ``thinkingBudget`` ``budget`` (the documented
    ranges of the Gemini 2.5 models; other models take any budget from -1)."""
    name = model.rsplit("/", 1)[-1]
    for prefix, low, high, can_disable in _BUDGETS:
        if name.startswith(prefix):
            return budget == -1 or low <= budget <= high or (budget == 0 and can_disable)
    return True


def invalid_budget(budget: int) -> str:
    """Google's wording for a budget out of range (docs/providers.md, Gemini)."""
    return f"The thinking budget ({budget}) is invalid."


def check_generation(config: Mapping[str, Any], model: str, has_format: bool) -> None:
    where = "generationConfig"
    _refuse_snake(config, where)
    for key in _FORMAT_FIELDS:
        if config.get(key) is not None:
            raise ValidationError(
                f"{where}.{key}: set by thinkseal from Conversation.response_format (it is part of the fingerprint)",
                path=f"{where}.{key}",
            )
    if has_format and config.get("responseMimeType") is not None:
        raise ValidationError(
            f"{where}.responseMimeType: set both here and by the conversation's response_format; give one",
            path=f"{where}.responseMimeType",
        )
    check_number(config, "temperature", 0, 2, path=f"{where}.temperature")
    check_number(config, "topP", 0, 1, path=f"{where}.topP")
    check_number(config, "topK", 1, integer=True, path=f"{where}.topK")
    check_number(config, "maxOutputTokens", 1, integer=True, path=f"{where}.maxOutputTokens")
    check_number(config, "candidateCount", 1, integer=True, path=f"{where}.candidateCount")
    thinking = config.get("thinkingConfig")
    if thinking is not None:
        if not isinstance(thinking, Mapping):
            raise ValidationError(f"{where}.thinkingConfig: expected an object", path=f"{where}.thinkingConfig")
        check_thinking(thinking, model, f"{where}.thinkingConfig")


# -- content parts ---------------------------------------------------------------


def _blob(media_type: str, data: bytes) -> dict[str, Any]:
    return {"inlineData": {"mimeType": media_type, "data": b64(data)}}


def content_part(part: ContentPart, provider: str) -> dict[str, Any] | None:
    """A user or system content part (None: nothing goes out for it); a part
    Gemini cannot take raises ``Refused`` naming it."""
    unknown = unknown_part(part, provider)
    if unknown is not None:
        raise Refused(unknown)
    match part:
        case str():
            return {"text": part}
        case Image():
            if part.data is not None:
                assert part.media_type is not None  # Image requires it with data
                if part.media_type not in IMAGE_TYPES:
                    raise Refused(f"{provider} takes PNG, JPEG, WebP, HEIC and HEIF images, not {part.media_type}")
                return _blob(part.media_type, part.data)
            if part.media_type is None:
                raise Refused(
                    f"{provider} needs the MIME type of an image given by URL (fileData.mimeType); "
                    "give Image(url=..., media_type=...)",
                    field="media_type",
                )
            return {"fileData": {"mimeType": part.media_type, "fileUri": part.url}}
        case Document():
            if part.text is not None:
                return {"text": part.text}
            if part.data is not None:
                return _blob("application/pdf", part.data)
            return {"fileData": {"mimeType": "application/pdf", "fileUri": part.url}}
        case Native():
            if part.provider == provider:
                return part.value
            return {"text": part.text} if part.text else None
        case CacheBreakpoint():
            return None  # Gemini has no such field
        case _:
            assert_never(part)


def content_parts(parts: Sequence[ContentPart], provider: str) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for part in parts:
        try:
            value = content_part(part, provider)
        except Refused as err:
            err.part = part
            raise
        if value is not None:
            out.append(value)
    return out


def _json_object(text: str) -> dict[str, Any] | None:
    stripped = text.strip()
    if not stripped.startswith("{"):
        return None
    try:
        value = json.loads(stripped)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def function_response(message: ToolMessage, name: str, provider: str) -> dict[str, Any]:
    """A tool result as one ``functionResponse`` part, answering a call named ``name``."""
    texts: list[str] = []
    media: list[dict[str, Any]] = []
    for part in message.parts:
        unknown = unknown_part(part, provider)
        if unknown is not None:
            raise Refused(unknown, part=part)
        match part:
            case CacheBreakpoint():
                continue
            case str():
                texts.append(part)
            case Document() if part.text is not None:
                texts.append(part.text)
            case Native():
                if part.provider == provider:
                    media.append(part.value)
                elif part.text:
                    texts.append(part.text)
            case Image() | Document():
                if part.data is None:
                    raise Refused(
                        f"{provider} function responses take media as inline data only, not by URL", part=part
                    )
                media_type = part.media_type if isinstance(part, Image) else "application/pdf"
                assert media_type is not None
                if isinstance(part, Image) and media_type not in RESPONSE_IMAGE_TYPES:
                    raise Refused(
                        f"{provider} function responses take PNG, JPEG and WebP images, not {media_type}", part=part
                    )
                media.append(_blob(media_type, part.data))
            case _:
                assert_never(part)
    text = "".join(texts)
    value = _json_object(text)
    response: dict[str, Any]
    if message.is_error:
        response = {"error": text if value is None else value}
    elif value is not None:
        response = value
    else:
        response = {"output": text} if text or not media else {}
    wire: dict[str, Any] = {} if is_generated(message.tool_call_id) else {"id": message.tool_call_id}
    wire.update({"name": name, "response": response})
    if media:
        wire["parts"] = media
    return {"functionResponse": wire}


# -- model turns -------------------------------------------------------------------


def model_parts(message: AssistantMessage, provider: str, strict: bool) -> list[dict[str, Any]]:
    """The parts of an as-sent model turn. A kept turn (it still has its sealed
    blocks) goes out part by part as received, each signature on its part; an
    unsealed one carries its text, function calls and other providers' native
    text only. With ``strict``, the first function call gets the dummy
    signature when it would go out without one."""
    kept = message.has_sealed_thinking
    out: list[dict[str, Any]] = []
    pending: str | None = None
    first_call = True
    for part in message.parts:
        wire: dict[str, Any]
        if isinstance(part, ThinkingBlock.Opaque):
            if part.provider != provider:
                continue
            value = json.loads(part.data)
            if set(value) == {SIGNATURE}:
                pending = value[SIGNATURE]
            else:
                out.append(value)  # a signed part with nothing else to keep
            continue
        if isinstance(part, ThinkingBlock.Text):
            if part.signature:
                wire = {"text": part.text, "thought": True, SIGNATURE: part.signature}
            elif kept and part.text:
                wire = {"text": part.text, "thought": True}
            else:
                continue
        elif isinstance(part, str):
            if not part:
                continue
            wire = {"text": part}
        elif isinstance(part, ToolCall):
            call: dict[str, Any] = {} if is_generated(part.id) else {"id": part.id}
            call.update({"name": part.name, "args": part.arguments})
            wire = {"functionCall": call}
            if first_call and strict and pending is None:
                pending = DUMMY_SIGNATURE
            first_call = False
        elif isinstance(part, Native):
            if part.provider == provider:
                wire = part.value
            elif part.text:
                wire = {"text": part.text}
            else:
                continue
        else:
            continue  # redacted blocks have no Gemini form
        if pending is not None:
            wire[SIGNATURE] = pending
            pending = None
        out.append(wire)
    if pending is not None:
        out.append({"text": "", SIGNATURE: pending})
    return out


_MODEL_HEAD: Final[bytes] = b'{"role":"model","parts":['
_NO_PARTS: Final[bytes] = _MODEL_HEAD + b"]}"


def _calls(turn: Mapping[str, Any]) -> int:
    """The function calls among a model turn's parts."""
    return sum(1 for part in turn["parts"] if "functionCall" in part)


class Wire:
    """One adapter's contents: ``provider`` (its id, also the fragment-cache
    key) and whether the target model needs the function-call signatures."""

    __slots__ = ("provider", "strict")

    def __init__(self, provider: str, strict: bool) -> None:
        self.provider = provider
        self.strict = strict

    @property
    def key(self) -> str:
        return f"{self.provider}:{'strict' if self.strict else 'lax'}"

    def model_turn(self, message: AssistantMessage) -> tuple[bytes, int]:
        """An as-sent turn's JSON bytes (``_NO_PARTS`` when nothing of it goes
        out) and its function calls, built once per turn."""
        return counted(message, self.key, partial(self.model_wire, message), _calls)

    def model_wire(self, message: AssistantMessage) -> dict[str, Any]:
        return {"role": "model", "parts": model_parts(message, self.provider, self.strict)}

    def goes_out(self, message: AssistantMessage) -> bool:
        """A turn with nothing to send (unsealed reasoning only) is left out; the
        user contents around it merge."""
        return self.model_turn(message)[0] != _NO_PARTS

    def calls_out(self, message: AssistantMessage) -> bool:
        """Whether a turn goes out with a function call: Gemini takes a function
        call turn only right after a user or function response turn, so such a
        turn right after another model turn joins that turn's content."""
        return self.model_turn(message)[1] > 0

    def segment(self, sent: Sequence[Message]) -> list[bytes]:
        encoded: list[bytes] = []
        names: dict[str, str] = {}
        previous = ""
        for role, group in plan_turns(sent, self.goes_out):
            if role == "assistant":
                turn = group[0]
                assert isinstance(turn, AssistantMessage)
                names = {call.id: call.name for call in turn.tool_calls}
                raw, calls = self.model_turn(turn)
                if previous == "assistant" and calls:
                    # One model turn with the parts of both: each is _MODEL_HEAD, its parts and "]}".
                    encoded[-1] = encoded[-1][:-2] + b"," + raw[len(_MODEL_HEAD) :]
                    continue
            else:
                raw = self.user_turn(group, names)
            encoded.append(raw)
            previous = role
        return encoded

    def user_turn(self, group: list[Message], names: Mapping[str, str]) -> bytes:
        """A user turn's JSON bytes. A turn of one message is encoded once and
        kept on the message; a turn that joins several is encoded for each
        request that has it in its unsettled tail, then once more for the wire
        cache, rather than keeping each message's parts encoded beside the turn
        that copies them."""
        if len(group) != 1:
            return dumps({"role": "user", "parts": [p for m in group for p in self.user_parts(m, names)]})
        message = group[0]
        if isinstance(message, ToolMessage):
            key = f"{self.provider}:fr:{names[message.tool_call_id]}"
        else:
            key = f"{self.provider}:user"
        return fragment(message, key, lambda: {"role": "user", "parts": self.user_parts(message, names)})

    def user_parts(self, message: Message, names: Mapping[str, str]) -> list[dict[str, Any]]:
        if isinstance(message, ToolMessage):
            # Pairing guarantees a tool message still here answers a call of the turn before it.
            return [function_response(message, names[message.tool_call_id], self.provider)]
        assert isinstance(message, UserMessage)
        parts = content_parts(message.parts, self.provider)
        if not parts:
            shown = [p for p in message.parts if not isinstance(p, CacheBreakpoint)]
            raise Refused(
                f"nothing in this message goes to {self.provider} (another provider's native blocks without text)",
                part=shown[0] if shown else None,
            )
        return parts


def system_instruction(systems: Sequence[SystemMessage], provider: str) -> dict[str, Any]:
    return {"parts": [p for message in systems for p in content_parts(message.parts, provider)]}


def tool_declaration(tool: Tool) -> dict[str, Any]:
    spec: dict[str, Any] = {"name": tool.name}
    if tool.description:
        spec["description"] = tool.description
    spec["parametersJsonSchema"] = tool.parameters
    return spec


# -- the adapter base ------------------------------------------------------------------


class GeminiProvider(GeminiReader, Provider):
    """A ``generateContent`` adapter; subclasses say where the request goes."""

    # Extra option checks of one service (its own rules, in its own wording).
    service_checks: ClassVar[tuple[Callable[[Mapping[str, Any]], None], ...]] = ()

    def locate(self, model: str, options: dict[str, Any], stream: bool) -> str:
        """The request's path; takes (pops) the options that name the endpoint."""
        raise NotImplementedError

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        path = self.locate(model, options, stream)
        _refuse_snake(options, "")
        checked = frozen_options(options, _RESERVED)
        fmt = checked_format(
            conversation.response_format, self.id, ("text", "json_object", "json_schema"), needs=("schema",)
        )
        has_format = fmt is not None and fmt["type"] != "text"
        generation = check_object(checked, "generationConfig")
        if generation is not None:
            check_generation(generation, model, has_format)
            for check in self.service_checks:
                check(generation)
        wire = Wire(self.id, strict_model(model))
        try:
            encoded = wire_messages(replay, wire.key, wire.segment, wire.goes_out, wire.calls_out)
            body: dict[str, Any] = {"contents": encoded}
            if conversation.system_messages:
                body["systemInstruction"] = system_instruction(conversation.system_messages, self.id)
        except Refused as err:
            raise located(conversation, err) from None
        if conversation.tools:
            body["tools"] = [{"functionDeclarations": [tool_declaration(t) for t in conversation.tools]}]
        if has_format:
            assert fmt is not None
            config = {**(generation or {}), "responseMimeType": "application/json"}
            if fmt["type"] == "json_schema":
                config["responseJsonSchema"] = fmt["json_schema"]["schema"]
            checked["generationConfig"] = config
        body.update(checked)
        return Built(body, splice(body, "contents", encoded), path, {"content-type": "application/json"})


def method(stream: bool) -> str:
    """The ``:method`` suffix of a generateContent path."""
    return ":streamGenerateContent?alt=sse" if stream else ":generateContent"
