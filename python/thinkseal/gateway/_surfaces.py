"""The provider APIs the gateway speaks, one ``Surface`` per wire format: how
to read a request body into a ``Conversation`` (knowing which wire message
each assistant turn came from), and what to put in place of a turn that goes
out unsealed. Replies and streams are read by the provider's adapter itself,
so the gateway binds and records exactly what the library would.

A surface edits only what thinkseal decides: a turn the replay does not keep
is replaced by the adapter's own wire form of that turn as sent (its seals
off, its unanswered calls dropped), and nothing else in the body changes.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from functools import partial
from importlib import import_module
from typing import TYPE_CHECKING, Any, ClassVar, Final
from urllib.parse import quote, unquote, urlsplit

from .._conversation import Conversation
from .._errors import ThinksealError, ValidationError
from .._messages import AssistantMessage, Message
from ._read_cache import DEFAULT_BYTES, ReadCache

if TYPE_CHECKING:
    from ..providers import Provider


def provider_paths(adapter: Provider, path: str) -> frozenset[str]:
    """The paths after a route's prefix at which a client reaches ``path`` (the
    adapter's request path, relative to its base URL): ``path`` itself when the
    route's upstream is the provider's base URL (``https://openrouter.ai/api/v1``),
    and the base URL's own path in front of it when the upstream is the
    provider's host (``https://openrouter.ai``: ``/api/v1/chat/completions``)."""
    return frozenset({path, urlsplit(adapter.connection.base_url).path.rstrip("/") + path})


class BodyError(ThinksealError):
    """The request body is not a JSON object: the gateway refuses it (400)."""


def json_of(raw: bytes) -> Any:
    """The JSON value ``raw`` holds (a body, or one element of its list)."""
    try:
        return json.loads(raw)
    except (ValueError, RecursionError):
        raise BodyError("the request body is not valid JSON") from None


def document_of(raw: bytes) -> dict[str, Any]:
    """The JSON object ``raw`` holds."""
    value = json_of(raw)
    if not isinstance(value, dict):
        raise BodyError("the request body is not a JSON object")
    return value


class Elements:
    """The elements of a body's list: ``digest(i)``, a digest of element
    ``i``'s exact bytes (known without copying them), and ``raw(i)``, the
    bytes (sliced when asked: for an element read for the first time)."""

    __slots__ = ("_digests", "_raw", "_spans")

    def __init__(self, raw: bytes, spans: list[tuple[int, int]], digests: list[bytes]) -> None:
        self._raw = raw
        self._spans = spans
        self._digests = digests

    def __len__(self) -> int:
        return len(self._spans)

    def digest(self, i: int) -> bytes:
        return self._digests[i]

    def raw(self, i: int) -> bytes:
        start, end = self._spans[i]
        return self._raw[start:end]

    def size(self, i: int) -> int:
        start, end = self._spans[i]
        return end - start


def split_body(raw: bytes, field: str) -> tuple[dict[str, Any], Elements] | None:
    """The body ``raw`` without its list ``field`` (the rest parsed, the list's
    place held), and that list's elements; None when the body is to be read
    whole: no such list, or a body naming ``field`` twice (read as ``json``
    reads it). ``BodyError`` when the rest is no JSON object."""
    from .. import _core  # noqa: PLC0415

    found = _core.member_elements(raw, field)
    if found is None:
        return None
    (start, end), spans, digests = found
    body = document_of(raw[:start] + _HOLE + raw[end:])
    if body.get(field) != _HOLE_VALUE:
        return None
    return body, Elements(raw, spans, digests)


class Incoming:
    """A request body as the gateway reads it: the ``conversation``, the
    wire element (in the body's list ``field``) of each assistant turn by its
    conversation index, the ``model`` asked for and whether it ``stream``s.
    ``lengths``: how many consecutive wire elements a turn spans, where that
    is more than its one element (a Responses turn's items)."""

    __slots__ = ("conversation", "field", "lengths", "model", "stream", "turns")

    def __init__(
        self,
        conversation: Conversation,
        field: str,
        turns: dict[int, int],
        model: str,
        stream: bool,
        lengths: Mapping[int, int] | None = None,
    ) -> None:
        self.conversation = conversation
        self.field = field
        self.turns = turns
        self.model = model
        self.stream = stream
        self.lengths: Mapping[int, int] = lengths or {}


class Surface:
    """One provider API. ``paths`` are the provider paths it serves (relative
    to the route's prefix); ``field`` the body's list of messages."""

    field: ClassVar[str]

    def __init__(self, adapter: Provider, cache_bytes: int = DEFAULT_BYTES) -> None:
        """``cache_bytes``: the wire bytes a surface that reads each wire message
        once keeps what it read for (``gateway.read_cache_mib``)."""
        self.adapter = adapter

    def serves(self, path: str) -> bool:
        raise NotImplementedError

    def read(self, body: Mapping[str, Any], path: str) -> Incoming:
        raise NotImplementedError

    def read_body(self, raw: bytes, path: str) -> Incoming:
        """``read`` of the body whose bytes are ``raw`` (``BodyError`` when it is
        no JSON object). A surface that reads its list element by element
        (``read_elements``) is given the body split at its list; a body that is
        not split so (no such list, or one named twice: read as ``json`` reads
        it), or whose reading fails, is read whole, so what is refused is
        refused as a whole read refuses it (a body that is no JSON first)."""
        split = split_body(raw, self.field) if self.reads_elements else None
        if split is not None:
            try:
                return self.read_elements(split[0], split[1], path)
            except BodyError:
                raise
            except ThinksealError:
                pass
        return self.read(document_of(raw), path)

    # Whether ``read_elements`` reads each element of the list once (the read caches).
    reads_elements: ClassVar[bool] = False

    def read_elements(self, body: dict[str, Any], elements: Elements, path: str) -> Incoming:
        """``read`` of ``body`` (its list's place held) with the list's ``elements``,
        each read once: an agent re-sends its history with one more step each
        time, so an element read from the same bytes before is taken again
        (with the digests its messages keep), and only new ones are parsed."""
        raise NotImplementedError

    def turn_wire(self, turn: AssistantMessage) -> object | None:
        """The wire element an as-sent turn goes out as (None: none at all)."""
        raise NotImplementedError

    def wire_edits(
        self, incoming: Incoming, index: int, sent: AssistantMessage, model: str
    ) -> dict[int, object | None]:
        """The edits (wire element index -> new value, None, or an ``_edit.Splice``)
        that send conversation turn ``index`` of ``incoming`` as ``sent`` to
        ``model``: its first element replaced by ``turn_wire``, the rest of its
        elements removed. A surface whose wire form depends on the request
        (the target model, the tools) overrides this."""
        first = incoming.turns[index]
        edits: dict[int, object | None] = {first + k: None for k in range(1, incoming.lengths.get(index, 1))}
        edits[first] = self.turn_wire(sent)
        return edits

    def upstream_path(self, path: str, incoming: Incoming, model: str) -> str:
        """The provider path the request goes to when the route's model map sends
        ``incoming.model`` to ``model`` (another model): the same path where the
        body names the model (the body is then edited instead), else the path
        naming ``model``."""
        return path

    def model_in_body(self) -> bool:
        """Whether the body names the model (the model map edits it there)."""
        return True


class ModelInPath(Surface):
    """A surface whose path names the model (so the route's model map edits
    the path, not the body): ``path`` matches its paths, with a group ``model``."""

    path: ClassVar[re.Pattern[str]]

    def serves(self, path: str) -> bool:
        return self.path.fullmatch(path) is not None

    def model_in_body(self) -> bool:
        return False

    def upstream_path(self, path: str, incoming: Incoming, model: str) -> str:
        match = self.path.fullmatch(path)
        if match is None:
            return path
        start, end = match.span("model")
        return path[:start] + quote(model, safe="") + path[end:]

    def matched(self, path: str, what: str) -> re.Match[str]:
        """``path``'s match (``ValidationError`` naming ``what`` the path is not)."""
        match = self.path.fullmatch(path)
        if match is None:
            raise ValidationError(f"path: not a {what} path: {path!r}", path="path")
        return match


def _model(body: Mapping[str, Any]) -> str:
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise ValidationError("model: expected the model's name", path="model")
    return model


def _stream(body: Mapping[str, Any]) -> bool:
    stream = body.get("stream", False)
    if not isinstance(stream, bool):
        raise ValidationError("stream: expected true or false", path="stream")
    return stream


class AnthropicMessages(Surface):
    """The Messages API (``POST /v1/messages``) of ``anthropic``."""

    field = "messages"

    def serves(self, path: str) -> bool:
        return path == "/v1/messages"

    def model_of(self, body: Mapping[str, Any], path: str) -> str:
        """The model the request names."""
        return _model(body)

    def __init__(self, adapter: Provider, cache_bytes: int = DEFAULT_BYTES) -> None:
        super().__init__(adapter, cache_bytes)
        self._read: ReadCache[tuple[Message, ...]] = ReadCache(cache_bytes)

    def read(self, body: Mapping[str, Any], path: str) -> Incoming:
        from ..interop.anthropic import import_messages  # noqa: PLC0415

        messages = body.get("messages")
        if not isinstance(messages, list):
            raise ValidationError("messages: expected a list", path="messages")
        conversation = import_messages(
            [_unmarked(m) for m in messages],  # type: ignore[misc]  # import_messages checks each
            system=body.get("system"),
            tools=body.get("tools"),
            output_config=body.get("output_config"),
        )
        return self._incoming(body, path, messages, conversation)

    reads_elements = True

    def read_elements(self, body: dict[str, Any], elements: Elements, path: str) -> Incoming:
        from ..interop.anthropic import import_messages  # noqa: PLC0415

        context = import_messages(
            [], system=body.get("system"), tools=body.get("tools"), output_config=body.get("output_config")
        )
        out: list[Message] = [self._read.same(m) for m in context.messages]
        turns: dict[int, int] = {}
        for k in range(len(elements)):
            read = self._read.get(elements.digest(k), partial(_read_element, elements, k), elements.size(k))
            if len(read) == 1 and isinstance(read[0], AssistantMessage):
                turns[len(out)] = k
            out.extend(read)
        conversation = Conversation(out, context.tools, context.response_format)
        return Incoming(conversation, self.field, turns, self.model_of(body, path), _stream(body))

    def _incoming(
        self, body: Mapping[str, Any], path: str, messages: list[Any], conversation: Conversation
    ) -> Incoming:
        # A system prompt comes first; each wire message is one or more messages (tool results, then text).
        turns: dict[int, int] = {}
        index = 1 if body.get("system") is not None else 0
        for k, element in enumerate(messages):
            if isinstance(element, Mapping) and element.get("role") == "assistant":
                turns[index] = k
                index += 1
            else:
                index += _user_messages(element)
        if index != len(conversation):
            raise ValidationError("messages: could not be mapped onto the conversation", path="messages")
        return Incoming(conversation, self.field, turns, self.model_of(body, path), _stream(body))

    def turn_wire(self, turn: AssistantMessage) -> object | None:
        wire = self.adapter.wire  # type: ignore[attr-defined]  # the Claude adapters' wire writer
        if not wire.goes_out(turn):
            return None  # Anthropic combines the user turns that then stand together
        return {"role": "assistant", "content": wire.assistant_blocks(turn)}


# What stands in for the message list while the rest of a body is parsed.
_HOLE: Final = b'"\\u0000thinkseal: messages"'
_HOLE_VALUE: Final = "\x00thinkseal: messages"


def _read_element(elements: Elements, index: int) -> tuple[Message, ...]:
    """The messages wire message ``index`` of ``elements`` imports as."""
    return tuple(_read_message(json_of(elements.raw(index)), index))


def _read_message(element: object, index: int) -> list[Message]:
    """The messages wire message ``index`` imports as, its cache marks off."""
    from ..interop.anthropic import message_of  # noqa: PLC0415

    return message_of(_unmarked(element), index)


def _unmarked(element: object) -> object:
    """An assistant wire message as thinkseal reads it: without the cache marks
    a client puts on its blocks (a mark is no part of the turn: the library
    never fingerprints one, and Claude reads the turn the same with or without
    it), so a turn re-sent with a mark moved onto it is still the turn
    recorded. Only the reading drops them: a kept turn goes out with its
    bytes, marks included; an unsealed turn is written anew, without them (its
    prefix changed anyway, so the cache past it starts again)."""
    if not isinstance(element, Mapping) or element.get("role") != "assistant":
        return element
    content = element.get("content")
    if not isinstance(content, list) or not any(isinstance(b, Mapping) and "cache_control" in b for b in content):
        return element
    blocks = [{k: v for k, v in b.items() if k != "cache_control"} if isinstance(b, Mapping) else b for b in content]
    return {**element, "content": blocks}


class VertexAnthropicMessages(ModelInPath, AnthropicMessages):
    """Claude on Vertex AI (``vertex-anthropic``): the Messages body, posted to
    ``/v1/projects/{p}/locations/{l}/publishers/anthropic/models/{model}:rawPredict``
    (``:streamRawPredict``). The path names the model; ``stream`` in the body
    says whether the answer streams, as on the Messages API."""

    path = re.compile(
        r"/v1/projects/[^/]+/locations/[^/]+/publishers/anthropic/models/"
        r"(?P<model>[^/:]+):(?:rawPredict|streamRawPredict)"
    )

    def model_of(self, body: Mapping[str, Any], path: str) -> str:
        return unquote(self.matched(path, "rawPredict")["model"])


def _user_messages(element: object) -> int:
    """How many conversation messages a user wire message imports as: one per
    tool result, and one for the rest of its content (if any)."""
    if not isinstance(element, Mapping):
        return 1
    content = element.get("content")
    if isinstance(content, str):
        return 1
    if not isinstance(content, list):
        return 1
    results = sum(1 for b in content if isinstance(b, Mapping) and b.get("type") == "tool_result")
    return results + (1 if len(content) > results else 0)


# The provider ids the gateway serves, each with the module and class of its
# surface (imported when a route names one). Every other id is refused in the
# configuration, with what is served.
SURFACES: dict[str, tuple[str, str]] = {
    "anthropic": ("_surfaces", "AnthropicMessages"),
    "vertex-anthropic": ("_surfaces", "VertexAnthropicMessages"),
    "gemini": ("_gemini_surface", "GeminiGenerate"),
    "vertex-gemini": ("_gemini_surface", "GeminiGenerate"),
    "openrouter": ("_chat_surface", "ChatCompletions"),
    "deepseek": ("_chat_surface", "ChatCompletions"),
    "zai": ("_chat_surface", "ChatCompletions"),
    "mistral": ("_chat_surface", "ChatCompletions"),
    "openai": ("_chat_surface", "ChatCompletions"),
    "gemini-openai": ("_chat_surface", "ChatCompletions"),
    "openai-responses": ("_responses_surface", "Responses"),
    "bedrock": ("_bedrock_surface", "BedrockConverse"),
    "ollama": ("_ollama_surface", "OllamaChat"),
}


def surface_of(adapter: Provider, cache_bytes: int = DEFAULT_BYTES) -> Surface:
    found = SURFACES.get(adapter.id)
    if found is None:
        raise ValidationError(
            f"provider: the gateway does not serve {adapter.id!r} yet; it serves {', '.join(SURFACES)}",
            path="provider",
        )
    module, name = found
    kind: type[Surface] = getattr(import_module(f"{__package__}.{module}"), name)
    return kind(adapter, cache_bytes)
