"""What a provider's reply carries besides the message: ``Reply`` (the bound
message, stop reason, token usage, response id, served model) and the typed
deltas a stream yields while it accumulates.

None of it is fingerprinted: usage, ids and stop reasons are not part of a
message's identity.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, ClassVar, TypeAlias

from ._errors import ValidationError
from ._frozen import Frozen, Value, check_optional_str, check_str
from ._messages import AssistantMessage

if TYPE_CHECKING:
    from ._conversation import Conversation


def _count(value: object, path: str) -> int | None:
    if value is None:
        return None
    if not isinstance(value, int) or isinstance(value, bool) or value < 0:
        raise ValidationError(f"{path}: expected a non-negative integer or None, got {value!r}", path=path)
    return value


class Usage(Value):
    """Token counts as the provider reported them; None where it did not say.

    ``input_tokens`` counts the prompt as the provider bills it (for Anthropic,
    the uncached part; cache reads and writes are counted apart).
    ``reasoning_tokens`` is the part of ``output_tokens`` spent thinking, where
    the provider reports it."""

    __slots__ = ("cache_read_tokens", "cache_write_tokens", "input_tokens", "output_tokens", "reasoning_tokens")
    __match_args__ = ("input_tokens", "output_tokens", "cache_read_tokens", "cache_write_tokens", "reasoning_tokens")
    input_tokens: int | None
    output_tokens: int | None
    cache_read_tokens: int | None
    cache_write_tokens: int | None
    reasoning_tokens: int | None

    def __init__(
        self,
        input_tokens: int | None = None,
        output_tokens: int | None = None,
        cache_read_tokens: int | None = None,
        cache_write_tokens: int | None = None,
        reasoning_tokens: int | None = None,
    ) -> None:
        self._init(
            input_tokens=_count(input_tokens, "Usage.input_tokens"),
            output_tokens=_count(output_tokens, "Usage.output_tokens"),
            cache_read_tokens=_count(cache_read_tokens, "Usage.cache_read_tokens"),
            cache_write_tokens=_count(cache_write_tokens, "Usage.cache_write_tokens"),
            reasoning_tokens=_count(reasoning_tokens, "Usage.reasoning_tokens"),
        )


class ReplyInfo(Value):
    """An adapter's reading of a reply's metadata (everything in ``Reply`` but
    the message)."""

    __slots__ = ("id", "model", "stop_reason", "usage")
    __match_args__ = ("stop_reason", "usage", "id", "model")
    stop_reason: str | None
    usage: Usage
    id: str | None
    model: str | None

    def __init__(
        self,
        stop_reason: str | None = None,
        usage: Usage | None = None,
        id: str | None = None,  # noqa: A002 - the provider's name for it
        model: str | None = None,
    ) -> None:
        if usage is not None and not isinstance(usage, Usage):
            raise ValidationError("ReplyInfo.usage: expected Usage", path="ReplyInfo.usage")
        self._init(
            stop_reason=check_optional_str(stop_reason, "ReplyInfo.stop_reason"),
            usage=usage if usage is not None else Usage(),
            id=check_optional_str(id, "ReplyInfo.id"),
            model=check_optional_str(model, "ReplyInfo.model"),
        )


class Recovery(Frozen):
    """What ``thinkseal.Client`` did to get a reply it would otherwise not have got.

    ``kind`` is ``"provider-rejected"`` when the provider answered HTTP 400
    because replayed thinking did not verify and the client sent the request
    once more with the turns at ``unsealed`` (indices into the conversation)
    unsealed, or ``"replay-error"`` when ``prepare`` raised ``ReplayError`` and
    the client's ``on_replay_error`` policy resolved it the ``way`` it names
    (``"drop_block"`` or ``"disable_thinking"``). ``error`` is the error that
    was recovered from."""

    __slots__ = ("error", "kind", "unsealed", "way")
    kind: str
    unsealed: tuple[int, ...]
    way: str | None
    error: Exception

    def __init__(self, kind: str, error: Exception, unsealed: tuple[int, ...] = (), way: str | None = None) -> None:
        self._init(kind=kind, error=error, unsealed=tuple(unsealed), way=way)

    def __repr__(self) -> str:
        return f"Recovery(kind={self.kind!r}, unsealed={self.unsealed!r}, way={self.way!r}, error={self.error!r})"


class Reply(Frozen):
    """A provider's reply: ``message`` (the ``AssistantMessage``, bound to the
    request as sent when it has sealed thinking), ``stop_reason`` (the
    provider's own string), ``usage``, ``id`` (the response id) and ``model``
    (as served, which may differ from the model asked for).

    ``conversation`` is the conversation the request was prepared from with
    ``message`` appended: what to send next. After a recovery it holds the
    turns the client unsealed, so they are not sent sealed again.
    ``recoveries`` says what ``thinkseal.Client`` recovered from on the way
    (empty for a plain request). Neither is part of equality."""

    __slots__ = ("_conversation", "_history", "id", "message", "model", "recoveries", "stop_reason", "usage")
    message: AssistantMessage
    stop_reason: str | None
    usage: Usage
    id: str | None
    model: str | None
    recoveries: tuple[Recovery, ...]
    _history: Conversation | None
    _conversation: Conversation | None

    def __init__(
        self,
        message: AssistantMessage,
        info: ReplyInfo,
        *,
        history: Conversation | None = None,
        recoveries: tuple[Recovery, ...] = (),
    ) -> None:
        if not isinstance(message, AssistantMessage):
            raise ValidationError("Reply.message: expected an AssistantMessage", path="Reply.message")
        self._init(
            message=message,
            stop_reason=info.stop_reason,
            usage=info.usage,
            id=info.id,
            model=info.model,
            recoveries=tuple(recoveries),
            _history=history,
            _conversation=None,
        )

    @property
    def conversation(self) -> Conversation:
        """The conversation the request was prepared from, ``message`` appended."""
        conversation = self._conversation
        if conversation is None:
            if self._history is None:
                raise ValidationError(
                    "Reply.conversation: this Reply was not made from a prepared request; append "
                    "Reply.message to the conversation yourself",
                    path="Reply.conversation",
                )
            conversation = self._history.append(self.message)
            object.__setattr__(self, "_conversation", conversation)
        return conversation

    def with_recoveries(self, recoveries: tuple[Recovery, ...]) -> Reply:
        """This reply, saying it was got through ``recoveries``."""
        info = ReplyInfo(self.stop_reason, self.usage, self.id, self.model)
        return Reply(self.message, info, history=self._history, recoveries=recoveries)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Reply):
            return NotImplemented
        return (self.message, self.stop_reason, self.usage, self.id, self.model) == (
            other.message,
            other.stop_reason,
            other.usage,
            other.id,
            other.model,
        )

    def __hash__(self) -> int:
        return hash((self.message, self.stop_reason, self.usage, self.id, self.model))

    def __repr__(self) -> str:
        extra = f", recoveries={self.recoveries!r}" if self.recoveries else ""
        return (
            f"Reply(message={self.message!r}, stop_reason={self.stop_reason!r}, usage={self.usage!r}, "
            f"id={self.id!r}, model={self.model!r}{extra})"
        )


class _Delta(Value):
    """Base of the typed deltas: ``index`` is the block the delta belongs to, as
    the provider numbers them (a content block, a tool call), 0 where it does not."""

    __slots__ = ("index",)
    kind: ClassVar[str]
    index: int


class TextDelta(_Delta):
    """More answer text."""

    __slots__ = ("text",)
    __match_args__ = ("index", "text")
    kind: ClassVar[str] = "text"
    text: str

    def __init__(self, index: int, text: str) -> None:
        self._init(index=index, text=check_str(text, "TextDelta.text"))


class ThinkingDelta(_Delta):
    """More reasoning text (signatures and encrypted data are not deltas: they
    arrive whole in the finished message)."""

    __slots__ = ("text",)
    __match_args__ = ("index", "text")
    kind: ClassVar[str] = "thinking"
    text: str

    def __init__(self, index: int, text: str) -> None:
        self._init(index=index, text=check_str(text, "ThinkingDelta.text"))


class ToolCallDelta(_Delta):
    """A tool call starting (``id`` and ``name`` set, where the provider gives
    them then) or more of its arguments' JSON text (``arguments``)."""

    __slots__ = ("arguments", "id", "name")
    __match_args__ = ("index", "id", "name", "arguments")
    kind: ClassVar[str] = "tool_call"
    id: str | None
    name: str | None
    arguments: str

    def __init__(self, index: int, id: str | None = None, name: str | None = None, arguments: str = "") -> None:  # noqa: A002
        self._init(
            index=index,
            id=check_optional_str(id, "ToolCallDelta.id"),
            name=check_optional_str(name, "ToolCallDelta.name"),
            arguments=check_str(arguments, "ToolCallDelta.arguments"),
        )


Delta: TypeAlias = TextDelta | ThinkingDelta | ToolCallDelta
