"""Claude's thinking rules, shared by the ``anthropic`` and ``bedrock`` adapters
(Bedrock forwards Converse requests to the same Claude models, which apply the
same checks and answer with the same error wording).

- ``read_thinking`` / ``check_sampling``: the documented ``thinking`` option
  rules, raising ``ValidationError`` with the provider's own wording where the
  reference (shared/reference/provider-wire-formats.md §1.1, §1.7) gives one.
- ``wire_parts``: which parts of an as-sent assistant turn go on the wire.
  Claude takes signed thinking (also with empty text) and redacted blocks, in
  the order received; never unsigned text (foreign reasoning shown as thinking
  gets rejected or leaks), never another provider's opaque data, never an
  empty text block (a 400).
- ``plan_turns``: the as-sent messages grouped into wire turns. Every run of
  tool results and user text between two assistant turns becomes ONE user
  turn, tool results first in call order (Claude requires each ``tool_use`` to
  be answered in the very next user turn, results before any text).
- ``check_tool_loop``: with thinking on, the assistant turn a tool loop
  continues must go out starting with its thinking, or Claude answers 400
  ("Expected `thinking` or `redacted_thinking`, but found `tool_use`");
  ``ReplayError`` says so before sending, unless the caller opted into
  ``block_binding.prefix_mismatch_behavior = "drop_block"``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from typing import Any, Final, Protocol, TypeVar

from .._blocks import ThinkingBlock
from .._conversation import Conversation
from .._errors import ReplayError, ResponseError, ValidationError
from .._messages import AssistantMessage, Message, Part, SystemMessage, ToolCall, ToolMessage
from .._replay import Reason, Replay, reason_of

THINKING_TYPES: Final[tuple[str, ...]] = ("enabled", "disabled", "adaptive", "between_tools")
BINDING_BETA: Final[str] = "thinking-binding-controls-2026-08-01"
INTERLEAVED_BETA: Final[str] = "interleaved-thinking-2025-05-14"
MIN_BUDGET: Final[int] = 1024

# Provider wording (reference §1.7) where it exists; thinkseal's own otherwise.
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


def check_sampling(
    thinking: ThinkingSettings,
    *,
    max_tokens: object,
    temperature: object,
    top_p: object,
    top_k: object,
    forced_tool_choice: bool,
    interleaved: bool,
    paths: Mapping[str, str],
) -> None:
    """The documented incompatibilities of thinking with the sampling options.

    ``paths`` maps "max_tokens", "temperature", "top_p", "top_k" and
    "tool_choice" to where the provider keeps them (for ``ValidationError.path``).
    ``interleaved``: the interleaved-thinking beta is on, under which the budget
    covers the whole turn and may exceed ``max_tokens``.
    """
    if not thinking.active:
        return
    budget = thinking.budget_tokens
    if budget is not None and is_int(max_tokens) and not interleaved and budget >= max_tokens:  # type: ignore[operator]
        raise ValidationError(BUDGET_NOT_BELOW_MAX, path=paths["max_tokens"])
    if temperature is not None and temperature != 1:
        raise ValidationError(TEMPERATURE_WITH_THINKING, path=paths["temperature"])
    if top_k is not None:
        raise ValidationError(TOP_K_WITH_THINKING, path=paths["top_k"])
    if top_p is not None and not (is_number(top_p) and 0.95 <= top_p <= 1):  # type: ignore[operator]
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


def wire_parts(message: AssistantMessage) -> list[Part]:
    """The parts of an as-sent turn that go to Claude, in order: text (not
    empty), tool calls, signed thinking and redacted blocks. The turn is either
    kept (sealed, replayed part by part) or already unsealed, in which case its
    thinking is unsigned text and is left out."""
    out: list[Part] = []
    for part in message.parts:
        if isinstance(part, str):
            if part:
                out.append(part)
        elif isinstance(part, ToolCall):
            out.append(part)
        elif isinstance(part, ThinkingBlock.Text):
            if part.is_sealed:
                out.append(part)
        elif isinstance(part, ThinkingBlock.Redacted):
            out.append(part)
        # ThinkingBlock.Opaque belongs to another provider: never sent to Claude.
    return out


def goes_out(message: AssistantMessage) -> bool:
    """Whether an as-sent assistant turn is put on the wire at all: a turn with
    no text and no tool calls (thinking alone, or nothing) would be an empty or
    thinking-only assistant message, which Claude rejects; it is left out and
    the user turns around it merge."""
    return message.is_well_formed


class Plan:
    """The as-sent messages laid out as Claude turns.

    ``systems``: every system message's text, in order (the top-level field).
    ``turns``: ("user", [ToolMessage..., UserMessage...]) or ("assistant", [message]).
    """

    __slots__ = ("systems", "turns")

    def __init__(self) -> None:
        self.systems: list[str] = []
        self.turns: list[tuple[str, list[Message]]] = []


def plan_turns(sent: Sequence[Message]) -> Plan:
    plan = Plan()
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
            plan.turns.append(("user", [*results, *texts]))
            run.clear()

    for message in sent:
        if isinstance(message, SystemMessage):
            plan.systems.append(message.content)
        elif isinstance(message, AssistantMessage):
            if not goes_out(message):
                continue
            flush()
            plan.turns.append(("assistant", [message]))
            call_order = {call.id: k for k, call in enumerate(message.tool_calls)}
        else:
            run.append(message)
    flush()
    return plan


def leading_thinking(message: AssistantMessage) -> bool:
    parts = wire_parts(message)
    return bool(parts) and isinstance(parts[0], ThinkingBlock)


def check_tool_loop(
    conversation: Conversation,
    replay: Replay,
    thinking: ThinkingSettings,
    *,
    provider: str,
    opt_in_path: str,
) -> None:
    """Raise ``ReplayError`` when this request continues a tool loop whose
    assistant turn would go out without its leading thinking block while
    thinking is on, unless the caller opted into ``drop_block``."""
    if not thinking.active or thinking.drop_block:
        return
    index = len(conversation) - 1
    while index >= 0 and isinstance(conversation[index], (ToolMessage, SystemMessage)):
        index -= 1
    if index < 0 or index == len(conversation) - 1 or not isinstance(conversation[index], AssistantMessage):
        return
    turn = replay.sent(index)
    assert isinstance(turn, AssistantMessage)
    if not turn.tool_calls or leading_thinking(turn):
        return  # no tool results go out for it (all stray), or it is fine
    reason = reason_of(replay.code(index))
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


_REASON_TEXT: Final[dict[Reason, str]] = {
    Reason.NO_SEALED_THINKING: "it has no signed thinking to replay",
    Reason.UNBOUND: "its thinking is not bound to the request that produced it",
    Reason.ORIGIN_MISMATCH: "it was produced by another provider, model or account",
    Reason.TURN_CHANGED: "the turn was changed after it was received",
    Reason.PREFIX_CHANGED: "the system prompt, tools or an earlier message changed since it was produced",
    Reason.VERSION_MISMATCH: "it was bound under another fingerprint version",
    Reason.UNPAIRED_TOOL_CALL: "one of its tool calls has no tool result, so the call is dropped and the turn changes",
}


def tool_choice_forces(value: Any) -> bool:
    """Anthropic ``tool_choice``: ``{"type": "any"}`` and ``{"type": "tool"}`` force a tool."""
    return isinstance(value, Mapping) and value.get("type") in ("any", "tool")


def tool_call(call_id: str, name: str, arguments: Mapping[str, Any], path: str, fields: Mapping[str, str]) -> ToolCall:
    """A ``ToolCall`` read from a response at ``path``; ``fields`` maps ToolCall's
    field names to the provider's, so a bad value is reported where it stands."""
    try:
        return ToolCall(call_id, name, dict(arguments))
    except ValidationError as err:
        where = err.path or ""
        field = next((f for f in ("arguments", "name", "id") if where.startswith(f"ToolCall.{f}")), "arguments")
        raise ResponseError(str(err), path=f"{path}.{fields[field]}") from None


class _StreamBlock(Protocol):
    stopped: bool


B = TypeVar("B", bound=_StreamBlock)


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
