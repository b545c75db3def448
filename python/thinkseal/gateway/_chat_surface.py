"""The chat-completions surface: OpenRouter, DeepSeek, Z.ai, Mistral, OpenAI
and Gemini's OpenAI-compatible endpoint, each at the path its adapter sends
to (``/chat/completions`` under the provider's base URL, Mistral's
``/v1/chat/completions``), so a client whose base URL is the route sends the
path it sends the provider; or, for a route whose upstream is the provider's
host, at that path under the base URL's own path (``provider_paths``).

An assistant message is read by the route's own adapter, as it reads the
reply the message came in (a client sends a reply's message back as it got
it): its reasoning fields (``reasoning_content``, OpenRouter's ``reasoning``
and ``reasoning_details``, Mistral's thinking chunks, Gemini's
``extra_content`` thought signatures) become the very parts the ledger
recorded. Every other message is read by ``interop.openai.import_chat``. A
turn that goes out unsealed is written by the adapter's own assistant
writer, in the shape the adapter gives it for this request (DeepSeek's
reasoning on every turn once tools are sent, Gemini 3's placeholder signature
on a first call sent without its own).

Ollama's ``/api/chat`` is served by ``_ollama_surface``: its tool results
name their tool (``tool_name``) rather than a call id, its messages carry
``images`` and ``thinking`` fields the chat importer does not read, and it
streams NDJSON by default.
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial
from typing import Any

from .._conversation import Conversation
from .._errors import ThinksealError, ValidationError
from .._messages import AssistantMessage, Message
from ..providers import Provider
from ..providers._chat import PATH as CHAT_PATH
from ..providers._chat import ChatProvider, goes_out
from ._read_cache import DEFAULT_BYTES, ReadCache
from ._surfaces import Elements, Incoming, Surface, _model, _stream, json_of, provider_paths

# Stands in for an assistant message while the other messages are imported;
# the adapter's reading of the message replaces it.
_PLACEHOLDER = {"role": "assistant", "content": "."}


def _path_of(adapter: Provider) -> str:
    """The path the adapter's requests go to, relative to its base URL."""
    if isinstance(adapter, ChatProvider):
        return CHAT_PATH
    if adapter.id == "mistral":
        from ..providers import mistral  # noqa: PLC0415

        return mistral.PATH
    raise ValidationError(
        f"provider: {adapter.id!r} does not speak chat completions through the gateway", path="provider"
    )


class ChatCompletions(Surface):
    """``POST <route>/chat/completions`` (Mistral: ``/v1/chat/completions``), or
    the provider's base path in front (``provider_paths``)."""

    field = "messages"

    def __init__(self, adapter: Provider, cache_bytes: int = DEFAULT_BYTES) -> None:
        super().__init__(adapter, cache_bytes)
        self.path = _path_of(adapter)  # relative to the provider's base URL
        self.paths = provider_paths(adapter, self.path)
        self._read: ReadCache[Message] = ReadCache(cache_bytes)  # each wire message read

    def serves(self, path: str) -> bool:
        return path in self.paths

    def read(self, body: Mapping[str, Any], path: str) -> Incoming:
        from ..interop.openai import import_chat  # noqa: PLC0415

        messages = body.get("messages")
        if not isinstance(messages, list):
            raise ValidationError("messages: expected a list", path="messages")
        turns: dict[int, int] = {}
        read: dict[int, AssistantMessage] = {}
        others: list[Any] = []
        for k, element in enumerate(messages):
            if isinstance(element, Mapping) and element.get("role") == "assistant":
                read[k] = self.assistant(element, k)
                turns[k] = k  # one wire message is one conversation message
                others.append(_PLACEHOLDER)
            else:
                others.append(element)
        tools = body.get("tools")
        fmt = body.get("response_format")
        conversation = import_chat(others, tools=tools, response_format=fmt)
        if read:
            imported: list[Message] = list(conversation.messages)
            for k, message in read.items():
                imported[k] = message
            conversation = conversation.with_messages(imported)
        return Incoming(conversation, self.field, turns, _model(body), _stream(body))

    reads_elements = True

    def read_elements(self, body: dict[str, Any], elements: Elements, path: str) -> Incoming:
        from ..interop.openai import import_chat  # noqa: PLC0415

        context = import_chat([], tools=body.get("tools"), response_format=body.get("response_format"))
        out: list[Message] = []
        turns: dict[int, int] = {}
        for k in range(len(elements)):
            message = self._read.get(elements.digest(k), partial(self._element, elements, k), elements.size(k))
            if isinstance(message, AssistantMessage):
                turns[k] = k  # one wire message is one conversation message
            out.append(message)
        conversation = Conversation(out, context.tools, context.response_format)
        return Incoming(conversation, self.field, turns, _model(body), _stream(body))

    def _element(self, elements: Elements, index: int) -> Message:
        """Wire message ``index``, read as ``read`` reads it."""
        from ..interop._common import Obj  # noqa: PLC0415
        from ..interop.openai import _chat_message  # noqa: PLC0415

        element = json_of(elements.raw(index))
        if isinstance(element, Mapping) and element.get("role") == "assistant":
            return self.assistant(element, index)
        return _chat_message(Obj(element, f"messages[{index}]"))

    def assistant(self, element: Mapping[str, Any], index: int) -> AssistantMessage:
        """Wire message ``index``, an assistant message, as the adapter reads
        the same message in a reply."""
        try:
            return self.adapter.parse({"choices": [{"index": 0, "message": dict(element)}]})
        except ThinksealError as err:
            inner = getattr(err, "path", None) or "$.choices[0].message"
            where = inner.replace("$.choices[0].message", f"messages[{index}]", 1)
            raise ValidationError(f"{where}: {err}", path=where) from None

    def turn_wire(self, turn: AssistantMessage) -> object | None:
        """The turn as the adapter writes it in a request of its plain shape."""
        return self.written(turn, self.adapter.id)

    def wire_edits(
        self, incoming: Incoming, index: int, sent: AssistantMessage, model: str
    ) -> dict[int, object | None]:
        shape = self.adapter.model_shape(incoming.conversation, model) if isinstance(self.adapter, ChatProvider) else ""
        return {incoming.turns[index]: self.written(sent, shape)}

    def written(self, turn: AssistantMessage, shape: str) -> object | None:
        if not goes_out(turn):
            return None  # the adapter leaves out a turn with neither text nor calls
        if isinstance(self.adapter, ChatProvider):
            return self.adapter._assistant(turn, shape)  # the adapter's own writer
        from ..providers import mistral  # noqa: PLC0415

        return mistral._assistant_wire(turn)
