"""DeepSeek chat completions (base URL ``https://api.deepseek.com``; path
``/chat/completions``). The common chat-completions mapping is in ``_chat``.

What DeepSeek requires, and what thinkseal does, is in
docs/providers.md#deepseek. In short:

- ``reasoning_content`` comes back as one unsigned ``ThinkingBlock.Text``;
  nothing is signed, so nothing is sealed.
- It goes back as sent, and whenever the request has tools (or any turn with
  tool calls) on every assistant message, ``""`` where a turn had none;
  without it DeepSeek answers 400.
- Options are checked with DeepSeek's names (``thinking``,
  ``reasoning_effort``, sampling); ``response_format`` takes no
  ``json_schema``; content parts, caching (automatic; breakpoints ignored) and
  ``usage.prompt_cache_hit_tokens`` are as the docs say.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from .._blocks import ThinkingBlock
from .._conversation import Conversation
from .._messages import AssistantMessage
from .._reply import Usage
from ._chat import (
    ChatProvider,
    PartWriter,
    TextDeltas,
    ThinkingDeltas,
    chat_usage,
    check_thinking_type,
    count,
    reasoning_text,
)
from ._connection import Connection
from ._options import check_choice, check_number, check_openai_sampling
from ._response import Node

REASONING_FIELD = "reasoning_content"
REASONING_EFFORTS = ("minimal", "low", "medium", "high", "xhigh", "max", "ultra")

# Fragment-cache key when every assistant message must carry reasoning_content.
_EVERY_TURN = "deepseek/reasoning-on-every-turn"


class Parts(PartWriter):
    """DeepSeek's content parts: text and images in user messages; tool results text only."""

    text_arrays = False
    tool_kinds = frozenset()


class Adapter(ChatProvider):
    id = "deepseek"
    connection = Connection("https://api.deepseek.com", "bearer", key_env=("DEEPSEEK_API_KEY",))
    response_formats: ClassVar[frozenset[str]] = frozenset({"text", "json_object"})
    writer = Parts("deepseek")

    def validate_options(self, options: Mapping[str, Any], stream: bool) -> None:
        check_thinking_type(options, required=True)
        check_choice(options.get("reasoning_effort"), REASONING_EFFORTS, "reasoning_effort")
        check_number(options, "max_tokens", 1, integer=True)
        check_openai_sampling(options)

    def shape(self, conversation: Conversation) -> str:
        # A turn with tool calls always carries reasoning_content (reasoning_fields);
        # with tools in the request, every turn does.
        return _EVERY_TURN if conversation.tools else self.id

    def reasoning_fields(self, message: AssistantMessage, shape: str) -> dict[str, Any]:
        text = message.thinking_text
        if text or shape == _EVERY_TURN or message.tool_calls:
            return {REASONING_FIELD: text}
        return {}

    def read_thinking(self, message: Node) -> list[ThinkingBlock]:
        return reasoning_text(message, REASONING_FIELD)

    def read_usage(self, usage: Node | None) -> Usage:
        # DeepSeek reports cache hits as prompt_cache_hit_tokens (its own field).
        base = chat_usage(usage)
        hits = count(usage, "prompt_cache_hit_tokens")
        if hits is None:
            return base
        return Usage(base.input_tokens, base.output_tokens, hits, base.cache_write_tokens, base.reasoning_tokens)

    def thinking_deltas(self) -> ThinkingDeltas:
        return TextDeltas(REASONING_FIELD)
