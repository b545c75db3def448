"""Interoperability with the formats and SDKs teams already use.

Import the module you need explicitly; nothing here is imported by ``import
thinkseal``, and no module imports an SDK before one of its functions needs it::

    from thinkseal.interop import anthropic as ts_anthropic
    conversation = ts_anthropic.import_messages(stored["messages"], system=stored["system"])

- ``thinkseal.interop.anthropic``: Anthropic ``MessageParam`` lists
  (``import_messages`` / ``export_messages``) and the bridges that send a
  ``PreparedRequest`` through an ``anthropic.Anthropic`` / ``AsyncAnthropic``
  client (``send``, ``send_async``, ``stream``, ``stream_async``).
- ``thinkseal.interop.openai``: OpenAI chat messages (``import_chat`` /
  ``export_chat``), Responses input items (``import_responses`` /
  ``export_responses``) and the bridges for ``openai.OpenAI`` / ``AsyncOpenAI``.
- ``thinkseal.interop.pydantic_ai``: pydantic-ai ``ModelMessage`` lists
  (``import_messages`` / ``export_messages``; ``import_history`` also says
  where the agent's instructions went and what the history holds that the
  conversation does not).
- ``thinkseal.interop.bedrock``: the bridges for a boto3 ``bedrock-runtime`` client.

The framework adapters (docs/frameworks.md) send through thinkseal's client
with a seal ledger, so the framework keeps its history:
``pydantic_ai.ThinksealModel`` (a pydantic-ai ``Model``), ``agents.ThinksealModel``
and ``agents.ThinksealModelProvider`` (openai-agents), ``langchain.ChatThinkseal``
(a LangChain ``BaseChatModel``, with converters for langchain-core messages)
and ``litellm.ThinksealCallback`` (LiteLLM's SDK and proxy). Each imports its
framework when its module is imported (``pydantic_ai`` on first use of
``ThinksealModel``).

Imported sealed thinking is never bound: call ``Conversation.rebind(origin)``
to vouch that an imported history is exactly what ``origin`` produced.
docs/interop.md has the mapping tables.
"""

from __future__ import annotations

__all__: list[str] = []
