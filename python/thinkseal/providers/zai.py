"""Z.ai GLM chat completions (base URL ``https://api.z.ai/api/paas/v4``, or
the Coding Plan's ``https://api.z.ai/api/coding/paas/v4``; path
``/chat/completions``). The common chat-completions mapping is in ``_chat``.

What Z.ai requires, and what thinkseal does (the rules, their sources and the
provider's error strings are in docs/providers.md#zai; this is how the module
implements them):

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
- Content parts (Z.ai's chat-completion API reference, vision request): user
  messages of the vision models take text, ``{"type": "image_url", "image_url":
  {"url"}}`` (a URL, or the bytes as a ``data:`` URL; Z.ai lists JPG and PNG
  only, so other image bytes raise ``ValidationError``) and ``{"type":
  "file_url", "file_url": {"url"}}`` (a document by URL; Z.ai takes no file
  bytes, so PDF bytes raise ``ValidationError``). Z.ai does not take a
  ``file_url`` together with an image in one message (``ValidationError``).
  System, assistant and tool messages are strings only: an image or PDF in a
  tool result raises ``ValidationError``, and text parts are joined into one
  string (no separator). A text ``Document`` goes out as text.
- Caching: Z.ai caches context by itself (``usage.prompt_tokens_details.
  cached_tokens`` reports it); there is no request field, so cache breakpoints
  are ignored and the body is the same with or without them.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, ClassVar

from .._blocks import ThinkingBlock
from .._content import Document, Image
from .._errors import ValidationError
from .._messages import AssistantMessage
from ._chat import ChatProvider, PartWriter, TextDeltas, ThinkingDeltas, check_thinking_type, reasoning_text
from ._connection import Connection
from ._options import check_flag, check_number
from ._response import Node

REASONING_FIELD = "reasoning_content"
IMAGE_TYPES = ("image/jpeg", "image/png")


class Parts(PartWriter):
    """Z.ai's content parts: text, images and file URLs in user messages; tool
    results text only."""

    text_arrays = False
    tool_kinds = frozenset()

    def image(self, image: Image, where: str) -> dict[str, Any]:
        if image.data is not None and image.media_type not in IMAGE_TYPES:
            raise ValidationError(
                f"{where}: zai takes image/jpeg and image/png images, got {image.media_type}", path=where
            )
        return super().image(image, where)

    def document(self, document: Document, where: str) -> dict[str, Any]:
        if document.url is None:
            raise ValidationError(f"{where}: zai takes a document by URL only (file_url), not its bytes", path=where)
        return {"type": "file_url", "file_url": {"url": document.url}}

    def fields(self, parts: list[dict[str, Any]], marked: bool, where: str) -> dict[str, Any]:
        kinds = {p.get("type") for p in parts}
        if "file_url" in kinds and kinds & {"image_url", "video_url"}:
            raise ValidationError(f"{where}: zai does not take a file_url and an image in one message", path=where)
        return super().fields(parts, marked, where)


def _sends_reasoning(message: Mapping[str, Any]) -> int:
    return 1 if message["role"] == "assistant" and message.get(REASONING_FIELD) else 0


class Adapter(ChatProvider):
    id = "zai"
    connection = Connection("https://api.z.ai/api/paas/v4", "bearer", key_env=("ZAI_API_KEY",))
    response_formats: ClassVar[frozenset[str]] = frozenset({"text", "json_object"})
    writer = Parts("zai")

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

    def tally(self) -> Callable[[Mapping[str, Any]], int]:
        return _sends_reasoning  # the assistant messages that carry their reasoning

    def complete_body(self, body: dict[str, Any], options: Mapping[str, Any], tally: int) -> None:
        if not tally:
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
