"""``ChatThinkseal``: a LangChain chat model that sends through thinkseal.

LangChain keeps the history (``AIMessage`` content blocks carry the sealed
data, see ``_convert``); on every call the messages are converted, attached to
the ledger, sent through thinkseal's client for the adapter's provider, and
the reply recorded (``interop._sender.Sender``), then handed back as an
``AIMessage`` with every part in place.
"""

from __future__ import annotations

import json
import logging
from collections.abc import AsyncIterator, Callable, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, cast

from langchain_core.language_models import BaseChatModel, LanguageModelInput
from langchain_core.messages import AIMessage, AIMessageChunk, BaseMessage
from langchain_core.outputs import ChatGeneration, ChatGenerationChunk, ChatResult
from langchain_core.runnables import Runnable
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import ConfigDict, Field, PrivateAttr, SecretStr

from ..._conversation import Conversation
from ..._errors import ValidationError
from ..._reply import Reply, TextDelta, ThinkingDelta, ToolCallDelta
from ..._tool import Tool
from .._common import Obj, fail, json_value, made
from .._sender import Sender
from ._convert import content_blocks, export_message, import_messages, reply_metadata, usage_metadata

if TYPE_CHECKING:
    from langchain_core.callbacks import AsyncCallbackManagerForLLMRun, CallbackManagerForLLMRun

    from ..._reply import Delta

__all__ = ["ChatThinkseal"]

_log = logging.getLogger("thinkseal.interop.langchain")

# Adapters that take Anthropic's request fields (tool_choice, stop_sequences).
_ANTHROPIC_FIELDS: Final = ("anthropic", "vertex-anthropic")
# Adapters that take the chat-completions fields (tool_choice, stop).
_CHAT_FIELDS: Final = ("openai", "openrouter", "deepseek", "zai", "mistral", "gemini-openai")
# Adapters whose streamed thinking ends up signed (a "thinking" block, not "reasoning").
_SIGNED_THINKING: Final = ("anthropic", "vertex-anthropic", "bedrock")
# Streamed blocks get indices this far apart, so the blocks only the finished
# reply holds (redacted thinking, opaque items) get indices between them.
_GAP: Final = 1000


class ChatThinkseal(BaseChatModel):
    """A LangChain chat model for any thinkseal provider.

    ``provider``: a thinkseal provider id (``thinkseal.providers.PROVIDER_IDS``);
    ``model``: the model id; ``options``: the provider's own request fields
    sent with every call (``max_tokens``, ``thinking``, ``reasoning``, ...);
    ``ledger``: a ``thinkseal.Ledger`` (or ``AsyncLedger`` for asyncio use)
    that recognises the sealed thinking this model returned when LangChain
    hands the history back (without one, sealed thinking is never replayed);
    ``client`` / ``async_client``: thinkseal clients to send with; otherwise
    one is made from ``base_url``, ``api_key``, ``account``, ``aliases`` and
    ``client_options`` (any other ``thinkseal.Client`` argument).

    Keyword arguments of a call (``model.invoke(messages, max_tokens=...)``,
    ``bind(...)``) are provider request fields too and override ``options``.
    """

    model_config = ConfigDict(arbitrary_types_allowed=True)

    provider: str
    model: str
    options: dict[str, Any] = Field(default_factory=dict)
    ledger: Any = Field(default=None, exclude=True)
    client: Any = Field(default=None, exclude=True)
    async_client: Any = Field(default=None, exclude=True)
    base_url: str | None = None
    api_key: SecretStr | None = Field(default=None, exclude=True, repr=False)
    account: str | None = None
    aliases: Any = Field(default=None, exclude=True)
    client_options: dict[str, Any] = Field(default_factory=dict, exclude=True)

    # Typed Any where pydantic keeps it (a ModelPrivateAttr on the class); ``_via`` gives it typed.
    _sender: Any = PrivateAttr()

    def __init__(self, provider: str | None = None, model: str | None = None, /, **fields: Any) -> None:
        # Positional too, as the other adapters take them: ChatThinkseal("anthropic", "claude-sonnet-4-5").
        for name, value in (("provider", provider), ("model", model)):
            if value is not None:
                if name in fields:
                    raise ValidationError(f"{name}: given twice", path=name)
                fields[name] = value
        super().__init__(**fields)
        # Checked here, not in a pydantic hook, so the error stays thinkseal's own (pydantic
        # would wrap a ValueError raised during validation in its ValidationError).
        json_value(self.options, "options")
        given = {
            "base_url": self.base_url,
            "api_key": self.api_key.get_secret_value() if self.api_key is not None else None,
            "account": self.account,
            "aliases": self.aliases,
        }
        self._sender = Sender(
            self.provider,
            self.model,
            ledger=self.ledger,
            client=self.client,
            async_client=self.async_client,
            **{k: v for k, v in given.items() if v is not None},
            **self.client_options,
        )

    @property
    def _via(self) -> Sender:
        return cast("Sender", self._sender)

    # -- what LangChain asks of a chat model ---------------------------------------------

    @property
    def _llm_type(self) -> str:
        return "thinkseal"

    @property
    def _identifying_params(self) -> Mapping[str, Any]:
        return {"provider": self.provider, "model": self.model, "options": self.options, "account": self.account}

    def _get_ls_params(self, stop: list[str] | None = None, **kwargs: Any) -> Any:
        params = super()._get_ls_params(stop=stop, **kwargs)
        params["ls_provider"] = self.provider
        params["ls_model_name"] = self.model
        return params

    def bind_tools(
        self,
        tools: Sequence[dict[str, Any] | type | Callable[..., Any] | BaseTool],
        *,
        tool_choice: str | bool | None = None,
        **kwargs: Any,
    ) -> Runnable[LanguageModelInput, AIMessage]:
        """The model with ``tools`` (anything ``convert_to_openai_tool``
        takes) sent on every call. ``tool_choice``: ``"auto"``, ``"any"`` /
        ``"required"`` / ``True`` (some tool), ``"none"``, or a tool's name,
        translated to the provider's field (Anthropic's and the
        chat-completions family's); for other providers give the provider's
        own field as a keyword argument."""
        specs = [convert_to_openai_tool(tool) for tool in tools]
        if tool_choice is not None and tool_choice is not False:
            kwargs.update(self._tool_choice(tool_choice, specs))
        return self.bind(tools=specs, **kwargs)

    def _tool_choice(self, choice: str | bool, specs: list[dict[str, Any]]) -> dict[str, Any]:
        if choice is True:
            if len(specs) != 1:
                raise ValidationError("tool_choice: True needs exactly one tool", path="tool_choice")
            choice = specs[0]["function"]["name"]
        mode = {"any": "any", "required": "any", "auto": "auto", "none": "none"}.get(str(choice))
        if self.provider in _ANTHROPIC_FIELDS:
            return {"tool_choice": {"type": mode} if mode else {"type": "tool", "name": choice}}
        if self.provider in _CHAT_FIELDS:
            chat = {"any": "required", "auto": "auto", "none": "none"}
            return {"tool_choice": chat[mode] if mode else {"type": "function", "function": {"name": choice}}}
        if self.provider == "openai-responses":
            chat = {"any": "required", "auto": "auto", "none": "none"}
            return {"tool_choice": chat[mode] if mode else {"type": "function", "name": choice}}
        raise ValidationError(
            f"tool_choice: not translated for {self.provider!r}; pass the provider's own field instead",
            path="tool_choice",
        )

    # -- one call ------------------------------------------------------------------------

    def _request(
        self, messages: list[BaseMessage], stop: list[str] | None, kwargs: dict[str, Any]
    ) -> tuple[Conversation, dict[str, Any]]:
        options = dict(kwargs)
        options.pop("ls_structured_output_format", None)
        tools = options.pop("tools", None)
        conversation = import_messages(messages)
        if tools:
            conversation = conversation.with_tools([_tool(spec, f"tools[{i}]") for i, spec in enumerate(tools)])
        options = {**self.options, **options}
        if stop:
            if self.provider in _ANTHROPIC_FIELDS:
                options["stop_sequences"] = list(stop)
            elif self.provider in (*_CHAT_FIELDS, "ollama"):
                options["stop"] = list(stop)
            else:
                raise ValidationError(
                    f"stop: not translated for {self.provider!r}; pass the provider's own field instead", path="stop"
                )
        return conversation, options

    def _generate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        conversation, options = self._request(messages, stop, kwargs)
        return _result(self._via.send(conversation, options))

    async def _agenerate(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> ChatResult:
        conversation, options = self._request(messages, stop, kwargs)
        return _result(await self._via.send_async(conversation, options))

    def _stream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: CallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> Iterator[ChatGenerationChunk]:
        conversation, options = self._request(messages, stop, kwargs)
        chunks = _Chunks(self.provider)
        for item in self._via.stream(conversation, options):
            chunk = chunks.last(item) if isinstance(item, Reply) else chunks.delta(item)
            if run_manager is not None:
                run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    async def _astream(
        self,
        messages: list[BaseMessage],
        stop: list[str] | None = None,
        run_manager: AsyncCallbackManagerForLLMRun | None = None,
        **kwargs: Any,
    ) -> AsyncIterator[ChatGenerationChunk]:
        conversation, options = self._request(messages, stop, kwargs)
        chunks = _Chunks(self.provider)
        async for item in self._via.stream_async(conversation, options):
            chunk = chunks.last(item) if isinstance(item, Reply) else chunks.delta(item)
            if run_manager is not None:
                await run_manager.on_llm_new_token(chunk.text, chunk=chunk)
            yield chunk

    # -- closing -------------------------------------------------------------------------

    def close(self) -> None:
        """Close the thinkseal clients this model made (not given ones, nor the ledger)."""
        self._via.close()

    async def aclose(self) -> None:
        await self._via.aclose()


def _tool(spec: object, path: str) -> Tool:
    node = Obj(spec, path)
    function = node.obj("function") if node.get("type", str, "function") == "function" else None
    if function is None:
        raise fail(node.at("type"), "only function tools are sent (convert_to_openai_tool's form)")
    parameters = function.get("parameters", Mapping, {"type": "object", "properties": {}})
    return made(
        path,
        Tool,
        function.text("name"),
        function.get("description", str, ""),
        json_value(parameters, function.at("parameters")),
    )


def _result(reply: Reply) -> ChatResult:
    message = export_message(reply)
    return ChatResult(generations=[ChatGeneration(message=message)], llm_output=reply_metadata(reply))


class _Chunks:
    """One stream's chunks: each delta as a chunk (text and thinking as
    content blocks, tool calls as ``tool_call_chunks``), then a last chunk that
    completes what the deltas built into the finished reply's blocks, so the
    chunks added up hold the reply exactly (every block carries an ``index``
    that places it; ``import_messages`` reads them in that order)."""

    def __init__(self, provider: str) -> None:
        self.thinking_type = "thinking" if provider in _SIGNED_THINKING else "reasoning"
        # (delta kind, provider index) -> [LangChain index, block type, text so far]
        self.segments: dict[tuple[str, int], list[Any]] = {}
        # provider index of a tool call -> [position, id, name, arguments so far]
        self.calls: dict[int, list[Any]] = {}

    def delta(self, item: Delta) -> ChatGenerationChunk:
        if isinstance(item, ToolCallDelta):
            call = self.calls.setdefault(item.index, [len(self.calls), None, None, ""])
            call[1] = call[1] or item.id
            call[2] = call[2] or item.name
            call[3] += item.arguments
            piece = {"type": "tool_call_chunk", "index": call[0], "id": item.id, "name": item.name}
            piece["args"] = item.arguments
            return ChatGenerationChunk(message=AIMessageChunk(content=[], tool_call_chunks=[piece]))  # type: ignore[list-item]
        kind = "text" if isinstance(item, TextDelta) else self.thinking_type
        assert isinstance(item, (TextDelta, ThinkingDelta))
        key = (kind, item.index)
        segment = self.segments.get(key)
        if segment is None:
            segment = self.segments[key] = [_GAP * (len(self.segments) + 1), kind, ""]
        segment[2] += item.text
        block: dict[str, Any] = {"type": kind, kind: item.text, "index": segment[0]}
        return ChatGenerationChunk(message=AIMessageChunk(content=[block]))

    def last(self, reply: Reply) -> ChatGenerationChunk:
        turn = reply.message
        final = content_blocks(turn)
        streamed = sorted(self.segments.values())
        out: list[dict[str, Any]] = []
        at, previous = 0, 0
        for block in final:
            segment = streamed[at] if at < len(streamed) else None
            field = {"text": "text", "thinking": "thinking", "reasoning": "reasoning"}.get(block["type"])
            text = block.get(field) if field else None
            if (
                field is not None
                and segment is not None
                and segment[1] == block["type"]
                and isinstance(text, str)
                and text.startswith(segment[2])
                and not (block["type"] == "reasoning" and "extras" in block)
            ):
                out.append({**block, field: text[len(segment[2]) :], "index": segment[0]})
                previous, at = segment[0], at + 1
            else:
                previous += 1
                out.append({**block, "index": previous})
        if at < len(streamed):
            # A streamed block the finished reply does not hold: the added-up chunks would not be this reply.
            _log.warning("a streamed block is not in the finished reply; the added-up stream differs from it")
        pieces: list[dict[str, Any]] = []
        streamed_calls = sorted(self.calls.values())
        for k, call in enumerate(turn.tool_calls):
            text = json.dumps(dict(call.arguments), ensure_ascii=False, separators=(",", ":"))
            if k >= len(streamed_calls):
                position = len(streamed_calls) + (k - len(streamed_calls))
                pieces.append(
                    {"type": "tool_call_chunk", "index": position, "id": call.id, "name": call.name, "args": text}
                )
                continue
            position, sid, sname, sargs = streamed_calls[k]
            rest = ""
            if not _same_arguments(sargs, call.arguments) and text.startswith(sargs):
                rest = text[len(sargs) :]
            pieces.append(
                {
                    "type": "tool_call_chunk",
                    "index": position,
                    "id": None if sid else call.id,
                    "name": None if sname else call.name,
                    "args": rest,
                }
            )
        binding = turn.thinking_binding
        provider = binding.origin.provider if binding is not None else None
        metadata = reply_metadata(reply)
        if provider in ("anthropic", "vertex-anthropic"):
            metadata["model_provider"] = "anthropic"
        usage = usage_metadata(reply, provider)
        message = AIMessageChunk(
            content=out,  # type: ignore[arg-type]
            tool_call_chunks=pieces,  # type: ignore[arg-type]
            response_metadata=metadata,
            usage_metadata=usage,  # type: ignore[arg-type]
            chunk_position="last",
        )
        return ChatGenerationChunk(message=message)


def _same_arguments(text: str, arguments: Mapping[str, Any]) -> bool:
    try:
        return bool(json.loads(text) == dict(arguments)) if text.strip() else not arguments
    except ValueError:
        return False
