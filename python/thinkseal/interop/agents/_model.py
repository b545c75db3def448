"""``ThinksealModel`` and ``ThinksealModelProvider``: openai-agents' ``Model``
and ``ModelProvider`` over thinkseal's client, for any thinkseal provider.

Each call converts the Runner's request (instructions, Responses input items,
tools, handoffs, output schema) to a ``Conversation`` (``_items``), attaches
it to the ledger, sends it and records the reply (``interop._sender``), and
returns the reply as Responses output items with its sealed data in them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import AsyncIterator, Mapping
from typing import TYPE_CHECKING, Any, Final

from agents.items import ModelResponse, TResponseInputItem, TResponseStreamEvent
from agents.models.interface import Model, ModelProvider, ModelTracing
from agents.usage import Usage
from openai.types.responses.response_usage import InputTokensDetails, OutputTokensDetails

from ..._conversation import Conversation
from ..._errors import ValidationError
from ..._reply import Usage as ThinksealUsage
from .._sender import Sender
from . import _stream
from ._items import output_items, to_conversation

if TYPE_CHECKING:
    from agents.agent_output import AgentOutputSchemaBase
    from agents.handoffs import Handoff
    from agents.model_settings import ModelSettings
    from agents.tool import Tool
    from openai.types.responses.response_prompt_param import ResponsePromptParam

    from ...client import AsyncClient, Client
    from ...ledger import AsyncLedger, Ledger

# Providers whose input token count leaves cache reads and writes out (agents counts them in).
_CACHE_APART: Final = frozenset({"anthropic", "bedrock", "vertex-anthropic"})
# ModelSettings fields that go out under the provider's own name for them.
_PASSED: Final = ("temperature", "top_p", "frequency_penalty", "presence_penalty", "parallel_tool_calls")
_MAX_TOKENS: Final[Mapping[str, str]] = {"openai-responses": "max_output_tokens"}
# Fields that change nothing in the request (agents' own machinery reads them).
_IGNORED: Final = frozenset({"include_usage", "retry", "preserve_raw_usage", "extra_body", "extra_args"})


class ThinksealModel(Model):
    """An openai-agents ``Model`` that sends through thinkseal to ``provider_id``
    (``thinkseal.providers.PROVIDER_IDS``) and ``model``.

    ``options``: the provider's own request fields for every call (as for
    ``thinkseal.Client.send``: ``max_tokens``, ``thinking``, ``reasoning``,
    ...); an agent's ``ModelSettings`` adds its portable fields and its
    ``extra_body`` / ``extra_args`` over them. ``ledger``: a
    ``thinkseal.Ledger`` or ``AsyncLedger`` (without one, sealed data that comes
    back in the agent's history is never replayed). ``client``: a
    ``thinkseal.AsyncClient`` (or ``Client``, used from a worker thread) to send
    with; otherwise one is made per event loop from ``client_options``
    (``api_key=``, ``base_url=``, ``aliases=``, ``account=``,
    ``on_replay_error=``, ... as ``thinkseal.Client`` takes them)."""

    def __init__(
        self,
        provider_id: str,
        model: str,
        *,
        options: Mapping[str, Any] | None = None,
        ledger: Ledger | AsyncLedger | None = None,
        client: Client | AsyncClient | None = None,
        **client_options: Any,
    ) -> None:
        if options is not None and not isinstance(options, Mapping):
            raise ValidationError("options: expected a mapping of the provider's request fields", path="options")
        self.provider_id = provider_id
        self.model = model
        self.options: dict[str, Any] = dict(options or {})
        # Checks the arguments now; it makes an async client per event loop when none is given.
        self._sender = Sender(provider_id, model, ledger=ledger, client=client, **client_options)

    def __repr__(self) -> str:
        return f"ThinksealModel({self.provider_id!r}, {self.model!r})"

    # -- openai-agents' Model ----------------------------------------------------------

    async def get_response(
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],  # noqa: A002 - agents' name
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: ResponsePromptParam | None = None,
    ) -> ModelResponse:
        conversation, options = self._request(
            system_instructions, input, model_settings, tools, output_schema, handoffs,
            previous_response_id, conversation_id, prompt,
        )  # fmt: skip
        reply = await self._sender.send_async(conversation, options)
        return ModelResponse(
            output=output_items(reply.message, self.model),
            usage=usage_of(reply.usage, self.provider_id),
            response_id=None,
        )

    async def stream_response(  # an async generator, as agents' own models
        self,
        system_instructions: str | None,
        input: str | list[TResponseInputItem],  # noqa: A002 - agents' name
        model_settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        tracing: ModelTracing,
        *,
        previous_response_id: str | None = None,
        conversation_id: str | None = None,
        prompt: ResponsePromptParam | None = None,
    ) -> AsyncIterator[TResponseStreamEvent]:
        conversation, options = self._request(
            system_instructions, input, model_settings, tools, output_schema, handoffs,
            previous_response_id, conversation_id, prompt,
        )  # fmt: skip
        items = self._sender.stream_async(conversation, options)
        async for event in _stream.events(items, self.provider_id, self.model, lambda m: output_items(m, self.model)):
            yield event

    async def close(self) -> None:
        """Close the clients this model made for the running event loop (not a
        given client, nor the ledger)."""
        await self._sender.aclose()

    # -- the request -------------------------------------------------------------------

    def _request(
        self,
        instructions: str | None,
        input: str | list[TResponseInputItem],  # noqa: A002
        settings: ModelSettings,
        tools: list[Tool],
        output_schema: AgentOutputSchemaBase | None,
        handoffs: list[Handoff],
        previous_response_id: str | None,
        conversation_id: str | None,
        prompt: ResponsePromptParam | None,
    ) -> tuple[Conversation, dict[str, Any]]:
        for name, value in (
            ("previous_response_id", previous_response_id),
            ("conversation_id", conversation_id),
            ("prompt", prompt),
        ):
            if value is not None:
                raise ValidationError(
                    f"{name}: thinkseal sends the whole history from the agent's items and keeps no server state;"
                    f" run without {name}",
                    path=name,
                )
        specs = [_tool_spec(tool, f"tools[{i}]") for i, tool in enumerate(tools)]
        specs += [_handoff_spec(handoff) for handoff in handoffs]
        text = None
        if output_schema is not None and not output_schema.is_plain_text():
            fmt = {"type": "json_schema", "name": "final_output", "schema": output_schema.json_schema()}
            text = {"format": {**fmt, "strict": output_schema.is_strict_json_schema()}}
        conversation = to_conversation(instructions, input, specs, text)
        return conversation, self._options_for(settings)

    def _options_for(self, settings: ModelSettings) -> dict[str, Any]:
        options = dict(self.options)
        for field in dataclasses.fields(settings):
            name, value = field.name, getattr(settings, field.name)
            if value is None or name in _IGNORED:
                continue
            if name in _PASSED:
                options[name] = value
            elif name == "max_tokens":
                options[_MAX_TOKENS.get(self.provider_id, "max_tokens")] = value
            elif name == "reasoning" and self.provider_id in ("openai-responses", "openrouter"):
                options["reasoning"] = value.model_dump(mode="json", exclude_none=True)
            elif name == "reasoning" and self.provider_id == "openai" and value.effort is not None:
                options["reasoning_effort"] = value.effort
            else:
                raise ValidationError(
                    f"model_settings.{name}: not mapped for {self.provider_id!r}; give the provider's own request"
                    " field in ThinksealModel(options=...) or ModelSettings(extra_body=...)",
                    path=f"model_settings.{name}",
                )
        for name in ("extra_args", "extra_body"):
            extra = getattr(settings, name)
            if extra is not None:
                if not isinstance(extra, Mapping):
                    raise ValidationError(f"model_settings.{name}: expected a mapping", path=f"model_settings.{name}")
                options.update(extra)
        return options


def _tool_spec(tool: Tool, path: str) -> dict[str, Any]:
    from agents.tool import FunctionTool  # noqa: PLC0415

    if not isinstance(tool, FunctionTool):
        raise ValidationError(
            f"{path}: {type(tool).__name__} is a hosted tool of OpenAI's; thinkseal sends function tools only",
            path=path,
        )
    return {
        "type": "function",
        "name": tool.name,
        "description": tool.description,
        "parameters": tool.params_json_schema,
    }


def _handoff_spec(handoff: Handoff) -> dict[str, Any]:
    return {
        "type": "function",
        "name": handoff.tool_name,
        "description": handoff.tool_description,
        "parameters": handoff.input_json_schema,
    }


def usage_of(counts: ThinksealUsage, provider_id: str) -> Usage:
    """openai-agents' ``Usage`` of one reply: input tokens include the cached
    ones, as OpenAI counts them (Claude's count leaves them out)."""
    read, written = counts.cache_read_tokens or 0, counts.cache_write_tokens or 0
    inputs = (counts.input_tokens or 0) + (read + written if provider_id in _CACHE_APART else 0)
    output = counts.output_tokens or 0
    return Usage(
        requests=1,
        input_tokens=inputs,
        input_tokens_details=InputTokensDetails(cached_tokens=read, cache_write_tokens=written),
        output_tokens=output,
        output_tokens_details=OutputTokensDetails(reasoning_tokens=counts.reasoning_tokens or 0),
        total_tokens=inputs + output,
    )


class ThinksealModelProvider(ModelProvider):
    """An openai-agents ``ModelProvider``: ``get_model(name)`` is a
    ``ThinksealModel`` for ``provider_id`` and that model name, made with this
    provider's ``options``, ``ledger``, ``client`` and ``client_options``
    (one model per name, shared by every agent that names it). Give it as
    ``RunConfig(model_provider=...)``."""

    def __init__(
        self,
        provider_id: str,
        *,
        options: Mapping[str, Any] | None = None,
        ledger: Ledger | AsyncLedger | None = None,
        client: Client | AsyncClient | None = None,
        **client_options: Any,
    ) -> None:
        from ...providers import provider  # noqa: PLC0415

        provider(provider_id, client_options.get("account"), aliases=client_options.get("aliases"))
        if options is not None and not isinstance(options, Mapping):
            raise ValidationError("options: expected a mapping of the provider's request fields", path="options")
        self.provider_id = provider_id
        self._options = dict(options or {})
        self._ledger = ledger
        self._client = client
        self._client_options = client_options
        self._models: dict[str, ThinksealModel] = {}

    def get_model(self, model_name: str | None) -> ThinksealModel:
        if model_name is None:
            raise ValidationError(
                "model_name: thinkseal has no default model; name one on the Agent (Agent(model=...))",
                path="model_name",
            )
        model = self._models.get(model_name)
        if model is None:
            model = ThinksealModel(
                self.provider_id,
                model_name,
                options=self._options,
                ledger=self._ledger,
                client=self._client,
                **self._client_options,
            )
            self._models[model_name] = model
        return model

    async def aclose(self) -> None:
        for model in self._models.values():
            await model.close()

    def __repr__(self) -> str:
        return f"ThinksealModelProvider({self.provider_id!r})"
