"""Z.ai GLM chat completions (base URL ``https://api.z.ai/api/paas/v4``, or
the Coding Plan's ``https://api.z.ai/api/coding/paas/v4``; path
``/chat/completions``). The common chat-completions mapping is in ``_chat``.

What Z.ai requires, and what thinkseal does:

- Thinking comes back as ``message.reasoning_content`` (``delta.reasoning_content``
  when streaming). thinkseal keeps it as one unsigned ``ThinkingBlock.Text``;
  the reply is not sealed.
- Replay: interleaved thinking with tools wants each turn's reasoning returned
  with the tool results, and "preserved thinking" (``thinking.clear_thinking:
  false``) wants every earlier turn's ``reasoning_content`` complete and
  unmodified. thinkseal sends the reasoning text of each turn as sent on its
  assistant message (omitted where a turn has none). Whenever any earlier
  reasoning goes out and the caller did not set ``thinking.clear_thinking``,
  thinkseal sets it to ``false`` (keeping the caller's other ``thinking`` fields,
  such as ``type``), since on the standard endpoint the default ``true`` would
  discard what was sent. A caller's explicit ``clear_thinking`` is never changed.
- Options (Z.ai's own names): ``thinking`` ``{"type": "enabled" | "disabled",
  "clear_thinking": bool}``, ``max_tokens`` >= 1, ``temperature`` 0..1,
  ``top_p`` 0.01..1, ``do_sample`` and ``tool_stream`` booleans; anything else passes
  through unchecked.
- ``response_format``: ``text`` or ``json_object`` only; a ``json_schema`` format
  raises ``ValidationError``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, ClassVar

from .._blocks import ThinkingBlock
from .._messages import AssistantMessage
from ._chat import ChatProvider, TextDeltas, ThinkingDeltas, check_thinking_type, reasoning_text
from ._options import check_flag, check_number
from ._response import Node

REASONING_FIELD = "reasoning_content"


class Adapter(ChatProvider):
    id = "zai"
    response_formats: ClassVar[frozenset[str]] = frozenset({"text", "json_object"})

    def validate_options(self, options: Mapping[str, Any], stream: bool) -> None:
        thinking = check_thinking_type(options, required=False)
        if thinking is not None:
            check_flag(thinking.get("clear_thinking"), "thinking.clear_thinking")
        check_number(options, "max_tokens", 1, integer=True)
        check_number(options, "temperature", 0, 1)
        check_number(options, "top_p", 0.01, 1)
        check_flag(options.get("do_sample"), "do_sample")
        check_flag(options.get("tool_stream"), "tool_stream")

    def reasoning_fields(self, message: AssistantMessage, shape: str) -> dict[str, Any]:
        text = message.thinking_text
        return {REASONING_FIELD: text} if text else {}

    def complete_body(self, body: dict[str, Any], options: Mapping[str, Any]) -> None:
        if not any(m.get(REASONING_FIELD) for m in body["messages"] if m["role"] == "assistant"):
            return
        thinking = options.get("thinking")
        if thinking is None:
            body["thinking"] = {"clear_thinking": False}
        elif "clear_thinking" not in thinking:
            body["thinking"] = {**thinking, "clear_thinking": False}

    def read_thinking(self, message: Node) -> list[ThinkingBlock]:
        return reasoning_text(message, REASONING_FIELD)

    def thinking_deltas(self) -> ThinkingDeltas:
        return TextDeltas(REASONING_FIELD)
