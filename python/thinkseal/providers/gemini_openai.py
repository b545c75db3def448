"""Gemini through Google's OpenAI-compatible endpoint (base URL
``https://generativelanguage.googleapis.com/v1beta/openai``; path
``/chat/completions``). Provider id ``gemini-openai``; Gemini's own
``generateContent`` is the ``gemini`` adapter. The common chat-completions
mapping is in ``_chat``.

What Gemini's OpenAI compatibility requires, and what thinkseal does, is in
docs/providers.md#gemini-through-the-openai-compatibility-layer. In short:

- Each ``extra_content`` carrying ``google.thought_signature`` (on a tool call
  or on the message) is kept as ``ThinkingBlock.Opaque("gemini-openai", ...)``
  right before that call or the text, and goes back in the same place only
  while the turn is kept; its own origin, apart from ``gemini``.
- Gemini 3's function-call rule, as in the ``gemini`` adapter
  (``_gemini.strict_model``): an unsealed turn's first call gets Google's dummy
  ``skip_thought_signature_validator``.
- A leading ``<thought>…</thought>`` in the content and ``reasoning_content``
  are kept as unsigned Text and never sent back.
- ``reasoning_effort`` and ``extra_body.google.thinking_config`` are checked
  (not together); content parts are text and images as data URLs.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any, Final

from .._blocks import ThinkingBlock
from .._content import Image, Native
from .._conversation import Conversation
from .._errors import ResponseError, ValidationError
from .._messages import AssistantMessage, Part, ToolCall
from .._replay import Replay
from .._reply import Delta, ReplyInfo, Usage
from ._base import Built, StreamParser
from ._chat import (
    ChatProvider,
    ChatStream,
    PartWriter,
    TextDeltas,
    ThinkingDeltas,
    call_wire,
    raise_provider_error,
    read_call,
    read_content,
    reasoning_text,
    stored_json,
)
from ._connection import GEMINI_CORRUPTED, Connection
from ._gemini import BOTH_BUDGET_AND_LEVEL, IMAGE_TYPES, THINKING_LEVELS, budget_in_range, invalid_budget, strict_model
from ._gemini_reply import DUMMY_SIGNATURE
from ._options import check_choice, check_flag, check_number, check_openai_sampling
from ._response import Node, valid_text

PROVIDER_ID: Final[str] = "gemini-openai"
BASE_URL: Final[str] = "https://generativelanguage.googleapis.com/v1beta/openai"
EXTRA: Final[str] = "extra_content"
TOOL_CALL_ID: Final[str] = "tool_call_id"
REASONING_FIELD: Final[str] = "reasoning_content"
REASONING_EFFORTS: Final[tuple[str, ...]] = ("none", "minimal", "low", "medium", "high")
THOUGHT_OPEN: Final[str] = "<thought>"
THOUGHT_CLOSE: Final[str] = "</thought>"
# Models whose thinking cannot be turned off (the compatibility page: Gemini 2.5 Pro and Gemini 3).
_ALWAYS_THINKING: Final[tuple[str, ...]] = ("gemini-2.5-pro", "gemini-3")
THINKING_CONFIG: Final[str] = "extra_body.google.thinking_config"
_THINKING_FIELDS: Final[Mapping[str, str]] = {
    "thinkingLevel": "thinking_level",
    "thinkingBudget": "thinking_budget",
    "includeThoughts": "include_thoughts",
}
_DUMMY: Final[Mapping[str, Any]] = {"google": {"thought_signature": DUMMY_SIGNATURE}}
_STRICT: Final[str] = f"{PROVIDER_ID}:strict"


# -- content parts -------------------------------------------------------------------------


class Parts(PartWriter):
    """Text, and images as data URLs; tool results take text only."""

    tool_kinds = frozenset()

    def image(self, image: Image, where: str) -> dict[str, Any]:
        if image.data is None:
            raise ValidationError(
                f"{where}: {PROVIDER_ID} takes an image as its bytes (a data: URL, as Google's OpenAI-compatibility"
                " page sends it), not by URL; the gemini adapter takes image URLs",
                path=where,
            )
        if image.media_type not in IMAGE_TYPES:
            raise ValidationError(
                f"{where}: {PROVIDER_ID} takes PNG, JPEG, WebP, HEIC and HEIF images, not {image.media_type}",
                path=where,
            )
        return super().image(image, where)


# -- signatures ------------------------------------------------------------------------------


def signature_block(node: Node, call_id: str | None = None) -> ThinkingBlock.Opaque | None:
    """The Opaque block of a message's (or delta's) ``extra_content``, or of
    tool call ``call_id``'s, when it carries a thought signature."""
    node.object()
    if not node.has(EXTRA):
        return None
    extra = node.node(EXTRA)
    google = extra.opt_node("google")
    signature = google.opt("thought_signature", str) if google is not None else None
    if not signature:
        return None
    assert google is not None
    valid_text(signature, f"{google.path}.thought_signature")
    kept: dict[str, Any] = {EXTRA: extra.value}
    if call_id is not None:
        kept[TOOL_CALL_ID] = call_id
    return ThinkingBlock.Opaque(PROVIDER_ID, stored_json(Node(kept, node.path)))


def with_call(block: ThinkingBlock.Opaque, call_id: str) -> ThinkingBlock.Opaque:
    """``block`` (made before its call's id was known) naming call ``call_id``."""
    kept = {**json.loads(block.data), TOOL_CALL_ID: call_id}
    data = json.dumps(kept, ensure_ascii=False, separators=(",", ":"), sort_keys=True)
    return ThinkingBlock.Opaque(PROVIDER_ID, data)


def signatures(message: AssistantMessage) -> tuple[dict[str, Any] | None, dict[str, dict[str, Any]]]:
    """The ``extra_content`` of a sent turn's message and of its tool calls (by
    call id), from this provider's Opaque blocks (the first of each, if a
    hand-made turn has several)."""
    own: dict[str, Any] | None = None
    calls: dict[str, dict[str, Any]] = {}
    for i, part in enumerate(message.parts):
        if not (isinstance(part, ThinkingBlock.Opaque) and part.provider == PROVIDER_ID):
            continue
        where = f"AssistantMessage.parts[{i}]"
        try:
            value = json.loads(part.data)
        except ValueError:
            value = None
        extra = value.get(EXTRA) if isinstance(value, dict) else None
        call_id = value.get(TOOL_CALL_ID) if isinstance(value, dict) else None
        if not isinstance(extra, dict) or not (call_id is None or isinstance(call_id, str)):
            raise ValidationError(
                f"{where}: a {PROVIDER_ID} Opaque block must hold an object with an {EXTRA!r} object"
                f" (and the {TOOL_CALL_ID!r} of its call)",
                path=f"{where}.data",
            )
        if call_id is None:
            own = own or extra
        else:
            calls.setdefault(call_id, extra)
    return own, calls


# -- thought summaries -------------------------------------------------------------------------


def split_thought(text: str) -> tuple[str, str]:
    """A content string as (thought summary, answer): a leading ``<thought>``
    up to ``</thought>`` (to the end when it is not closed) is the summary."""
    if not text.startswith(THOUGHT_OPEN):
        return "", text
    rest = text[len(THOUGHT_OPEN) :]
    end = rest.find(THOUGHT_CLOSE)
    if end < 0:
        return rest, ""
    return rest[:end], rest[end + len(THOUGHT_CLOSE) :]


class ThoughtSplitter:
    """``split_thought`` over streamed content fragments: ``feed`` returns the
    (thought, answer) text each fragment adds, holding back what may still turn
    into a tag; ``flush`` at the end of the stream gives what was held back."""

    __slots__ = ("_held", "_state")

    def __init__(self) -> None:
        self._state = "start"  # start: before the first characters; in: inside the summary; out: the answer
        self._held = ""

    def feed(self, text: str) -> tuple[str, str]:
        held, self._held = self._held + text, ""
        if self._state == "start":
            if len(held) < len(THOUGHT_OPEN) and THOUGHT_OPEN.startswith(held):
                self._held = held
                return "", ""
            if not held.startswith(THOUGHT_OPEN):
                self._state = "out"
                return "", held
            self._state, held = "in", held[len(THOUGHT_OPEN) :]
        if self._state == "out":
            return "", held
        end = held.find(THOUGHT_CLOSE)
        if end >= 0:
            self._state = "out"
            return held[:end], held[end + len(THOUGHT_CLOSE) :]
        keep = next((n for n in range(len(THOUGHT_CLOSE) - 1, 0, -1) if held.endswith(THOUGHT_CLOSE[:n])), 0)
        self._held = held[len(held) - keep :] if keep else ""
        return held[: len(held) - keep], ""

    def flush(self) -> tuple[str, str]:
        held, self._held = self._held, ""
        return (held, "") if self._state == "in" else ("", held)


def layout(
    thinking: str,
    own: ThinkingBlock.Opaque | None,
    content: list[str | Native],
    calls: list[tuple[ThinkingBlock.Opaque | None, ToolCall]],
) -> AssistantMessage:
    """A reply's parts: its reasoning text, the message's signature, its
    content, then each tool call with its signature right before it."""
    parts: list[Part] = [ThinkingBlock.Text(thinking)] if thinking else []
    if own is not None:
        parts.append(own)
    parts.extend(content)
    for block, call in calls:
        if block is not None:
            parts.append(block)
        parts.append(call)
    return AssistantMessage.from_parts(parts)


# -- streams -----------------------------------------------------------------------------------


class GeminiChatStream(StreamParser):
    """The chat-completions stream (``ChatStream``), with what Gemini adds: each
    event is rewritten before it is read (the leading thought summary moved
    from ``content`` into ``reasoning_content``, every tool-call fragment given
    its index) and its ``extra_content`` signatures kept, to lay the finished
    reply out as ``parse`` does."""

    __slots__ = ("_calls", "_inner", "_own", "_signed", "_thought")

    def __init__(self, read_usage: Callable[[Node | None], Usage]) -> None:
        self._inner = ChatStream(PROVIDER_ID, TextDeltas(REASONING_FIELD), lambda node: [], read_usage)
        self._thought = ThoughtSplitter()
        self._own: ThinkingBlock.Opaque | None = None
        self._signed: dict[int, ThinkingBlock.Opaque] = {}  # tool-call index -> its signature, without the id
        self._calls: list[int] = []  # tool-call indices in the order the calls began

    def feed(self, event: Mapping[str, Any]) -> list[Delta]:
        root = Node(event)
        raise_provider_error(root)
        choices = root.opt("choices", list)
        if not choices:
            return self._inner.feed(event)
        rewritten = [self._choice(Node(c, f"$.choices[{k}]")) for k, c in enumerate(choices)]
        return self._inner.feed({**event, "choices": rewritten})

    def _choice(self, choice: Node) -> Any:
        choice.object()
        if choice.opt("index", int, 0) != 0:
            return choice.value  # thinkseal reads the first choice only
        delta = choice.opt_node("delta")
        finishing = bool(choice.opt("finish_reason", str))
        if delta is None:
            if not finishing:
                return choice.value
            delta = Node({}, f"{choice.path}.delta")
        out = dict(delta.value)
        self._own = signature_block(delta) or self._own
        thought, text = ("", "")
        content = delta.opt("content", (str, list))
        if isinstance(content, str):
            thought, text = self._thought.feed(content)
        if finishing:
            more_thought, more_text = self._thought.flush()
            thought, text = thought + more_thought, text + more_text
        if isinstance(content, str) or text:
            out["content"] = text
        if thought:
            out[REASONING_FIELD] = (delta.opt(REASONING_FIELD, str) or "") + thought
        if delta.has("tool_calls"):
            out["tool_calls"] = [self._call(node) for node in delta.items("tool_calls")]
        return {**choice.value, "delta": out}

    def _call(self, node: Node) -> Any:
        node.object()
        index = node.opt("index", int)
        if index is None:
            # As ChatStream reads it: a fragment with an id starts a call, others continue the last one.
            starts = bool(node.opt("id", str)) or not self._calls
            index = max(self._calls, default=-1) + 1 if starts else self._calls[-1]
        if index not in self._calls:
            self._calls.append(index)
        block = signature_block(node)
        if block is not None:
            self._signed[index] = block  # its call's id may come in another fragment: added at finish
        return {**node.value, "index": index}

    def finish(self) -> AssistantMessage:
        message = self._inner.finish()
        content = [p for p in message.parts if isinstance(p, (str, Native))]
        calls = []
        for index, call in zip(self._calls, message.tool_calls, strict=True):
            signed = self._signed.get(index)
            calls.append((None if signed is None else with_call(signed, call.id), call))
        return layout(message.thinking_text, self._own, content, calls)

    def ended(self) -> bool:
        return self._inner.ended()

    def info(self) -> ReplyInfo:
        return self._inner.info()

    def partial(self) -> AssistantMessage | None:
        return self._inner.partial()


# -- options -------------------------------------------------------------------------------------


def _object(value: object, path: str) -> Mapping[str, Any] | None:
    if value is not None and not isinstance(value, Mapping):
        raise ValidationError(f"{path}: expected an object, got {type(value).__name__}", path=path)
    return value


def thinking_config(options: Mapping[str, Any]) -> Mapping[str, Any] | None:
    """``extra_body.google.thinking_config``, each level checked to be an object."""
    extra = _object(options.get("extra_body"), "extra_body")
    google = _object(extra.get("google"), "extra_body.google") if extra is not None else None
    return _object(google.get("thinking_config"), THINKING_CONFIG) if google is not None else None


def check_thinking_config(config: Mapping[str, Any]) -> None:
    for camel, snake in _THINKING_FIELDS.items():
        if camel in config:
            path = f"{THINKING_CONFIG}.{camel}"
            raise ValidationError(
                f"{path}: the OpenAI-compatible endpoint spells it {snake!r} (the one thinkseal checks)", path=path
            )
    level = config.get("thinking_level")
    if config.get("thinking_budget") is not None and level is not None:
        raise ValidationError(BOTH_BUDGET_AND_LEVEL, path=f"{THINKING_CONFIG}.thinking_level")
    if level is not None:
        if not isinstance(level, str):
            where = f"{THINKING_CONFIG}.thinking_level"
            raise ValidationError(f"{where}: expected a string", path=where)
        check_choice(level.lower(), THINKING_LEVELS, f"{THINKING_CONFIG}.thinking_level")
    check_number(config, "thinking_budget", -1, integer=True, path=f"{THINKING_CONFIG}.thinking_budget")
    check_flag(config.get("include_thoughts"), f"{THINKING_CONFIG}.include_thoughts")


def check_for_model(body: Mapping[str, Any], model: str) -> None:
    """The option rules that depend on the model (values already checked)."""
    name = model.rsplit("/", 1)[-1]
    if body.get("reasoning_effort") == "none" and name.startswith(_ALWAYS_THINKING):
        raise ValidationError(
            f"reasoning_effort: 'none' turns thinking off, which {model} does not allow (Gemini 2.5 Pro and"
            " Gemini 3 always think); use 'minimal' or 'low'",
            path="reasoning_effort",
        )
    config = thinking_config(body)
    budget = config.get("thinking_budget") if config is not None else None
    if isinstance(budget, int) and not budget_in_range(model, budget):
        raise ValidationError(invalid_budget(budget), path=f"{THINKING_CONFIG}.thinking_budget")


# -- the adapter -----------------------------------------------------------------------------------


class Adapter(ChatProvider):
    id = PROVIDER_ID
    connection = Connection(
        BASE_URL,
        "bearer",
        key_env=("GEMINI_API_KEY", "GOOGLE_API_KEY"),
        rejections=(GEMINI_CORRUPTED,),
    )
    writer = Parts(PROVIDER_ID)

    def validate_options(self, options: Mapping[str, Any], stream: bool) -> None:
        check_choice(options.get("reasoning_effort"), REASONING_EFFORTS, "reasoning_effort")
        config = thinking_config(options)
        if config is not None:
            check_thinking_config(config)
            if options.get("reasoning_effort") is not None:
                raise ValidationError(
                    f"reasoning_effort: cannot be used with {THINKING_CONFIG} (Google: they overlap and cannot be"
                    " used at the same time); give the level as thinking_config.thinking_level instead",
                    path="reasoning_effort",
                )
        check_number(options, "max_tokens", 1, integer=True)
        check_number(options, "max_completion_tokens", 1, integer=True)
        check_number(options, "n", 1, integer=True)
        check_openai_sampling(options)

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        built = super().build(conversation, replay, model, options, stream)
        check_for_model(built.body, model)
        return built

    def model_shape(self, conversation: Conversation, model: str) -> str:
        # Gemini 3 models get the dummy signature on turns sent without one; older ones do not.
        return _STRICT if strict_model(model) else f"{PROVIDER_ID}:lax"

    def reasoning_fields(self, message: AssistantMessage, shape: str) -> dict[str, Any]:
        # Reasoning text never goes back; the message's own signature does, while the turn is kept.
        own, _ = signatures(message)
        return {} if own is None else {EXTRA: own}

    def write_calls(self, message: AssistantMessage, shape: str) -> list[dict[str, Any]]:
        _, extras = signatures(message)
        wires: list[dict[str, Any]] = []
        for k, call in enumerate(message.tool_calls):
            wire = call_wire(call)
            extra = extras.get(call.id)
            if extra is None and k == 0 and shape == _STRICT:
                extra = dict(_DUMMY)
            if extra is not None:
                wire[EXTRA] = extra
            wires.append(wire)
        return wires

    def parse(self, response: Mapping[str, Any]) -> AssistantMessage:
        root = Node(response)
        raise_provider_error(root)
        if not root.get("choices", list):
            raise ResponseError("expected at least one choice", path="$.choices")
        message = root.child("choices").child(0).object().node("message")
        content = read_content(message, self.id)
        thought = ""
        if content and isinstance(content[0], str):
            thought, answer = split_thought(content[0])
            content = [*([answer] if answer else []), *content[1:]]
        reasoning = valid_text(message.opt(REASONING_FIELD, str, ""), f"{message.path}.{REASONING_FIELD}") + thought
        calls = []
        for node in message.items("tool_calls", required=False):
            call = read_call(node)
            calls.append((signature_block(node, call.id), call))
        return layout(reasoning, signature_block(message), content, calls)

    def read_thinking(self, message: Node) -> list[ThinkingBlock]:
        return reasoning_text(message, REASONING_FIELD)

    def thinking_deltas(self) -> ThinkingDeltas:
        return TextDeltas(REASONING_FIELD)

    def new_stream(self) -> StreamParser:
        return GeminiChatStream(self.read_usage)
