"""DeepSeek chat completions (base URL ``https://api.deepseek.com``; path
``/chat/completions``). The common chat-completions mapping is in ``_chat``.

What DeepSeek requires, and what thinkseal does (the rules, their sources and
the provider's error strings are in docs/providers.md#deepseek; this is how the
module implements them):

- Thinking (V3.2 / V4 thinking mode) comes back as ``message.reasoning_content``
  (``delta.reasoning_content`` when streaming). thinkseal keeps it as one
  unsigned ``ThinkingBlock.Text``; the reply is not sealed (nothing is signed).
- Replay: in thinking mode, a turn that made tool calls must carry its
  ``reasoning_content`` in every later request, or the API answers 400 ("The
  `reasoning_content` in the thinking mode must be passed back to the API.").
  The guide's later wording widens this to every turn once ``tools`` are sent.
  thinkseal replays the reasoning text of each turn as sent, and whenever the
  request has tools or any turn with tool calls it puts ``reasoning_content`` on
  *every* assistant message, ``""`` where a turn had none (a foreign or
  hand-written turn). Without tools, turns with reasoning carry it (DeepSeek
  ignores it there) and others omit the field.
- The R1-era ``deepseek-reasoner`` rejected ``reasoning_content`` in input; that
  model generation is not supported.
- Options (DeepSeek's own names): ``thinking`` ``{"type": "enabled" | "disabled"}``
  (``type`` required), ``reasoning_effort`` (minimal, low, medium, high, xhigh,
  max, ultra; DeepSeek maps them to low / high / max), ``max_tokens`` >= 1,
  ``temperature`` 0..2, ``top_p`` 0..1, ``frequency_penalty`` and
  ``presence_penalty`` -2..2; anything else passes through unchecked.
- ``response_format``: only ``{"type": "json_object"}`` (and ``text``); a
  ``json_schema`` format raises ``ValidationError``.
- Content parts (DeepSeek's vision guide): user messages take text and
  ``{"type": "image_url", "image_url": {"url"}}`` parts (a URL, or the bytes as
  a ``data:`` URL; JPEG, PNG, GIF and WebP). DeepSeek documents no PDF or file
  part and no images in system or tool messages, so a PDF ``Document`` and an
  image in a tool result raise ``ValidationError`` naming the part; a text
  ``Document`` goes out as text. Content that is only text goes out as one
  string (text parts joined with no separator).
- Caching: DeepSeek caches prompt prefixes by itself (context caching on disk);
  there is no request field for it, so cache breakpoints are ignored and the
  body is the same with or without them. ``Reply.usage.cache_read_tokens`` is
  ``usage.prompt_cache_hit_tokens``.
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
