"""Claude's rules, shared by the ``anthropic`` and ``bedrock`` adapters
(Bedrock forwards Converse requests to the same Claude models, which apply the
same checks and answer with the same error wording; docs/providers.md,
Anthropic and Bedrock).

``Wire`` holds everything the two adapters do alike; each subclasses it with
only its spelling (field names, block shapes, option paths), and ``Stream``
likewise for streamed replies.

- Options: the documented ``thinking`` option rules (``read_thinking``,
  ``check_sampling``; docs/providers.md#anthropic-thinking-options), raising
  ``ValidationError`` with Claude's own wording where it has one.
- Turns: ``wire_parts`` says which parts of an as-sent assistant turn go on the
  wire. Claude takes signed thinking (also with empty text) and redacted
  blocks, in the order received; never unsigned text (foreign reasoning shown
  as thinking gets rejected or leaks), never another provider's opaque data,
  never a text block that is empty or only white space (a 400: Claude itself
  returns "\n\n" before a thinking block under adaptive thinking), and
  another provider's native block only as its text. ``plan_turns`` groups the
  as-sent messages into wire turns: every run of tool results and user text
  between two assistant turns becomes ONE user turn, tool results first in
  call order (Claude requires each ``tool_use`` to be answered in the very
  next user turn, results before any text).
- Content parts: text, images, documents and the provider's own native blocks
  become blocks (``Wire.content_of``); another provider's native block goes
  out as its text, or not at all. A cache breakpoint marks the block before it
  (each adapter spells the mark); at most ``MAX_BREAKPOINTS`` per request,
  counted once per settled wire message (``WireCache.total``). A part the provider
  cannot take raises ``ValidationError`` at its path in the conversation.
- Tool loops: ``check_tool_loop`` raises ``ReplayError`` before sending a
  tool loop whose last assistant turn would lose its leading thinking (the
  rule, its exceptions and the ``drop_block`` opt-in:
  docs/providers.md#claudes-tool-loop-and-replayerror).
- Replies: a thinking block with neither text nor signature carries nothing
  and is not kept; a block of a type the adapter does not know becomes a
  ``Native`` part in its place (``native_part``); every failure is a
  ``ResponseError`` at its JSON path. ``Stream`` keeps the metadata
  (``info``) and what arrived so far (``partial``) of a streamed reply.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, ClassVar, Final, Generic, TypeAlias, TypeVar, assert_never

from .._blocks import ThinkingBlock
from .._content import CacheBreakpoint, ContentPart, Document, Image, Native, unknown_part
from .._conversation import Conversation
from .._errors import ReplayError, ResponseError, ValidationError
from .._messages import AssistantMessage, Message, Part, SystemMessage, ToolCall, ToolMessage, UserMessage
from .._replay import Replay
from .._reply import ReplyInfo, Usage
from .._walk import Reason
from ._base import REPLAY_ERROR_WAYS, WIRE_INDEX, StreamParser
from ._options import response_format
from ._response import Node, error_text, parse_arguments, wrap_errors
from ._wire import Fragments, counted, dumps, tallied_wire_messages

THINKING_TYPES: Final[tuple[str, ...]] = ("enabled", "disabled", "adaptive", "between_tools")
# The options Claude's thinking rules read, by their names in Anthropic's API.
OPTION_NAMES: Final[tuple[str, ...]] = ("max_tokens", "temperature", "top_p", "top_k", "tool_choice", "thinking")
BINDING_BETA: Final[str] = "thinking-binding-controls-2026-08-01"
INTERLEAVED_BETA: Final[str] = "interleaved-thinking-2025-05-14"
MIN_BUDGET: Final[int] = 1024

# Claude's wording (docs/providers.md, Anthropic) where it exists; thinkseal's own otherwise.
BUDGET_TOO_SMALL: Final[str] = "thinking.enabled.budget_tokens: Input should be greater than or equal to 1024"
BUDGET_NOT_BELOW_MAX: Final[str] = "`max_tokens` must be greater than `thinking.budget_tokens`."
TEMPERATURE_WITH_THINKING: Final[str] = (
    "`temperature` may only be set to 1 when thinking is enabled or in adaptive mode"
)
FORCED_TOOL_WITH_THINKING: Final[str] = "Thinking may not be enabled when tool_choice forces tool use."
TOP_K_WITH_THINKING: Final[str] = "`top_k` may not be set when thinking is enabled or in adaptive mode"
TOP_P_WITH_THINKING: Final[str] = (
    "`top_p` must be between 0.95 and 1 (inclusive) when thinking is enabled or in adaptive mode"
)


def is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def is_number(value: object) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


# -- options -------------------------------------------------------------------


class ThinkingSettings:
    """The caller's ``thinking`` option, read and checked.

    ``active``: thinking "enabled" or "adaptive" (the modes whose tool loops
    need the leading thinking block). ``block_binding``: the caller set
    ``block_binding`` (which needs the binding-controls beta).
    ``drop_block``: it set ``prefix_mismatch_behavior`` to ``"drop_block"``.
    """

    __slots__ = ("block_binding", "budget_tokens", "drop_block", "type")

    def __init__(self, type_: str | None, budget_tokens: int | None, block_binding: bool, drop_block: bool) -> None:
        self.type = type_
        self.budget_tokens = budget_tokens
        self.block_binding = block_binding
        self.drop_block = drop_block

    @property
    def active(self) -> bool:
        return self.type in ("enabled", "adaptive")


def read_thinking(value: object, path: str) -> ThinkingSettings:
    """Check a ``thinking`` option (Anthropic's shape) found at ``path``."""
    if value is None:
        return ThinkingSettings(None, None, False, False)
    if not isinstance(value, Mapping):
        raise ValidationError("thinking: Input should be a valid dictionary", path=path)
    kind = value.get("type")
    if kind not in THINKING_TYPES:
        expected = ", ".join(f"'{t}'" for t in THINKING_TYPES)
        raise ValidationError(
            f"thinking: Input tag {kind!r} found using 'type' does not match any of the expected tags: {expected}",
            path=f"{path}.type",
        )
    budget = value.get("budget_tokens")
    if kind == "enabled":
        if "budget_tokens" not in value:
            raise ValidationError("thinking.enabled.budget_tokens: Field required", path=f"{path}.budget_tokens")
        if not isinstance(budget, int) or isinstance(budget, bool):
            raise ValidationError(
                "thinking.enabled.budget_tokens: Input should be a valid integer", path=f"{path}.budget_tokens"
            )
        if budget < MIN_BUDGET:
            raise ValidationError(BUDGET_TOO_SMALL, path=f"{path}.budget_tokens")
    elif "budget_tokens" in value:
        raise ValidationError(
            f"thinking.{kind}.budget_tokens: Extra inputs are not permitted", path=f"{path}.budget_tokens"
        )
    if kind in ("disabled", "between_tools") and "display" in value:
        raise ValidationError(f"thinking.{kind}.display: Extra inputs are not permitted", path=f"{path}.display")
    binding = value.get("block_binding")
    drop_block = False
    if binding is not None:
        if kind not in ("enabled", "adaptive"):
            raise ValidationError(
                f"thinking.{kind}.block_binding: Extra inputs are not permitted", path=f"{path}.block_binding"
            )
        if not isinstance(binding, Mapping):
            raise ValidationError(
                f"thinking.{kind}.block_binding: Input should be a valid dictionary", path=f"{path}.block_binding"
            )
        behavior = binding.get("prefix_mismatch_behavior")
        if behavior not in (None, "error", "drop_block"):
            raise ValidationError(
                f"thinking.{kind}.block_binding.prefix_mismatch_behavior: Input should be 'error' or 'drop_block'",
                path=f"{path}.block_binding.prefix_mismatch_behavior",
            )
        drop_block = behavior == "drop_block"
    return ThinkingSettings(kind, budget if kind == "enabled" else None, binding is not None, drop_block)


def value_at(options: Mapping[str, Any], path: str) -> Any:
    """The option at the dotted ``path`` (None where a part of it is missing)."""
    value: Any = options
    for key in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(key)
    return value


def resolved_options(options: Mapping[str, Any], thinking_path: str, way: str) -> dict[str, Any]:
    """``options`` with the thinking setting at the dotted ``thinking_path``
    changed the ``way`` named: ``"drop_block"`` opts into Claude's
    ``block_binding`` control, ``"disable_thinking"`` turns thinking off for
    this request. Copies every mapping on the path; ``options`` is left as is."""
    if way not in REPLAY_ERROR_WAYS:
        raise ValidationError(f"on_replay_error: expected one of {', '.join(REPLAY_ERROR_WAYS)}", path="way")
    *parents, last = thinking_path.split(".")
    resolved = dict(options)
    node = resolved
    for key in parents:
        child = node.get(key)
        node[key] = dict(child) if isinstance(child, Mapping) else {}
        node = node[key]
    thinking = node.get(last)
    if way == "disable_thinking":
        node[last] = {"type": "disabled"}
    else:
        drop_block = {"prefix_mismatch_behavior": "drop_block"}
        node[last] = {**(thinking if isinstance(thinking, Mapping) else {}), "block_binding": drop_block}
    return resolved


def check_sampling(
    thinking: ThinkingSettings,
    options: Mapping[str, Any],
    paths: Mapping[str, str],
    *,
    forced_tool_choice: bool,
    interleaved: bool,
) -> None:
    """The documented incompatibilities of thinking with the sampling options.

    ``paths`` maps "max_tokens", "temperature", "top_p" and "top_k" to where
    the provider keeps them in ``options`` (also ``ValidationError.path``).
    ``interleaved``: the interleaved-thinking beta is on, under which the budget
    covers the whole turn and may exceed ``max_tokens``.
    """
    if not thinking.active:
        return
    budget = thinking.budget_tokens
    max_tokens = value_at(options, paths["max_tokens"])
    if budget is not None and is_int(max_tokens) and not interleaved and budget >= max_tokens:
        raise ValidationError(BUDGET_NOT_BELOW_MAX, path=paths["max_tokens"])
    temperature = value_at(options, paths["temperature"])
    if temperature is not None and temperature != 1:
        raise ValidationError(TEMPERATURE_WITH_THINKING, path=paths["temperature"])
    if value_at(options, paths["top_k"]) is not None:
        raise ValidationError(TOP_K_WITH_THINKING, path=paths["top_k"])
    top_p = value_at(options, paths["top_p"])
    if top_p is not None and not (is_number(top_p) and 0.95 <= top_p <= 1):
        raise ValidationError(TOP_P_WITH_THINKING, path=paths["top_p"])
    if forced_tool_choice and thinking.type == "enabled":
        raise ValidationError(FORCED_TOOL_WITH_THINKING, path=paths["tool_choice"])


def merge_betas(*groups: Sequence[str]) -> list[str]:
    """Beta names in first-seen order, without duplicates."""
    seen: dict[str, None] = {}
    for group in groups:
        for name in group:
            seen.setdefault(name, None)
    return list(seen)


def check_betas(value: object, path: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str) or not isinstance(value, Sequence):
        raise ValidationError(f"{path}: expected a list of beta names", path=path)
    for i, name in enumerate(value):
        if not isinstance(name, str) or not name.strip() or "," in name:
            raise ValidationError(f"{path}[{i}]: expected a beta name (a non-blank string without commas)", path=path)
    return list(value)


# -- turns -------------------------------------------------------------------


def wire_parts(message: AssistantMessage, provider: str) -> list[Part]:
    """The parts of an as-sent turn that go to Claude through ``provider``'s
    adapter, in order: text (not blank), tool calls, signed thinking, redacted
    blocks and ``provider``'s own native blocks; another provider's native
    block goes as its text (a ``str``), if it has any. The turn is either kept
    (sealed, replayed part by part) or already unsealed, in which case its
    thinking is unsigned text and is left out."""
    out: list[Part] = []
    for part in message.parts:
        if isinstance(part, str):
            # Blank text is a 400 ("text content blocks must contain
            # non-whitespace text"); Claude returns "\n\n" before a thinking
            # block under adaptive thinking. The fingerprint keeps it.
            if part.strip():
                out.append(part)
        elif isinstance(part, ToolCall):
            out.append(part)
        elif isinstance(part, ThinkingBlock.Text):
            if part.is_sealed:
                out.append(part)
        elif isinstance(part, ThinkingBlock.Redacted):
            out.append(part)
        elif isinstance(part, Native):
            if part.provider == provider:
                out.append(part)
            elif part.text is not None and part.text.strip():
                out.append(part.text)
        # ThinkingBlock.Opaque belongs to another provider: never sent to Claude.
    return out


def plan_turns(
    sent: Sequence[Message], goes_out: Callable[[AssistantMessage], bool]
) -> list[tuple[str, list[Message]]]:
    """The as-sent messages laid out as Claude turns: ("user", [ToolMessage...,
    UserMessage...]) or ("assistant", [message]). System messages are not
    turns (each adapter puts them in its top-level system field); an assistant
    turn for which ``goes_out`` is false is left out and the user turns around
    it merge."""
    turns: list[tuple[str, list[Message]]] = []
    run: list[Message] = []
    call_order: dict[str, int] = {}

    def flush() -> None:
        if run:
            # Every ToolMessage left in a run answers the assistant turn before
            # it (the replay turned the others into user text), and they stand
            # before any user text; Claude wants them first, in call order.
            results = sorted(
                (m for m in run if isinstance(m, ToolMessage)), key=lambda m: call_order.get(m.tool_call_id, 0)
            )
            texts = [m for m in run if not isinstance(m, ToolMessage)]
            turns.append(("user", [*results, *texts]))
            run.clear()

    for message in sent:
        if isinstance(message, SystemMessage):
            continue
        if isinstance(message, AssistantMessage):
            if not goes_out(message):
                continue
            flush()
            turns.append(("assistant", [message]))
            call_order = {call.id: k for k, call in enumerate(message.tool_calls)}
        else:
            run.append(message)
    flush()
    return turns


def leading_thinking(message: AssistantMessage, provider: str) -> bool:
    parts = wire_parts(message, provider)
    return bool(parts) and isinstance(parts[0], ThinkingBlock)


def check_tool_loop(
    conversation: Conversation,
    replay: Replay,
    thinking: ThinkingSettings,
    *,
    key: str,
    provider: str,
    opt_in_path: str,
) -> None:
    """Raise ``ReplayError`` when this request continues a tool loop whose
    assistant turn would go out without its leading thinking block while
    thinking is on, unless the caller opted into ``drop_block``. ``key`` is the
    adapter's provider id, ``provider`` its name in the message.

    Under adaptive thinking Claude may answer a tool step without thinking,
    and takes that turn back as it came: only a turn received with sealed
    thinking that cannot go out is an error then."""
    if not thinking.active or thinking.drop_block:
        return
    last = replay.last_turn()
    if last is None or not last.open or last.index == len(conversation) - 1:
        return  # no tool loop being continued
    index, turn = last.index, last.sent
    if not turn.tool_calls or leading_thinking(turn, key):
        return  # no tool results go out for it (all stray), or it is fine
    if thinking.type == "adaptive" and not last.turn.has_sealed_thinking:
        return  # answered without thinking: it goes back as it came
    reason = last.reason
    if reason is Reason.KEPT:  # sealed, but its first block is not thinking
        reason = Reason.NO_SEALED_THINKING
    raise ReplayError(
        f"messages[{index}]: this request continues the tool loop of the assistant turn at index {index}, "
        f"which would go out without its leading thinking block ({reason}: {_REASON_TEXT[reason]}). "
        f'With thinking enabled, {provider} rejects that with HTTP 400 ("Expected `thinking` or '
        f'`redacted_thinking`, but found `tool_use`"). To continue: keep the history append-only and send '
        f"the turn exactly as received (same provider, model, system prompt, tools and earlier messages); "
        f"or disable thinking for this request; or end the tool loop with a new user message; or opt into "
        f'dropping unverifiable thinking with {opt_in_path} = {{"prefix_mismatch_behavior": "drop_block"}}.',
        index=index,
        reason=reason,
    )


_REASON_TEXT: Final[Mapping[Reason, str]] = {
    Reason.NO_SEALED_THINKING: "it has no signed thinking to replay",
    Reason.UNBOUND: "its thinking is not bound to the request that produced it",
    Reason.ORIGIN_MISMATCH: "it was produced by another provider, model or account",
    Reason.TURN_CHANGED: "the turn was changed after it was received",
    Reason.PREFIX_CHANGED: "the system prompt, tools or an earlier message changed since it was produced",
    Reason.VERSION_MISMATCH: "it was bound under another fingerprint version",
    Reason.UNPAIRED_TOOL_CALL: "one of its tool calls has no tool result, so the call is dropped and the turn changes",
}


# -- content parts ---------------------------------------------------------------------

# Claude's limit on cache breakpoints in one request (system, tools and messages together).
MAX_BREAKPOINTS: Final[int] = 4

# A cache breakpoint as laid out by ``Wire.content_of``: (index of the block it marks, ttl).
Mark: TypeAlias = tuple[int, str | None]


class Refused(ValidationError):
    """A part (``part``, its ``field``) or a whole message the provider cannot
    take, raised while a message's wire form is built (where its position in
    the conversation is not known); ``Wire.messages`` re-raises it at its path."""

    def __init__(self, reason: str, *, field: str | None = None, part: object = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.field = field
        self.part = part


def located(conversation: Conversation, err: Refused) -> ValidationError:
    """``err`` as a ``ValidationError`` at the path of its part in the
    conversation (found by identity: a stray tool result goes out as a new
    user message holding the very same part objects)."""
    for i, message in enumerate(conversation):
        if not isinstance(message, (UserMessage, ToolMessage, SystemMessage)):
            continue
        for j, part in enumerate(message.parts):
            if part is err.part:
                where = f"Conversation.messages[{i}].content"
                path = f"{where}[{j}].{err.field}" if err.field else where
                return ValidationError(f"{path}: {err.reason}", path=path)
    return ValidationError(err.reason, path="Conversation.messages")


# -- replies -------------------------------------------------------------------


def thinking_block(text: str, signature: str) -> ThinkingBlock | None:
    """A received thinking block (None: an empty, unsigned block carries nothing)."""
    if not text and not signature:
        return None
    return ThinkingBlock.Text(text, signature or None)


def redacted(data: str, path: str) -> ThinkingBlock:
    """A received redacted block; data thinkseal cannot keep is a ``ResponseError`` at ``path``."""
    try:
        return ThinkingBlock.Redacted(data)
    except ValidationError as err:
        raise wrap_errors(path, err) from None


def native_part(provider: str, block: Mapping[str, Any], path: str, text: str | None = None) -> Native:
    """A response block kept as ``provider``'s own: compact JSON with sorted
    keys, so the HTTP JSON, the SDK's ``model_dump()`` and a streamed block give
    the same part; members that are null at the block's top level are left out
    (``model_dump()`` writes every absent optional member as null)."""
    value = {k: v for k, v in block.items() if v is not None}
    try:
        data = json.dumps(value, ensure_ascii=False, separators=(",", ":"), sort_keys=True, allow_nan=False)
    except (TypeError, ValueError, RecursionError) as err:
        raise ResponseError(f"block is not JSON: {err}", path=path) from None
    try:
        return Native(provider, data, text)
    except ValidationError as err:  # over the limits (nesting, string length) or a lone surrogate
        raise wrap_errors(path, err) from None


def reply_of(parts: list[Part], path: str) -> AssistantMessage:
    """The reply made of ``parts``; ``path`` is the response's content path."""
    try:
        return AssistantMessage.from_parts(parts)
    except ValidationError as err:
        raise wrap_errors(path, err) from None


def provider_error(kind: str, detail: object, path: str) -> ResponseError:
    """An error the provider reported (in a reply or mid-stream) as a ``ResponseError``."""
    message = detail.get("message", "") if isinstance(detail, Mapping) else detail
    return ResponseError(f"provider error {error_text(kind)}: {error_text(message)}", path=path)


def read_counts(node: Node | None, names: Mapping[str, str], into: dict[str, int | None]) -> None:
    """The token counts of a usage object into ``into`` (a ``Usage`` field ->
    count map): ``names`` maps each field to the provider's member; a member
    that is absent or null leaves the field as it is."""
    if node is None:
        return
    for field, member in names.items():
        value = node.opt(member, int)
        if value is not None:
            if value < 0:
                raise ResponseError("expected a non-negative integer", path=f"{node.path}.{member}")
            into[field] = value


# -- the wire ----------------------------------------------------------------------


class Wire:
    """What the Claude adapters do alike, over the hooks below that spell one
    API's wire form."""

    key: ClassVar[str]  # the provider id, also the fragment-cache key of its turns
    name: ClassVar[str]  # the provider as named in errors
    # Where each of OPTION_NAMES lives in the provider's options (dotted; also
    # the path of its errors).
    paths: ClassVar[Mapping[str, str]]
    # ToolCall's "id", "name" and "arguments" as the provider names them.
    tool_fields: ClassVar[Mapping[str, str]]
    # The option object and its member that carry a json_schema response format.
    format_at: ClassVar[tuple[str, str]]

    # -- spelling hooks -----------------------------------------------------------

    def text_block(self, text: str) -> dict[str, Any]:
        raise NotImplementedError

    def image_block(self, image: Image) -> dict[str, Any]:
        """An image as a content block (``Refused`` where the provider cannot take it)."""
        raise NotImplementedError

    def document_block(self, document: Document) -> dict[str, Any]:
        """A document as a content block (``Refused`` where the provider cannot take it)."""
        raise NotImplementedError

    def marked(self, blocks: list[dict[str, Any]], marks: Sequence[Mark]) -> list[dict[str, Any]]:
        """``blocks`` with the cache breakpoints ``marks`` in the provider's spelling."""
        raise NotImplementedError

    def marks_in(self, blocks: Iterable[Any]) -> int:
        """The cache breakpoints among wire ``blocks`` (nested ones included)."""
        raise NotImplementedError

    def too_many_marks(self, count: int) -> ValidationError:
        """The error for a request with more than ``MAX_BREAKPOINTS`` breakpoints."""
        raise NotImplementedError

    def tool_use_block(self, call: ToolCall) -> dict[str, Any]:
        raise NotImplementedError

    def thinking_wire(self, block: ThinkingBlock.Text) -> dict[str, Any]:
        raise NotImplementedError

    def redacted_wire(self, block: ThinkingBlock.Redacted) -> dict[str, Any]:
        raise NotImplementedError

    def tool_result_blocks(
        self, message: ToolMessage, blocks: list[dict[str, Any]], marks: Sequence[Mark]
    ) -> list[dict[str, Any]]:
        """A tool result, its content laid out as ``blocks`` and ``marks``, as
        the block(s) of a user turn."""
        raise NotImplementedError

    def forces_tool(self, choice: object) -> bool:
        """Whether a ``tool_choice`` value forces tool use."""
        raise NotImplementedError

    def format_wire(self, spec: Mapping[str, Any]) -> dict[str, Any]:
        """A ``json_schema`` response format's spec (it has a ``schema``) as sent."""
        raise NotImplementedError

    def read_block(self, block: Node) -> Part | None:
        """One response content block as a message part (None: nothing to keep)."""
        raise NotImplementedError

    # -- request -------------------------------------------------------------------

    def settings(self, options: Mapping[str, Any], betas: Sequence[str]) -> ThinkingSettings:
        """The caller's thinking option, checked with the sampling options it constrains."""
        paths = self.paths
        thinking = read_thinking(value_at(options, paths["thinking"]), paths["thinking"])
        check_sampling(
            thinking,
            options,
            paths,
            forced_tool_choice=self.forces_tool(value_at(options, paths["tool_choice"])),
            interleaved=INTERLEAVED_BETA in betas,
        )
        return thinking

    def put_response_format(self, options: dict[str, Any], fmt: Mapping[str, Any] | None) -> None:
        """The conversation's response format into ``options`` at ``format_at``:
        Claude's structured output takes a JSON schema; ``text`` sends nothing
        and ``json_object`` has no Claude form."""
        fmt = response_format(fmt, self.key, ("text", "json_schema"), needs=("schema",))
        if fmt is None or fmt["type"] == "text":
            return
        field, member = self.format_at
        config = options.get(field) or {}
        if not isinstance(config, Mapping):
            raise ValidationError(f"{field}: Input should be a valid dictionary", path=field)
        if config.get(member) is not None:
            raise ValidationError(
                f"{field}.{member}: set both here and by the conversation's response_format; give one",
                path=f"{field}.{member}",
            )
        options[field] = {**config, member: self.format_wire(fmt["json_schema"])}

    def messages(self, conversation: Conversation, replay: Replay, thinking: ThinkingSettings) -> tuple[Fragments, int]:
        """The JSON bytes of the request's wire turns and the sum of their
        ``turn_tally`` (Anthropic: the cache breakpoints in them), once the tool
        loop is known to be sendable."""
        check_tool_loop(
            conversation,
            replay,
            thinking,
            key=self.key,
            provider=self.name,
            opt_in_path=f"{self.paths['thinking']}.block_binding",
        )
        try:
            return tallied_wire_messages(replay, self.key, self.turns, self.goes_out)
        except Refused as err:
            raise located(conversation, err) from None

    def named_turn(self, replay: Replay, message: str) -> int | None:
        """The conversation index of the assistant turn Claude's error names as
        ``messages.N`` (an index into the wire turns this request sent), or None
        when it names none, or a user turn."""
        match = WIRE_INDEX.search(message)
        if match is None:
            return None
        sent = replay.sent_messages()
        turns = plan_turns(sent, self.goes_out)
        wire = int(match[1])
        if wire >= len(turns) or turns[wire][0] != "assistant":
            return None
        named = turns[wire][1][0]
        return next(i for i, m in enumerate(sent) if m is named)

    def check_marks(self, count: int) -> None:
        """Refuse a request with more cache breakpoints than Claude takes."""
        if count > MAX_BREAKPOINTS:
            raise self.too_many_marks(count)

    def turn_marks(self, turn: Mapping[str, Any]) -> int:
        content = turn["content"]
        return 0 if isinstance(content, str) else self.marks_in(content)

    def turn_tally(self, turn: Mapping[str, Any]) -> int:
        """The number a wire turn is kept with beside its bytes, summed over the
        request by ``messages``: its cache breakpoints (an adapter that decides
        more from its turns counts that in too)."""
        return self.turn_marks(turn)

    def goes_out(self, message: AssistantMessage) -> bool:
        """Whether an as-sent assistant turn is put on the wire at all: a turn
        with no text, tool call or native block of this provider (thinking
        alone, or nothing) would be an empty or thinking-only assistant message,
        which Claude rejects; it is left out and the user turns around it merge.
        Not cached (a flag beside each turn's bytes would cost more memory than
        the bytes' own dict): a turn with tool calls goes out at once, and the
        others are read only when their turn is mapped or a cut is looked for."""
        return bool(message.tool_calls) or any(not isinstance(p, ThinkingBlock) for p in self.sent_parts(message))

    def sent_parts(self, message: AssistantMessage) -> list[Part]:
        """``wire_parts`` of an as-sent turn for this provider."""
        return wire_parts(message, self.key)

    def turns(self, sent: Sequence[Message]) -> tuple[list[bytes], list[int]]:
        """The wire turns of a run of as-sent messages, as their JSON bytes and
        ``turn_tally`` (see ``tallied_wire_messages``)."""
        native = self.native_turns(sent)
        if native is not None:
            return native
        encoded: list[bytes] = []
        tallies: list[int] = []
        for role, group in plan_turns(sent, self.goes_out):
            raw, tally = self.assistant_turn(group[0]) if role == "assistant" else self.user_turn(group)  # type: ignore[arg-type]
            encoded.append(raw)
            tallies.append(tally)
        return encoded, tallies

    @property
    def memo_keys(self) -> tuple[str, str]:
        """The keys an assistant turn and a one-message user turn are kept
        under on their message (``assistant_turn``, ``user_turn``), interned
        as ``_memo.put`` interns them."""
        return sys.intern(self.key), sys.intern(f"{self.key}:user")

    def native_turns(self, sent: Sequence[Message]) -> tuple[list[bytes], list[int]] | None:
        """``turns(sent)`` done wholly by the native core, when it knows every
        message of ``sent`` (the turns it wrote before one it does not know
        are kept on their messages, as ``turns`` keeps them), or None. The
        default: None."""
        return None

    def native_turn(self, role: str, group: list[Message]) -> bytes | None:
        """The JSON bytes of a wire turn written by the native core, for the
        plain cases it knows, or None: the turn is built here. A turn written
        natively holds no cache breakpoint, so its ``turn_tally`` is 0; an
        adapter whose ``turn_tally`` counts more keeps this default."""
        return None

    def assistant_turn(self, message: AssistantMessage) -> tuple[bytes, int]:
        return counted(
            message,
            self.key,
            lambda: {"role": "assistant", "content": self.assistant_blocks(message)},
            self.turn_tally,
            lambda: self.native_turn("assistant", [message]),
        )

    def assistant_blocks(self, message: AssistantMessage) -> list[dict[str, Any]]:
        blocks: list[dict[str, Any]] = []
        for part in self.sent_parts(message):
            if isinstance(part, str):
                blocks.append(self.text_block(part))
            elif isinstance(part, ToolCall):
                blocks.append(self.tool_use_block(part))
            elif isinstance(part, ThinkingBlock.Text):
                blocks.append(self.thinking_wire(part))
            elif isinstance(part, ThinkingBlock.Redacted):
                blocks.append(self.redacted_wire(part))
            elif isinstance(part, Native):
                blocks.append(part.value)
        return blocks

    def user_turn(self, group: list[Message]) -> tuple[bytes, int]:
        """One user turn (its JSON bytes and ``turn_tally``): the tool results,
        then the user text, of a run. A turn of one message is encoded once and
        kept on the message; a turn that joins several is encoded for each
        request that has it in its unsettled tail, then once more for the wire
        cache, rather than keeping each message's blocks encoded beside the turn
        that copies them."""
        if len(group) == 1:
            return counted(
                group[0],
                f"{self.key}:user",
                lambda: self.user_wire(group),
                self.turn_tally,
                lambda: self.native_turn("user", group),
            )
        raw = self.native_turn("user", group)
        if raw is not None:
            return raw, 0
        value = self.user_wire(group)
        return dumps(value), self.turn_tally(value)

    def user_wire(self, group: list[Message]) -> dict[str, Any]:
        return {"role": "user", "content": [block for m in group for block in self.user_blocks(m)]}

    def user_blocks(self, message: Message) -> list[dict[str, Any]]:
        """A tool result or user message as blocks of a user turn."""
        blocks, marks = self.content_of(message.parts)  # type: ignore[attr-defined]
        if not blocks:
            raise self.nothing_to_send(message)
        if isinstance(message, ToolMessage):
            return self.tool_result_blocks(message, blocks, marks)
        return self.marked(blocks, marks)

    def nothing_to_send(self, message: Message) -> Refused:
        parts = [p for p in message.parts if not isinstance(p, CacheBreakpoint)]  # type: ignore[attr-defined]
        return Refused(
            f"nothing in this message goes to {self.key} (another provider's native blocks without text)",
            part=parts[0] if parts else None,
        )

    def content_of(self, parts: Sequence[ContentPart]) -> tuple[list[dict[str, Any]], list[Mark]]:
        """Content parts as blocks, and the cache breakpoints among them (a
        breakpoint with no new block before it since the last one marks nothing)."""
        blocks: list[dict[str, Any]] = []
        marks: list[Mark] = []
        for part in parts:
            if isinstance(part, CacheBreakpoint):
                if blocks and (not marks or marks[-1][0] != len(blocks) - 1):
                    marks.append((len(blocks) - 1, part.ttl))
                continue
            try:
                block = self.part_block(part)
            except Refused as err:
                err.part = part
                raise
            if block is not None:
                blocks.append(block)
        return blocks, marks

    def part_block(self, part: ContentPart) -> dict[str, Any] | None:
        """One content part as a block (None: nothing goes out for it: another
        provider's native block without text)."""
        unknown = unknown_part(part, self.key)
        if unknown is not None:
            raise Refused(unknown)
        match part:
            case str():
                return self.text_block(part)
            case Image():
                return self.image_block(part)
            case Document():
                return self.document_block(part)
            case Native():
                if part.provider == self.key:
                    return part.value
                if part.text is not None and part.text.strip():
                    return self.text_block(part.text)
                return None
            case CacheBreakpoint():
                return None  # content_of reads breakpoints before asking for blocks
            case _:
                assert_never(part)

    def system_blocks(self, systems: Sequence[SystemMessage]) -> list[dict[str, Any]]:
        """The system messages as one list of blocks: a text block for plain
        text content, a block per part (breakpoints marked) for parts."""
        blocks: list[dict[str, Any]] = []
        for message in systems:
            if isinstance(message.content, str):
                blocks.append(self.text_block(message.content))
            else:
                blocks.extend(self.marked(*self.content_of(message.parts)))
        return blocks

    # -- response ------------------------------------------------------------------

    def reply(self, message: Node, *, role_required: bool) -> AssistantMessage:
        """The reply in a response's message object (its ``role`` and ``content``)."""
        role = message.get("role", str) if role_required else message.opt("role", str)
        if role is not None and role != "assistant":
            raise ResponseError(f"expected role 'assistant', got {role!r}", path=f"{message.path}.role")
        parts: list[Part] = []
        for block in message.items("content"):
            part = self.read_block(block)
            if part is not None:
                parts.append(part)
        return reply_of(parts, f"{message.path}.content")

    def tool_call(self, call_id: str, name: str, arguments: Mapping[str, Any], path: str) -> ToolCall:
        """A ``ToolCall`` read from a response at ``path``; a bad value is
        reported where it stands."""
        try:
            return ToolCall(call_id, name, dict(arguments))
        except ValidationError as err:
            where = err.path or ""
            field = next((f for f in ("arguments", "name", "id") if where.startswith(f"ToolCall.{f}")), "arguments")
            raise ResponseError(str(err), path=f"{path}.{self.tool_fields[field]}") from None


# -- streaming ---------------------------------------------------------------------


class StreamBlock:
    """One content block being streamed (the fields both wires have). Text
    arrives in pieces, joined once at the end."""

    __slots__ = ("id", "kind", "name", "pieces", "signature", "stopped")

    def __init__(self, kind: str) -> None:
        self.kind = kind
        self.pieces: list[str] = []
        self.signature = ""
        self.id = ""
        self.name = ""
        self.stopped = False

    @property
    def text(self) -> str:
        return "".join(self.pieces)


B = TypeVar("B", bound=StreamBlock)


class Stream(StreamParser, Generic[B]):
    """A streamed reply: its blocks by index, between a start and a stop event,
    and its metadata as it arrives."""

    start_event: ClassVar[str]
    stop_event: ClassVar[str]
    content_path: ClassVar[str]  # the content path of the reply received whole

    def __init__(self) -> None:
        self._started = False
        self._stopped = False
        self._blocks: dict[int, B] = {}
        self._stop_reason: str | None = None
        self._usage: dict[str, int | None] = {}
        self._id: str | None = None
        self._model: str | None = None

    def part(self, block: B, path: str) -> Part | None:
        """The part a finished block stands for (None: nothing to keep)."""
        raise NotImplementedError

    def partial_part(self, block: B) -> Part | None:
        """What a block that may not have finished shows of the answer: its
        text, or its tool call once the arguments are complete JSON."""
        raise NotImplementedError

    def finish(self) -> AssistantMessage:
        if not self._started:
            raise ResponseError(f"stream ended before {self.start_event}", path="$")
        if not self._stopped:
            raise ResponseError(f"stream ended before {self.stop_event} (truncated)", path="$")
        return reply_of(finished_parts(self._blocks, self.content_path, self.part), self.content_path)

    def ended(self) -> bool:
        return self._stopped

    def info(self) -> ReplyInfo:
        return ReplyInfo(self._stop_reason, Usage(**self._usage), self._id, self._model)

    def partial(self) -> AssistantMessage | None:
        parts: list[Part] = []
        for index in sorted(self._blocks):
            try:
                part = self.partial_part(self._blocks[index])
            except (ResponseError, ValidationError):
                part = None  # not complete yet
            if part is not None and (not isinstance(part, str) or part):
                parts.append(part)
        if not parts:
            return None
        return AssistantMessage.from_parts(parts)


def complete_call(block: StreamBlock, raw: str, start: Mapping[str, Any], tool_call: Callable[..., ToolCall]) -> Part:
    """A streamed tool call whose arguments are complete (``ResponseError`` while they are not)."""
    if raw.strip():
        arguments = parse_arguments(raw, "$")
    elif block.stopped:
        arguments = dict(start)
    else:
        raise ResponseError("arguments not complete", path="$")
    return tool_call(block.id, block.name, arguments, "$")


def finished_parts(blocks: Mapping[int, B], path: str, part_of: Callable[[B, str], Part | None]) -> list[Part]:
    """The parts of a streamed reply, in block-index order; a block that never
    stopped means the stream was cut off. ``path`` is the response's content path."""
    parts: list[Part] = []
    for position, index in enumerate(sorted(blocks)):
        block = blocks[index]
        block_path = f"{path}[{position}]"
        if not block.stopped:
            raise ResponseError(f"block {index} never stopped (truncated)", path=block_path)
        part = part_of(block, block_path)
        if part is not None:
            parts.append(part)
    return parts
