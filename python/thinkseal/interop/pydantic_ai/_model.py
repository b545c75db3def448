"""``ThinksealModel``: a pydantic-ai ``Model`` that sends an agent's requests
through thinkseal, for any of its providers.

On every request the agent's message history is converted with
``import_history`` (the agent's instructions and tools put where pydantic-ai
puts them), attached to the ledger (``interop._sender.Sender``: the turns it
recorded are recognised and replayed where they still hold, the rest goes out
unsealed), sent, and the reply recorded. The reply comes back as a
``ModelResponse`` whose parts carry the sealed data in pydantic-ai's own
fields (``_convert.reply_parts``), so it survives the agent's history, a
``ModelMessagesTypeAdapter`` dump and load, and is recognised next time.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from pydantic_ai.messages import (
    InstructionPart,
    ModelMessage,
    ModelResponse,
    ModelResponsePart,
    ModelResponseStreamEvent,
)
from pydantic_ai.models import Model, ModelRequestParameters, StreamedResponse
from pydantic_ai.profiles import ModelProfile
from pydantic_ai.settings import ModelSettings, merge_model_settings
from pydantic_ai.usage import RequestUsage

from ..._conversation import Conversation
from ..._errors import ValidationError
from ..._messages import SystemMessage
from ..._reply import Reply, TextDelta, ThinkingDelta, ToolCallDelta
from ..._tool import Tool
from .._sender import Sender
from . import _settings
from ._convert import import_history, reply_parts

if TYPE_CHECKING:
    from pydantic_ai import RunContext
    from pydantic_ai.messages import FinishReason
    from pydantic_ai.tools import ToolDefinition

    from ...client import AsyncClient, Client
    from ...ledger import AsyncLedger, Ledger

__all__ = ["ThinksealModel", "ThinksealStreamedResponse"]

# Providers whose input token count leaves cache reads and writes out; pydantic-ai's includes them.
_CACHE_APART: Final = frozenset({"anthropic", "bedrock", "vertex-anthropic"})
_FINISH: Final[dict[str, FinishReason]] = {
    "end_turn": "stop",
    "stop_sequence": "stop",
    "stop": "stop",
    "STOP": "stop",
    "completed": "stop",
    "max_tokens": "length",
    "length": "length",
    "model_length": "length",
    "MAX_TOKENS": "length",
    "max_output_tokens": "length",
    "model_context_window_exceeded": "length",
    "tool_use": "tool_call",
    "tool_calls": "tool_call",
    "function_call": "tool_call",
    "refusal": "content_filter",
    "content_filter": "content_filter",
    "content_filtered": "content_filter",
    "guardrail_intervened": "content_filter",
    "SAFETY": "content_filter",
    "RECITATION": "content_filter",
    "BLOCKLIST": "content_filter",
    "PROHIBITED_CONTENT": "content_filter",
    "SPII": "content_filter",
    "error": "error",
    "MALFORMED_FUNCTION_CALL": "error",
}


class ThinksealModel(Model):
    """A pydantic-ai model sending through thinkseal's ``provider_id`` adapter.

    ``model``: the provider's model id. ``ledger``: a ``thinkseal.Ledger`` or
    ``AsyncLedger`` (without one, sealed thinking that comes back in the
    agent's history is never replayed: every call then starts unsealed).
    ``client``: a ``thinkseal.AsyncClient`` (or ``Client``) to send with;
    otherwise one is made from ``client_options`` (``base_url=``,
    ``api_key=``, ``account=``, ``aliases=``, any other ``thinkseal.Client``
    argument). ``options``: provider-native request fields sent with every
    request, as ``thinkseal.Client.send`` takes them (``{"max_tokens": 2048,
    "thinking": {...}}`` for Anthropic). pydantic-ai's ``ModelSettings``
    ``max_tokens``, ``temperature``, ``top_p``, ``top_k``, ``stop_sequences``,
    ``seed`` and the penalties go into the provider's own fields over them,
    and ``extra_body`` over everything. ``settings`` and ``profile`` are
    pydantic-ai's."""

    def __init__(
        self,
        provider_id: str,
        model: str,
        *,
        ledger: Ledger | AsyncLedger | None = None,
        client: Client | AsyncClient | None = None,
        options: Mapping[str, Any] | None = None,
        settings: ModelSettings | None = None,
        profile: ModelProfile | None = None,
        **client_options: Any,
    ) -> None:
        if options is not None and not isinstance(options, Mapping):
            raise ValidationError(f"options: expected a mapping, got {type(options).__name__}", path="options")
        self._sender = Sender(provider_id, model, ledger=ledger, client=client, **client_options)
        self._options: dict[str, Any] = dict(options or {})
        self._base_url: str | None = client_options.get("base_url")
        # A response format goes out in the provider's native field, or thinkseal refuses it (ValidationError):
        # never dropped. Tool output stays the default, as for most pydantic-ai models.
        default = ModelProfile(supports_json_schema_output=True, default_structured_output_mode="tool")
        super().__init__(settings=settings, profile={**default, **(profile or {})})

    # Two models are the same model only if they are the same object: the base class compares settings and
    # profile only, which would make every ThinksealModel with default settings equal to every other.
    def __eq__(self, other: object) -> bool:
        return self is other

    def __hash__(self) -> int:
        return id(self)

    @property
    def model_name(self) -> str:
        return self._sender.model

    @property
    def system(self) -> str:
        """The thinkseal provider id (``gen_ai.system`` in pydantic-ai's telemetry)."""
        return self._sender.provider_id

    @property
    def base_url(self) -> str | None:
        return self._base_url

    @property
    def sender(self) -> Sender:
        """What attaches, sends and records for this model (its ``ledger``, ``provider_id``, ``model``)."""
        return self._sender

    def _unsupported_settings(self) -> frozenset[str]:
        return _settings.unsupported(self._sender.provider_id)

    # -- one request -----------------------------------------------------------------------

    async def request(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> ModelResponse:
        conversation, options, _ = self._prepared(messages, model_settings, model_request_parameters)
        reply = await self._sender.send_async(conversation, options)
        return self.response(reply)

    @asynccontextmanager
    async def request_stream(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
        run_context: RunContext[Any] | None = None,
    ) -> AsyncGenerator[StreamedResponse]:
        conversation, options, params = self._prepared(messages, model_settings, model_request_parameters)
        items = self._sender.stream_async(conversation, options)
        try:
            yield ThinksealStreamedResponse(model_request_parameters=params, model=self, items=items)
        finally:
            # Closes the provider's stream when the agent stops reading early (an output found, a cancel).
            close = getattr(items, "aclose", None)
            if close is not None:
                await close()

    def _prepared(
        self,
        messages: list[ModelMessage],
        model_settings: ModelSettings | None,
        model_request_parameters: ModelRequestParameters,
    ) -> tuple[Conversation, dict[str, Any], ModelRequestParameters]:
        """The conversation and options one request sends, and pydantic-ai's resolved parameters."""
        merged = merge_model_settings(self.settings, model_settings) or {}
        if merged.get("thinking") is not None:
            # pydantic-ai would drop it silently for a profile without thinking; the caller asked for reasoning.
            raise ValidationError(
                "model_settings.thinking: ThinksealModel takes the provider's own thinking fields; pass them "
                'as options= (e.g. {"thinking": {"type": "enabled", "budget_tokens": 1024}} for Anthropic)',
                path="model_settings.thinking",
            )
        settings, params = self.prepare_request(model_settings, model_request_parameters)
        imported = import_history(messages)
        listed = list(imported.conversation.messages)
        if imported.instructions is not None:
            del listed[imported.instructions]
        # The instructions of this request as pydantic-ai resolved them (the agent's, prompted output's),
        # in the place import_history gives them: after the leading system prompts.
        parts = self._get_instruction_parts(messages, params)
        text = InstructionPart.join(parts) if parts else None
        if text is not None and text.strip():
            at = next((i for i, m in enumerate(listed) if not isinstance(m, SystemMessage)), len(listed))
            listed.insert(at, SystemMessage(text))
        tools = [_tool(t) for t in [*params.declared_function_tools, *params.output_tools]]
        conversation = Conversation(listed, tools, _response_format(params))
        options = _settings.options_for(self._sender.provider_id, self._options, dict(settings or {}))
        return conversation, options, params

    # -- the reply -------------------------------------------------------------------------

    def response(self, reply: Reply) -> ModelResponse:
        """``reply`` as pydantic-ai's ``ModelResponse``, its sealed data in the parts' own fields."""
        return ModelResponse(
            parts=reply_parts(reply.message),
            usage=self.usage(reply),
            model_name=reply.model or self.model_name,
            provider_name=self.system,
            provider_url=self._base_url,
            provider_response_id=reply.id,
            provider_details={"finish_reason": reply.stop_reason} if reply.stop_reason is not None else None,
            finish_reason=_FINISH.get(reply.stop_reason) if reply.stop_reason is not None else None,
        )

    def usage(self, reply: Reply) -> RequestUsage:
        u = reply.usage
        read, write = u.cache_read_tokens or 0, u.cache_write_tokens or 0
        apart = self._sender.provider_id in _CACHE_APART
        details = {"reasoning_tokens": u.reasoning_tokens} if u.reasoning_tokens is not None else {}
        return RequestUsage(
            input_tokens=(u.input_tokens or 0) + (read + write if apart else 0),
            output_tokens=u.output_tokens or 0,
            cache_read_tokens=read,
            cache_write_tokens=write,
            details=details,
        )

    async def aclose(self) -> None:
        """Close the clients this model made for the running event loop (not a given client, nor the ledger)."""
        await self._sender.aclose()

    def __repr__(self) -> str:
        return f"ThinksealModel({self.system!r}, {self.model_name!r}{', ledger' if self._sender.ledger else ''})"


def _tool(definition: ToolDefinition) -> Tool:
    return Tool(definition.name, definition.description or "", definition.parameters_json_schema)


def _response_format(params: ModelRequestParameters) -> dict[str, Any] | None:
    """Native output as the chat-completions ``response_format`` thinkseal translates per provider."""
    output = params.output_object
    if params.output_mode != "native" or output is None:
        return None
    schema: dict[str, Any] = {"name": output.name or "final_result", "schema": output.json_schema}
    if output.description:
        schema["description"] = output.description
    if output.strict is not None:
        schema["strict"] = output.strict
    return {"type": "json_schema", "json_schema": schema}


@dataclass
class ThinksealStreamedResponse(StreamedResponse):
    """The deltas of a thinkseal stream as pydantic-ai's events; once the
    stream ends, ``get()`` is the recorded ``Reply`` as ``ThinksealModel.response``
    gives it (sealed data the deltas do not carry included)."""

    model: ThinksealModel = field(kw_only=True)
    items: AsyncIterator[Any] = field(kw_only=True)
    _reply: Reply | None = field(default=None, init=False)
    _started: datetime = field(default_factory=lambda: datetime.now(UTC), init=False)

    async def _get_event_iterator(self) -> AsyncIterator[ModelResponseStreamEvent]:
        manager = self._parts_manager
        async for item in self.items:
            if isinstance(item, Reply):
                self._finish(item)
            elif isinstance(item, TextDelta):
                for event in manager.handle_text_delta(vendor_part_id=("text", item.index), content=item.text):
                    yield event
            elif isinstance(item, ThinkingDelta):
                for event in manager.handle_thinking_delta(vendor_part_id=("thinking", item.index), content=item.text):
                    yield event
            elif isinstance(item, ToolCallDelta):
                for event in manager.handle_tool_call_delta_events(
                    vendor_part_id=("tool", item.index),
                    tool_name=item.name,
                    args=item.arguments or None,
                    tool_call_id=item.id,
                ):
                    yield event

    def _finish(self, reply: Reply) -> None:
        self._reply = reply
        self._usage = self.model.usage(reply)
        self.provider_response_id = reply.id
        if reply.stop_reason is not None:
            self.provider_details = {"finish_reason": reply.stop_reason}
            self.finish_reason = _FINISH.get(reply.stop_reason)

    def get(self) -> ModelResponse:
        response = super().get()
        if self._reply is not None:
            # The streamed parts hold no signatures or encrypted data; the reply does.
            parts: list[ModelResponsePart] = reply_parts(self._reply.message)
            response.parts = parts
            response.model_name = self._reply.model or self.model.model_name
        return response

    @property
    def model_name(self) -> str:
        return self.model.model_name

    @property
    def provider_name(self) -> str | None:
        return self.model.system

    @property
    def provider_url(self) -> str | None:
        return self.model.base_url

    @property
    def timestamp(self) -> datetime:
        return self._started
