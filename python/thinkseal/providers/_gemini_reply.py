"""Reading Gemini replies (``GenerateContentResponse``), whole and streamed,
for the ``gemini`` and ``vertex-gemini`` adapters (the request side is
``_gemini``).

- A response is the HTTP JSON (camelCase), the ``google-genai`` SDK's object
  (dumped with its aliases: camelCase, base64 in the URL-safe alphabet), its
  ``model_dump()`` (snake_case, signatures and blobs as ``bytes``, enums) or
  ``model_dump(mode="json")`` (snake_case, URL-safe base64): all read alike.
  Signatures and ``inlineData`` blobs are kept in the wire's base64 (standard
  alphabet, padded), and a part kept as a ``Native`` block is written in the
  REST spelling (camelCase members), whichever form it came in, so one reply
  gives one message and one digest.
- Candidate 0 is read. ``thought: true`` text parts become unsigned
  ``ThinkingBlock.Text`` blocks; text parts text; ``functionCall`` parts
  ``ToolCall``s (an id Gemini did not give is ``generated_call_id``); any other
  part a ``Native(<adapter id>, part)`` in its place. A part's
  ``thoughtSignature`` becomes ``signature_block`` right before that part; a
  signed part with empty text is kept whole as the Opaque's JSON (see
  ``_gemini``).
- A stream is a sequence of ``GenerateContentResponse`` chunks (the SSE
  events' data). Text arrives in fragments: consecutive text chunks of the
  same kind (thought or answer) make one part, and a signature arriving on
  one of them, or on the empty text part a stream may end with (Google's
  thought-signature FAQ, whatever its ``thought`` flag), belongs to that part,
  unless the part already has one. Function calls arrive whole, one ``ToolCallDelta`` each. The stream
  is complete once a chunk carries ``finishReason``; ``finish`` then builds
  exactly what ``parse`` builds for the same reply.
- ``reply_info``: ``finishReason`` of candidate 0, ``usageMetadata``
  (``promptTokenCount`` -> input, cached tokens included;
  ``candidatesTokenCount`` + ``thoughtsTokenCount`` -> output, so that the
  reasoning tokens are part of the output as ``Usage`` has them;
  ``cachedContentTokenCount`` -> cache reads; ``thoughtsTokenCount`` ->
  reasoning), ``responseId``, ``modelVersion``.
"""

from __future__ import annotations

import base64
import enum
import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any, ClassVar, Final

from .._blocks import ThinkingBlock
from .._content import Native
from .._errors import ResponseError, ThinksealError
from .._messages import AssistantMessage, Part, ToolCall
from .._reply import Delta, ReplyInfo, TextDelta, ThinkingDelta, ToolCallDelta, Usage
from ._base import StreamParser
from ._chat import Pieces, count, lenient_text
from ._response import Node, error_text, valid_text, wrap_errors

SIGNATURE: Final[str] = "thoughtSignature"
# Google's documented value for a function call whose signature Gemini did not
# produce (thought signatures page, FAQ 1; Vertex AI's thought signatures page).
DUMMY_SIGNATURE: Final[str] = "skip_thought_signature_validator"
GENERATED_PREFIX: Final[str] = "gemini_"
_GENERATED: Final = re.compile(r"gemini_[0-9a-f]{24}")
_BASE64: Final = re.compile(r"[A-Za-z0-9+/_-]*={0,2}")
# The URL-safe alphabet's two letters, as the standard alphabet writes them.
_STANDARD: Final = str.maketrans("-_", "+/")


def generated_call_id(thinking: str, content: str, index: int, name: str, arguments_json: str) -> str:
    """The id thinkseal gives call ``index`` of a Gemini reply that came without
    one: ``"gemini_"`` + the first 24 hex digits of SHA-256 over the compact JSON
    array ``[thinking, content, index, name, arguments]`` (the reply's thought
    and answer texts, the call's position among the reply's calls, its name
    and its arguments' RFC 8785 text)."""
    material = json.dumps([thinking, content, index, name, arguments_json], ensure_ascii=False, separators=(",", ":"))
    return GENERATED_PREFIX + hashlib.sha256(material.encode()).hexdigest()[:24]


def is_generated(call_id: str) -> bool:
    """Whether ``call_id`` is one thinkseal generated (it never goes on the wire)."""
    return _GENERATED.fullmatch(call_id) is not None


def signature_block(provider: str, signature: str) -> ThinkingBlock.Opaque:
    """The sealed block that carries ``signature`` onto the part after it."""
    return ThinkingBlock.Opaque(provider, json.dumps({SIGNATURE: signature}, separators=(",", ":")))


# -- reading the two spellings -------------------------------------------------------


def _snake(camel: str) -> str:
    return re.sub(r"([A-Z])", lambda m: "_" + m.group(1).lower(), camel)


def key(node: Node, camel: str) -> str:
    """The member of ``node`` spelled ``camel`` (HTTP JSON) or in snake_case
    (the SDK's ``model_dump()``), whichever is present and not null."""
    value = node.value
    if isinstance(value, Mapping) and value.get(camel) is None:
        snake = _snake(camel)
        if value.get(snake) is not None:
            return snake
    return camel


def _plain(value: Any) -> Any:
    """An SDK enum as its string value."""
    return value.value if isinstance(value, enum.Enum) else value


def opt_str(node: Node, camel: str) -> str | None:
    name = key(node, camel)
    raw = node.value.get(name) if isinstance(node.value, Mapping) else None
    if raw is None:
        return None
    raw = _plain(raw)
    if not isinstance(raw, str):
        raise ResponseError(f"expected a string, got {type(raw).__name__}", path=f"{node.path}.{name}")
    return valid_text(raw, f"{node.path}.{name}")


def wire_base64(text: str) -> str:
    """base64 text as the wire writes it: the standard alphabet, padded. The
    google-genai SDK's objects (and ``model_dump(mode="json")``) write bytes
    URL-safe, so without this one reply would give two different messages."""
    text = text.translate(_STANDARD)
    return text + "=" * (-len(text) % 4)


def _signature(node: Node) -> str | None:
    """A part's ``thoughtSignature`` as base64 text in the wire's alphabet (the
    SDK gives bytes, or URL-safe text)."""
    name = key(node, SIGNATURE)
    raw = node.value.get(name)
    where = f"{node.path}.{name}"
    if raw is None:
        return None
    if isinstance(raw, (bytes, bytearray)):
        return base64.b64encode(bytes(raw)).decode() if raw else None
    if not isinstance(raw, str):
        raise ResponseError(f"expected base64 text, got {type(raw).__name__}", path=where)
    if raw and (_BASE64.fullmatch(raw) is None or len(raw.rstrip("=")) % 4 == 1):
        raise ResponseError("expected base64 data", path=where)
    return wire_base64(raw) if raw else None


def _rest(value: Any, depth: int) -> Any:
    """A part (``depth`` 2) or a member of one in the REST spelling: camelCase
    members (the part's own and its payload's, never deeper: that is data),
    bytes as base64, enums as strings, no nulls."""
    if isinstance(value, Mapping):
        out = {}
        for name, item in value.items():
            if item is None:
                continue
            camel = re.sub(r"_([a-z])", lambda m: m.group(1).upper(), name) if depth > 0 else name
            out[camel] = _rest(item, depth - 1)
        return out
    if isinstance(value, list):
        return [_rest(item, depth) for item in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode()
    return _plain(value)


def native(provider: str, part: Node, without: str | None) -> Native:
    """A part kept as ``provider``'s own block, without the member ``without``
    (its signature, kept apart)."""
    try:
        value = _rest({k: v for k, v in part.value.items() if k != without}, 2)
        blob = value.get("inlineData")
        if isinstance(blob, dict) and isinstance(blob.get("data"), str):
            value["inlineData"] = {**blob, "data": wire_base64(blob["data"])}
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False)
        return Native(provider, data)
    except (TypeError, ValueError, RecursionError, ThinksealError) as err:
        raise ResponseError(f"part is not JSON: {err}", path=part.path) from None


def raise_error(root: Node) -> None:
    """An error body (``{"error": {"code", "message", "status"}}``), whole or mid-stream."""
    root.object()
    error = root.value.get("error")
    if error is None:
        return
    message = error_text(error.get("message") if isinstance(error, Mapping) else error)
    status = error.get("status") if isinstance(error, Mapping) else None
    shown = f"{error_text(status)}: {message}" if status else message
    raise ResponseError(f"the provider reported an error: {shown}", path="$.error")


# -- the reply being gathered --------------------------------------------------------


class _Run:
    """A text part (answer or thought), possibly from several stream chunks."""

    __slots__ = ("path", "pieces", "signature", "thought")

    def __init__(self, thought: bool, path: str) -> None:
        self.thought = thought
        self.path = path
        self.pieces = Pieces(path)
        self.signature: str | None = None


class _Call:
    __slots__ = ("arguments", "id", "name", "path", "signature")

    def __init__(self, call_id: str | None, name: str, arguments: dict[str, Any], path: str) -> None:
        self.id = call_id
        self.name = name
        self.arguments = arguments
        self.path = path
        self.signature: str | None = None


class _Other:
    __slots__ = ("block", "signature")

    def __init__(self, block: Native, signature: str | None) -> None:
        self.block = block
        self.signature = signature


Item = _Run | _Call | _Other


class Gathering:
    """The parts of one reply in order, from a whole response (``merge`` off)
    or from stream chunks (``merge`` on: text fragments join their run)."""

    def __init__(self, provider: str, merge: bool) -> None:
        self.provider = provider
        self.merge = merge
        self.items: list[Item] = []
        self.calls = 0

    def add_content(self, content: Node) -> list[Delta]:
        content.object()
        role = opt_str(content, "role")
        if role is not None and role != "model":
            raise ResponseError(f"expected role 'model', got {role!r}", path=f"{content.path}.role")
        deltas: list[Delta] = []
        for part in content.items("parts", required=False):
            deltas.extend(self.add_part(part.object()))
        return deltas

    def add_part(self, part: Node) -> list[Delta]:
        signature = _signature(part)
        text_key = key(part, "text")
        if part.value.get(text_key) is not None or part.value.get("thought"):
            text = opt_str(part, "text") or ""
            thought = part.value.get("thought") is True
            return self._text(thought, text, signature, f"{part.path}.{text_key}")
        call_key = key(part, "functionCall")
        if part.value.get(call_key) is not None:
            return [self._call(part.child(call_key).object(), signature)]
        self.items.append(_Other(native(self.provider, part, key(part, SIGNATURE)), signature))
        return []

    def _text(self, thought: bool, text: str, signature: str | None, path: str) -> list[Delta]:
        last = self.items[-1] if self.items else None
        # A stream's empty text part carrying only a signature belongs to the part before it.
        signature_only = not text and signature is not None
        if (
            self.merge
            and isinstance(last, _Run)
            and (last.thought == thought or signature_only)
            and not (last.signature and signature)
        ):
            run = last
        else:
            run = _Run(thought, path)
            self.items.append(run)
        run.signature = run.signature or signature
        piece = run.pieces.add(text) if text else ""
        if not piece:
            return []
        index = len(self.items) - 1  # the run is always the last item
        return [ThinkingDelta(index, piece) if thought else TextDelta(index, piece)]

    def _call(self, call: Node, signature: str | None) -> Delta:
        if call.value.get(key(call, "partialArgs")) is not None:
            raise ResponseError("streamed function-call arguments are not supported", path=f"{call.path}.partialArgs")
        name = call.text("name")
        call_id = opt_str(call, "id") or None
        arguments = call.opt("args", dict, {})
        path = call.path
        try:
            draft = ToolCall("pending", name, arguments)
        except ThinksealError as exc:
            raise wrap_errors(f"{path}.args", exc) from None
        item = _Call(call_id, name, dict(arguments), path)
        item.signature = signature
        self.items.append(item)
        index = self.calls
        self.calls += 1
        return ToolCallDelta(index, call_id, name, draft.arguments_json)

    def message(self, *, lenient: bool = False) -> AssistantMessage | None:
        """The reply's parts in order; ``lenient`` (a cut stream): without
        thinking or signatures, None when no text or call arrived."""
        runs = [item for item in self.items if isinstance(item, _Run)]
        texts = {id(run): lenient_text(run.pieces.parts) if lenient else run.pieces.text() for run in runs}
        thinking = "".join(texts[id(run)] for run in runs if run.thought)
        content = "".join(texts[id(run)] for run in runs if not run.thought)
        parts: list[Part] = []
        calls = 0
        for item in self.items:
            signature = None if lenient else item.signature
            if isinstance(item, _Run):
                text = texts[id(item)]
                if lenient and item.thought:
                    continue
                if not text:
                    if signature is not None:
                        whole = {"text": "", SIGNATURE: signature, **({"thought": True} if item.thought else {})}
                        opaque = json.dumps(whole, separators=(",", ":"), sort_keys=True)
                        parts.append(ThinkingBlock.Opaque(self.provider, opaque))
                    continue
                part: Part = ThinkingBlock.Text(text) if item.thought else text
            elif isinstance(item, _Call):
                part = self._tool_call(item, thinking, content, calls)
                calls += 1
            else:
                if lenient:
                    continue
                part = item.block
            if signature is not None:
                parts.append(signature_block(self.provider, signature))
            parts.append(part)
        if lenient and not any(isinstance(p, (str, ToolCall)) for p in parts):
            return None
        try:
            return AssistantMessage.from_parts(parts)
        except ThinksealError as err:
            raise wrap_errors("$.candidates[0].content", err) from None

    @staticmethod
    def _tool_call(item: _Call, thinking: str, content: str, index: int) -> ToolCall:
        try:
            draft = ToolCall("pending", item.name, item.arguments)
            call_id = item.id or generated_call_id(thinking, content, index, item.name, draft.arguments_json)
            return ToolCall(call_id, item.name, draft.arguments)
        except ThinksealError as exc:
            raise wrap_errors(item.path, exc) from None


def first_candidate(root: Node) -> Node | None:
    candidates = root.opt(key(root, "candidates"), list, [])
    return Node(candidates[0], "$.candidates[0]").object() if candidates else None


def usage(root: Node) -> Usage | None:
    name = key(root, "usageMetadata")
    node = root.opt_node(name)
    if node is None:
        return None
    prompt = count(node, key(node, "promptTokenCount"))
    candidates = count(node, key(node, "candidatesTokenCount"))
    thoughts = count(node, key(node, "thoughtsTokenCount"))
    output = None if candidates is None and thoughts is None else (candidates or 0) + (thoughts or 0)
    cached = count(node, key(node, "cachedContentTokenCount"))
    return Usage(input_tokens=prompt, output_tokens=output, cache_read_tokens=cached, reasoning_tokens=thoughts)


def finish_reason(candidate: Node | None) -> str | None:
    return None if candidate is None else opt_str(candidate, "finishReason")


# -- the adapter side ----------------------------------------------------------------


class GeminiReader:
    """``parse``, ``reply_info`` and ``new_stream`` of a Gemini adapter."""

    id: ClassVar[str]

    def parse(self, response: Mapping[str, Any]) -> AssistantMessage:
        root = Node(response)
        raise_error(root)
        candidate = first_candidate(root)
        if candidate is None:
            feedback = root.opt_node(key(root, "promptFeedback"))
            reason = opt_str(feedback, "blockReason") if feedback is not None else None
            detail = f" (promptFeedback.blockReason: {reason})" if reason else ""
            raise ResponseError(f"the response has no candidates{detail}", path="$.candidates")
        gathering = Gathering(self.id, merge=False)
        content = candidate.opt_node(key(candidate, "content"))
        if content is not None:
            gathering.add_content(content)
        message = gathering.message()
        assert message is not None
        return message

    def reply_info(self, response: Mapping[str, Any]) -> ReplyInfo:
        root = Node(response).object()
        return ReplyInfo(
            finish_reason(first_candidate(root)),
            usage(root),
            opt_str(root, "responseId"),
            opt_str(root, "modelVersion"),
        )

    def new_stream(self) -> StreamParser:
        return GeminiStream(self.id)


class GeminiStream(StreamParser):
    """Accumulates ``streamGenerateContent`` chunks (each a ``GenerateContentResponse``)."""

    def __init__(self, provider: str) -> None:
        self._reply = Gathering(provider, merge=True)
        self._finish: str | None = None
        self._usage = Usage()
        self._id: str | None = None
        self._model: str | None = None

    def feed(self, event: Mapping[str, Any]) -> list[Delta]:
        root = Node(event)
        raise_error(root)
        candidate = first_candidate(root)
        deltas: list[Delta] = []
        if candidate is not None:
            if self._finish is not None and candidate.value.get(key(candidate, "content")) is not None:
                raise ResponseError("content after the chunk that finished the reply", path="$.candidates[0]")
            content = candidate.opt_node(key(candidate, "content"))
            if content is not None:
                deltas = self._reply.add_content(content)
            self._finish = finish_reason(candidate) or self._finish
        self._usage = usage(root) or self._usage
        self._id = self._id or opt_str(root, "responseId")
        self._model = opt_str(root, "modelVersion") or self._model
        return deltas

    def finish(self) -> AssistantMessage:
        if self._finish is None:
            raise ResponseError(
                "the stream ended before a chunk with finishReason (truncated)", path="$.candidates[0].finishReason"
            )
        message = self._reply.message()
        assert message is not None
        return message

    def ended(self) -> bool:
        return self._finish is not None

    def info(self) -> ReplyInfo:
        return ReplyInfo(self._finish, self._usage, self._id, self._model)

    def partial(self) -> AssistantMessage | None:
        return self._reply.message(lenient=True)
