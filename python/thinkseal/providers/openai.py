"""OpenAI chat completions (base URL ``https://api.openai.com/v1``; path
``/chat/completions``), for reasoning models and any other. The common
chat-completions mapping is in ``_chat``; the Responses API, where OpenAI's
reasoning can be replayed, is the ``openai-responses`` adapter.

What OpenAI requires, and what thinkseal does, is in
docs/providers.md#openai-chat-completions. In short:

- OpenAI returns no reasoning, only its token count; nothing is sealed or
  replayed. A compatible server's ``reasoning_content`` is kept as unsigned
  Text and never sent back.
- Options are checked with OpenAI's names (``max_tokens`` is refused for
  ``max_completion_tokens``); ``response_format`` passes through.
- Content parts: text, images and PDFs as ``file`` parts (not by URL); tool
  results take text only. Caching is automatic (breakpoints ignored);
  ``message.annotations`` are not kept.
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
