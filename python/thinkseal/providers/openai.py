"""OpenAI chat completions (base URL ``https://api.openai.com/v1``; path
``/chat/completions``), for reasoning models and any other. The common
chat-completions mapping is in ``_chat``; the Responses API, where OpenAI's
reasoning can be replayed, is the ``openai-responses`` adapter.

What OpenAI requires, and what thinkseal does (the rules, their sources and the
provider's error strings are in docs/providers.md#openai-chat-completions; this
is how the module implements them):

- Reasoning: OpenAI's chat completions return no reasoning, only its cost
  (``usage.completion_tokens_details.reasoning_tokens``, ``Reply.usage.
  reasoning_tokens``); nothing is sealed and nothing is replayed. An
  OpenAI-compatible server that returns ``message.reasoning_content``
  (``delta.reasoning_content`` when streaming) has it kept as one unsigned
  ``ThinkingBlock.Text``. It is never sent back: OpenAI's request schema has no
  such field (the ``openai`` SDK's ``ChatCompletionAssistantMessageParam``) and
  strict OpenAI-compatible servers reject unknown message fields; servers that
  want it back (DeepSeek, Z.ai) have their own adapters.
- Options (OpenAI's names): ``reasoning_effort`` (the SDK's ``ReasoningEffort``:
  none, minimal, low, medium, high, xhigh, max; not every model takes every
  value), ``max_completion_tokens`` >= 1, ``verbosity`` (low, medium, high),
  ``temperature`` 0..2, ``top_p`` 0..1, ``frequency_penalty`` and
  ``presence_penalty`` -2..2, ``n`` >= 1 (thinkseal reads choice 0),
  ``top_logprobs`` 0..20, ``store``, ``parallel_tool_calls`` and ``logprobs``
  booleans. ``max_tokens`` is refused: OpenAI deprecates it in favour of
  ``max_completion_tokens``, which is the only one reasoning models take.
  Anything else passes through unchecked.
- ``response_format``: ``text``, ``json_object`` and ``json_schema`` (structured
  outputs) pass through in OpenAI's own shape.
- Content parts (OpenAI's images-and-vision and file-inputs guides; the SDK's
  ``ChatCompletionContentPartParam``): user messages take text parts, images as
  ``{"type": "image_url", "image_url": {"url"}}`` (a URL or the bytes as a
  ``data:`` URL) and PDFs as ``{"type": "file", "file": {"filename",
  "file_data"}}`` with ``file_data`` a ``data:application/pdf;base64,`` URL and
  ``filename`` the document's title (``document.pdf`` without one). Chat
  completions take a PDF as its bytes or an uploaded file id, not by URL: a
  ``Document(url=...)`` raises ``ValidationError`` (the Responses API takes
  ``file_url``). System and tool messages take text only (the SDK's
  ``ChatCompletionToolMessageParam`` content is text parts), so an image or PDF
  in a tool result raises ``ValidationError``.
- Caching: OpenAI caches prompt prefixes by itself (prompt caching guide);
  chat completions have no breakpoint field, so cache breakpoints are ignored
  and the body is byte-identical with or without them.
  ``Reply.usage.cache_read_tokens`` is ``usage.prompt_tokens_details.cached_tokens``.
- Replies: ``message.annotations`` (the search models' ``url_citation`` items)
  are not kept: OpenAI's assistant message has no field to send them back in.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .._blocks import ThinkingBlock
from .._content import Document
from .._errors import ValidationError
from .._messages import AssistantMessage
from ._chat import ChatProvider, PartWriter, TextDeltas, ThinkingDeltas, data_url, reasoning_text
from ._connection import Connection
from ._options import check_choice, check_flag, check_number, check_openai_sampling
from ._response import Node

PROVIDER_ID = "openai"
# What an OpenAI-compatible server may return reasoning in (never sent back).
REASONING_FIELD = "reasoning_content"
REASONING_EFFORTS = ("none", "minimal", "low", "medium", "high", "xhigh", "max")
VERBOSITIES = ("low", "medium", "high")


class Parts(PartWriter):
    """OpenAI's chat content parts: text, images and PDF files in user messages;
    tool results text only."""

    tool_kinds = frozenset()

    def document(self, document: Document, where: str) -> dict[str, Any]:
        if document.data is None:
            raise ValidationError(
                f"{where}: openai chat completions take a PDF as its bytes (file_data), not by URL;"
                " the openai-responses adapter sends file_url",
                path=where,
            )
        source = data_url(document.media_type, document.data)
        return {"type": "file", "file": {"filename": document.title or "document.pdf", "file_data": source}}


class Adapter(ChatProvider):
    id = PROVIDER_ID
    connection = Connection(
        "https://api.openai.com/v1", "bearer", key_env=("OPENAI_API_KEY",), base_url_env=("OPENAI_BASE_URL",)
    )
    writer = Parts(PROVIDER_ID)

    def validate_options(self, options: Mapping[str, Any], stream: bool) -> None:
        if options.get("max_tokens") is not None:
            raise ValidationError(
                "max_tokens: deprecated by OpenAI in favour of max_completion_tokens, and not compatible with"
                " reasoning models; use max_completion_tokens",
                path="max_tokens",
            )
        check_choice(options.get("reasoning_effort"), REASONING_EFFORTS, "reasoning_effort")
        check_choice(options.get("verbosity"), VERBOSITIES, "verbosity")
        check_number(options, "max_completion_tokens", 1, integer=True)
        check_openai_sampling(options)
        check_number(options, "n", 1, integer=True)
        check_number(options, "top_logprobs", 0, 20, integer=True)
        for flag in ("store", "parallel_tool_calls", "logprobs"):
            check_flag(options.get(flag), flag)

    def reasoning_fields(self, message: AssistantMessage, shape: str) -> dict[str, Any]:
        return {}  # OpenAI takes no reasoning back in chat completions

    def read_thinking(self, message: Node) -> list[ThinkingBlock]:
        return reasoning_text(message, REASONING_FIELD)

    def thinking_deltas(self) -> ThinkingDeltas:
        return TextDeltas(REASONING_FIELD)
