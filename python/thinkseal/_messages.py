"""Messages and tool calls, with the sealing rules of an assistant turn, and
their dict form (``Message.to_dict`` / ``message_from_dict``, docs/persistence.md).

Every message caches its own digest (computed by the native core on first
use); immutability is what makes that cache safe.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from typing import Any, ClassVar, Self, Union

from . import _core
from ._binding import Binding
from ._blocks import ThinkingBlock, unsigned_text
from ._content import (
    SYSTEM_PARTS,
    TOOL_PARTS,
    USER_PARTS,
    CacheBreakpoint,
    Content,
    ContentPart,
    Document,
    Image,
    Native,
    as_parts,
    breakpoints,
    check_content,
    fingerprinted,
    text_of,
)
from ._errors import ValidationError
from ._frozen import Frozen, Value, check_bool, check_sequence, check_str
from ._json import freeze_json, require_object
from ._limits import check_parts
from ._reader import Reader, reroot

Part = Union[str, "ToolCall", ThinkingBlock, Native]

__all__ = [
    "AssistantMessage",
    "Message",
    "Part",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
    "message_from_dict",
    "message_to_dict",
]


class ToolCall(Value):
    """One tool invocation the model requested. ``arguments`` is a JSON object (read-only)."""

    __slots__ = ("_arguments_jcs", "arguments", "id", "name")
    __match_args__ = ("id", "name", "arguments")
    _fp_kind: ClassVar[str] = "call"
    id: str
    name: str
    arguments: Mapping[str, Any]
    _arguments_jcs: bytes

    def __init__(self, id: str, name: str, arguments: Mapping[str, object]) -> None:  # noqa: A002
        require_object(arguments, "ToolCall.arguments")
        frozen, canonical = freeze_json(arguments, "ToolCall.arguments")
        self._init(
            id=check_str(id, "ToolCall.id", blank_ok=False),
            name=check_str(name, "ToolCall.name", blank_ok=False),
            arguments=frozen,
            _arguments_jcs=canonical,
        )

    @property
    def arguments_json(self) -> str:
        """The arguments as RFC 8785 JSON text (keys sorted, numbers canonical)."""
        return self._arguments_jcs.decode()

    def _args(self) -> tuple[Any, ...]:
        return (self.id, self.name, dict(self.arguments))

    def _key(self) -> tuple[Any, ...]:
        return (self.id, self.name, self._arguments_jcs)


class Message(Frozen):
    """Base of the four message types. ``role`` is "system", "user", "assistant" or "tool"."""

    # _wire: what is derived from this message and kept on it: wire forms, ledger keys (_memo.py).
    # Every constructor sets it (None): reading an unset slot raises inside
    # (Anthropic's native mapping of 3,000 fresh messages: 1.38-1.41 us a
    # message with it unset, 1.20-1.27 with it None).
    __slots__ = ("_digest", "_wire")
    role: ClassVar[str]
    _digest: bytes | None
    _wire: tuple[str, Any] | dict[str, Any] | None

    def __new__(cls, *args: Any, **kwargs: Any) -> Self:
        if cls in (Message, _ContentMessage, _TextMessage):
            raise TypeError(
                "Message is the common base; make a SystemMessage, UserMessage, AssistantMessage or ToolMessage"
            )
        return super().__new__(cls)

    def _fields(self) -> dict[str, Any]:
        raise NotImplementedError

    @property
    def digest(self) -> bytes:
        """The 32-byte fingerprint digest of this message (docs/fingerprint.md)."""
        cached = self._digest
        if cached is None:
            cached = _core.message_digest(self)
            object.__setattr__(self, "_digest", cached)
        return cached

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready dict of every field, read back by ``message_from_dict``."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return type(self) is type(other) and self.digest == other.digest

    def __hash__(self) -> int:
        return hash(self.digest)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), tuple(self._fields().values()))

    def __replace__(self, **changes: Any) -> Message:
        return type(self)(**{**self._fields(), **changes})

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self._fields().items())
        return f"{type(self).__name__}({args})"


class _ContentMessage(Message):
    """A message whose content is a ``str`` or a sequence of content parts
    (``_content.py``). ``_fp_content`` is what the fingerprint reads: breakpoints
    left out, and a lone text part as a plain string."""

    __slots__ = ("_breakpoints", "_fp_content", "content")
    _allowed: ClassVar[tuple[type, ...]]
    content: Content
    _fp_content: Content
    _breakpoints: tuple[tuple[int, str | None], ...]

    def _set_content(self, content: object) -> dict[str, Any]:
        checked = check_content(content, f"{type(self).__name__}.content", self._allowed)
        return {"content": checked, "_fp_content": fingerprinted(checked), "_breakpoints": breakpoints(checked)}

    @property
    def parts(self) -> tuple[ContentPart, ...]:
        """The content as parts (a ``str`` content is one text part)."""
        return as_parts(self.content)

    @property
    def text(self) -> str:
        """The text parts of the content, joined with no separator."""
        return text_of(self.content)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return type(self) is type(other) and self.digest == other.digest and self._breakpoints == other._breakpoints

    __hash__ = Message.__hash__


class _TextMessage(_ContentMessage):
    __slots__ = ()

    def __init__(self, content: str | Sequence[ContentPart]) -> None:
        self._init(**self._set_content(content), _digest=None, _wire=None)

    def _fields(self) -> dict[str, Any]:
        return {"content": self.content}

    def to_dict(self) -> dict[str, Any]:
        return {"role": self.role, "content": content_to_dict(self.content)}


class SystemMessage(_TextMessage):
    """A system prompt: text, with cache breakpoints if wanted. It may stand
    anywhere in a conversation; providers with one top-level system field
    receive all of them, in order."""

    __slots__ = ()
    role: ClassVar[str] = "system"
    _allowed: ClassVar[tuple[type, ...]] = SYSTEM_PARTS


class UserMessage(_TextMessage):
    """What the user said: text, or parts (text, images, documents, native
    blocks, cache breakpoints)."""

    __slots__ = ()
    role: ClassVar[str] = "user"
    _allowed: ClassVar[tuple[type, ...]] = USER_PARTS


class ToolMessage(_ContentMessage):
    """The result of the tool call ``tool_call_id``: text, or parts (text,
    images, documents, native blocks, cache breakpoints)."""

    __slots__ = ("is_error", "tool_call_id")
    role: ClassVar[str] = "tool"
    _allowed: ClassVar[tuple[type, ...]] = TOOL_PARTS
    tool_call_id: str
    is_error: bool

    def __init__(self, content: str | Sequence[ContentPart], tool_call_id: str, is_error: bool = False) -> None:
        self._init(
            **self._set_content(content),
            tool_call_id=check_str(tool_call_id, "ToolMessage.tool_call_id", blank_ok=False),
            is_error=check_bool(is_error, "ToolMessage.is_error"),
            _digest=None,
            _wire=None,
        )

    def _fields(self) -> dict[str, Any]:
        return {"content": self.content, "tool_call_id": self.tool_call_id, "is_error": self.is_error}

    def to_dict(self) -> dict[str, Any]:
        return {
            "role": "tool",
            "content": content_to_dict(self.content),
            "tool_call_id": self.tool_call_id,
            "is_error": self.is_error,
        }


def _check_parts(parts: object) -> tuple[Part, ...]:
    checked: list[Part] = []
    given = check_sequence(parts, "AssistantMessage.parts")
    check_parts(len(given), "AssistantMessage.parts")
    for i, part in enumerate(given):
        if isinstance(part, str):
            checked.append(check_str(part, f"AssistantMessage.parts[{i}]"))
        elif isinstance(part, (ToolCall, ThinkingBlock, Native)):
            checked.append(part)
        else:
            raise ValidationError(
                f"AssistantMessage.parts[{i}]: expected str, ToolCall, ThinkingBlock or Native, "
                f"got {type(part).__name__}",
                path=f"AssistantMessage.parts[{i}]",
            )
    return tuple(checked)


def _check_items(items: object, kind: type, path: str) -> tuple[Any, ...]:
    values = check_sequence(items, path)
    check_parts(len(values), path)
    for i, item in enumerate(values):
        if not isinstance(item, kind):
            raise ValidationError(
                f"{path}[{i}]: expected {kind.__qualname__}, got {type(item).__name__}", path=f"{path}[{i}]"
            )
    return values


def _canonical_parts(
    content: str | None, tool_calls: tuple[ToolCall, ...], thinking: tuple[ThinkingBlock, ...]
) -> tuple[Part, ...]:
    text: tuple[Part, ...] = () if content is None else (content,)
    return (*thinking, *text, *tool_calls)


def _content_parts(parts: Iterable[Part], keep_cited: bool = True) -> list[str | Native]:
    """The text and native parts of a turn in their order, adjacent text parts
    joined (so a turn without native parts gives at most one text part). With
    ``keep_cited=False`` the native parts that carry text (a cited text block)
    are left out, and so is the text: what ``with_content`` replaces."""
    out: list[str | Native] = []
    for part in parts:
        if isinstance(part, str):
            if keep_cited:
                if out and isinstance(out[-1], str):
                    out[-1] += part
                else:
                    out.append(part)
        elif isinstance(part, Native) and (keep_cited or part.text is None):
            out.append(part)
    return out


def _layout(
    thinking: Iterable[ThinkingBlock], content: Iterable[str | Native], tool_calls: Iterable[ToolCall]
) -> tuple[Part, ...]:
    """The canonical layout of a rebuilt turn: thinking, then text and native
    parts in their order, then tool calls (docs/api.md "Messages")."""
    return (*thinking, *content, *tool_calls)


def _unsealed_parts(parts: Iterable[Part]) -> Iterator[Part]:
    """``parts`` in order with every seal removed: signed Text becomes unsigned
    (dropped when its text is empty), Redacted and Opaque blocks are dropped,
    and a native block (a provider's own data, sealed like its thinking) gives
    way to its text, or to nothing when it has none."""
    for part in parts:
        if isinstance(part, ThinkingBlock):
            if isinstance(part, ThinkingBlock.Text) and part.text:
                yield unsigned_text(part.text) if part.is_sealed else part
        elif isinstance(part, Native):
            if part.text:
                yield part.text
        else:
            yield part


def _unsealed_thinking(thinking: Iterable[ThinkingBlock]) -> tuple[ThinkingBlock, ...]:
    return tuple(_unsealed_parts(thinking))  # type: ignore[arg-type]


class AssistantMessage(Message):
    """A model's reply: optional text, tool calls, and the thinking before them.

    See docs/api.md "Messages" for the sealing rules: ``with_content`` and
    ``with_tool_calls`` with a different value unseal the thinking;
    ``with_thinking`` replaces it; only a provider's ``receive`` (or
    ``Conversation.rebind``) attaches a binding.
    """

    __slots__ = ("_unsealed", "content_opt", "parts", "thinking", "thinking_binding", "tool_calls")
    role: ClassVar[str] = "assistant"
    content_opt: str | None
    tool_calls: tuple[ToolCall, ...]
    thinking: tuple[ThinkingBlock, ...]
    parts: tuple[Part, ...]
    thinking_binding: Binding | None
    _unsealed: AssistantMessage | None

    def __init__(
        self,
        content: str | None = None,
        tool_calls: Sequence[ToolCall] = (),
        thinking: Sequence[ThinkingBlock] = (),
    ) -> None:
        content = None if content is None else check_str(content, "AssistantMessage.content")
        calls = _check_items(tool_calls, ToolCall, "AssistantMessage.tool_calls")
        blocks = _check_items(thinking, ThinkingBlock, "AssistantMessage.thinking")
        parts = _canonical_parts(content, calls, blocks)
        check_parts(len(parts), "AssistantMessage.parts")  # the limit is on the whole turn, as from_parts reads it
        self._set(parts, None)

    def _set(self, parts: tuple[Part, ...], binding: Binding | None) -> None:
        # A native block's fallback text (a cited text block) is text of the turn.
        texts: list[str] = []
        for part in parts:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Native) and part.text is not None:
                texts.append(part.text)
        self._init(
            parts=parts,
            content_opt="".join(texts) if texts else None,
            tool_calls=tuple(p for p in parts if isinstance(p, ToolCall)),
            thinking=tuple(p for p in parts if isinstance(p, ThinkingBlock)),
            thinking_binding=binding,
            _digest=None,
            _wire=None,
            _unsealed=None,
        )

    @classmethod
    def _trusted(cls, parts: tuple[Part, ...]) -> AssistantMessage:
        """A turn of parts already validated (the unsealing and rebuilding paths)."""
        message = cls.__new__(cls)
        message._set(parts, None)
        return message

    @classmethod
    def from_parts(cls, parts: Sequence[Part]) -> AssistantMessage:
        """A turn whose blocks stand in the given order (text, tool calls, thinking)."""
        message = cls.__new__(cls)
        message._set(_check_parts(parts), None)
        return message

    def _bound(self, binding: Binding | None) -> AssistantMessage:
        """This turn with ``binding`` attached (for receive, rebind and persistence)."""
        if binding is self.thinking_binding:
            return self
        message = AssistantMessage.__new__(AssistantMessage)
        message._set(self.parts, binding)
        object.__setattr__(message, "_digest", self._digest)
        return message

    @property
    def content(self) -> str:
        """The text; ``""`` when the model produced none."""
        return self.content_opt or ""

    @property
    def has_sealed_thinking(self) -> bool:
        return any(b.is_sealed for b in self.thinking)

    @property
    def has_sealed_parts(self) -> bool:
        """Sealed thinking, or a native block: a provider's own data that, like
        its thinking, holds only where the turn was produced. A turn with sealed
        parts is bound when received and replayed only while kept."""
        return self.has_sealed_thinking or any(isinstance(p, Native) for p in self.parts)

    @property
    def thinking_text(self) -> str:
        return "".join(b.text for b in self.thinking if isinstance(b, ThinkingBlock.Text))

    @property
    def is_well_formed(self) -> bool:
        return bool(self.content.strip()) or bool(self.tool_calls)

    def validate(self) -> AssistantMessage:
        if not self.is_well_formed:
            raise ValidationError(
                "AssistantMessage: needs non-blank content or at least one tool call (thinking alone is not a reply)",
                path="AssistantMessage",
            )
        return self

    def with_content(self, content: str | None) -> AssistantMessage:
        """The same object for the same content; otherwise a copy with this
        text, its thinking unsealed, unbound. Native blocks without text (a
        server tool's call and result) stay, in order, before the new text;
        those with text (cited text) were part of the content it replaces."""
        if content == self.content_opt:  # None == None, "x" == "x"; None != ""
            return self
        content = None if content is None else check_str(content, "AssistantMessage.content")
        natives = _content_parts(self.parts, keep_cited=False)
        text: tuple[str, ...] = () if content is None else (content,)
        return AssistantMessage._trusted(_layout(_unsealed_thinking(self.thinking), (*natives, *text), self.tool_calls))

    def with_tool_calls(self, tool_calls: Sequence[ToolCall]) -> AssistantMessage:
        """The same object for the same calls; otherwise a copy with these
        calls, its thinking unsealed, unbound; text and native blocks stay."""
        calls = _check_items(tool_calls, ToolCall, "AssistantMessage.tool_calls")
        if calls == self.tool_calls:
            return self
        check_parts(len(self.parts) - len(self.tool_calls) + len(calls), "AssistantMessage.parts")
        return AssistantMessage._trusted(_layout(_unsealed_thinking(self.thinking), _content_parts(self.parts), calls))

    def with_thinking(self, thinking: Sequence[ThinkingBlock] | str) -> AssistantMessage:
        """A copy with this thinking (sealed blocks allowed), unbound; text,
        native blocks and tool calls stay."""
        if isinstance(thinking, str):
            blocks: tuple[ThinkingBlock, ...] = (ThinkingBlock.Text(thinking),) if thinking else ()
        else:
            blocks = _check_items(thinking, ThinkingBlock, "AssistantMessage.thinking")
        check_parts(len(self.parts) - len(self.thinking) + len(blocks), "AssistantMessage.parts")
        return AssistantMessage._trusted(_layout(blocks, _content_parts(self.parts), self.tool_calls))

    def unsealed(self) -> AssistantMessage:
        """This turn with only its unsigned reasoning text: no signatures, redacted
        or opaque blocks, each native block replaced by its text (or left out),
        no binding. Parts keep their order (this is the form an unsealed turn
        goes out in, docs/fingerprint.md §6). The same object when there is
        nothing to drop."""
        cached = self._unsealed
        if cached is None:
            if not self.has_sealed_parts and self.thinking_binding is None:
                cached = self
            else:
                cached = AssistantMessage.__new__(AssistantMessage)
                cached._set(tuple(_unsealed_parts(self.parts)), None)
            object.__setattr__(self, "_unsealed", cached)
        return cached

    def _only_calls(self, answered: set[str]) -> AssistantMessage:
        """This turn without the tool calls whose id is not in ``answered``, nor
        any call repeating an id already kept; parts keep their order. Dropping
        a call unseals. The same object when every call stays."""
        if len(answered) == len(self.tool_calls):
            return self  # every call answered, and no id repeats (answered is a set of their ids)
        seen: set[str] = set()
        parts: list[Part] = []
        for part in self.parts:
            if isinstance(part, ToolCall):
                if part.id not in answered or part.id in seen:
                    continue
                seen.add(part.id)
            parts.append(part)
        if len(parts) == len(self.parts):
            return self
        message = AssistantMessage.__new__(AssistantMessage)
        message._set(tuple(_unsealed_parts(parts)), None)
        return message

    def _fields(self) -> dict[str, Any]:
        return {"content": self.content_opt, "tool_calls": self.tool_calls, "thinking": self.thinking}

    def to_dict(self) -> dict[str, Any]:
        binding = self.thinking_binding
        return {
            "role": "assistant",
            "parts": [_part_to_dict(p) for p in self.parts],
            "binding": None if binding is None else str(binding),
        }

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return (
            isinstance(other, AssistantMessage)
            and self.digest == other.digest
            and self.thinking_binding == other.thinking_binding
        )

    def __hash__(self) -> int:
        return hash((self.digest, self.thinking_binding))

    def __reduce__(self) -> tuple[Any, ...]:
        return (_restore_assistant, (self.parts, self.thinking_binding))

    def __repr__(self) -> str:
        fields = [f"content={self.content_opt!r}"]
        if self.tool_calls:
            fields.append(f"tool_calls={list(self.tool_calls)!r}")
        if self.thinking:
            fields.append(f"thinking={list(self.thinking)!r}")
        if self.thinking_binding is not None:
            fields.append(f"thinking_binding={self.thinking_binding!r}")
        return f"AssistantMessage({', '.join(fields)})"


def _restore_assistant(parts: Sequence[Part], binding: Binding | None) -> AssistantMessage:
    """Unpickling: a binding that does not fingerprint these very parts is dropped,
    so no pickle, however it was made, carries a binding across a change."""
    message = AssistantMessage.from_parts(parts)
    if binding is not None and isinstance(binding, Binding) and binding.turn == message.digest:
        message = message._bound(binding)
    return message


# -- dict form (docs/persistence.md) -----------------------------------------


# base64 is imported where it is used: it imports re, struct and binascii, a
# cost on ``import thinkseal`` for what only images and documents with data need.
def _b64(data: bytes) -> str:
    from base64 import b64encode  # noqa: PLC0415

    return b64encode(data).decode("ascii")


def _unb64(text: str, path: str) -> bytes:
    from base64 import b64decode  # noqa: PLC0415

    try:
        return b64decode(text, validate=True)
    except (ValueError, TypeError):
        raise ValidationError(f"{path}: not valid base64", path=path) from None


def content_part_to_dict(part: ContentPart | Part) -> dict[str, Any]:
    """One part's dict form (the parts of message content and of assistant turns
    share one vocabulary; docs/persistence.md)."""
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if isinstance(part, Image):
        if part.data is not None:
            return {"type": "image", "data": _b64(part.data), "media_type": part.media_type}
        return {"type": "image", "url": part.url, "media_type": part.media_type}
    if isinstance(part, Document):
        doc: dict[str, Any] = {"type": "document", "media_type": part.media_type}
        if part.data is not None:
            doc["data"] = _b64(part.data)
        elif part.url is not None:
            doc["url"] = part.url
        else:
            doc["text"] = part.text
        doc["title"] = part.title
        doc["citations"] = part.citations
        return doc
    if isinstance(part, Native):
        return {"type": "native", "provider": part.provider, "data": part.data, "text": part.text}
    if isinstance(part, CacheBreakpoint):
        return {"type": "cache_breakpoint", "ttl": part.ttl}
    return _part_to_dict(part)


def content_part_from_dict(data: object, path: str) -> ContentPart:
    try:
        return _content_part(Reader(data, path), path)
    except ValidationError as err:
        raise reroot(path, err) from err


def _content_part(r: Reader, path: str) -> ContentPart:
    kind = r.get("type", kind=str)
    if kind == "text":
        return str(r.get("text", kind=str))
    if kind == "image":
        raw = r.get("data", default=None, kind=(str, type(None)))
        return Image(
            data=None if raw is None else _unb64(raw, f"{path}.data"),
            media_type=r.get("media_type", default=None, kind=(str, type(None))),
            url=r.get("url", default=None, kind=(str, type(None))),
        )
    if kind == "document":
        raw = r.get("data", default=None, kind=(str, type(None)))
        return Document(
            data=None if raw is None else _unb64(raw, f"{path}.data"),
            url=r.get("url", default=None, kind=(str, type(None))),
            text=r.get("text", default=None, kind=(str, type(None))),
            title=r.get("title", default=None, kind=(str, type(None))),
            citations=r.get("citations", default=False, kind=bool),
            media_type=r.get("media_type", default=None, kind=(str, type(None))),
        )
    if kind == "native":
        return _native_from(r)
    if kind == "cache_breakpoint":
        return CacheBreakpoint(r.get("ttl", default=None, kind=(str, type(None))))
    raise ValidationError(f"{path}.type: unknown content part type {kind!r}", path=f"{path}.type")


def _native_from(r: Reader) -> Native:
    return Native(
        r.get("provider", kind=str), r.get("data", kind=str), r.get("text", default=None, kind=(str, type(None)))
    )


def content_to_dict(content: Content) -> str | list[dict[str, Any]]:
    return content if isinstance(content, str) else [content_part_to_dict(p) for p in content]


def content_from_dict(value: object, path: str) -> Content:
    if isinstance(value, str):
        return value
    if not isinstance(value, list):
        raise ValidationError(f"{path}: expected a string or a list of parts, got {type(value).__name__}", path=path)
    return tuple(content_part_from_dict(p, f"{path}[{i}]") for i, p in enumerate(value))


def _part_to_dict(part: Part) -> dict[str, Any]:
    if isinstance(part, str):
        return {"type": "text", "text": part}
    if isinstance(part, Native):
        return content_part_to_dict(part)
    if isinstance(part, ToolCall):
        return {"type": "tool_call", "id": part.id, "name": part.name, "arguments": part.arguments}
    if isinstance(part, ThinkingBlock.Text):
        return {"type": "thinking", "text": part.text, "signature": part.signature}
    if isinstance(part, ThinkingBlock.Redacted):
        return {"type": "redacted_thinking", "data": part.data}
    assert isinstance(part, ThinkingBlock.Opaque)
    return {"type": "opaque_thinking", "provider": part.provider, "data": part.data}


def _part_from_dict(data: object, path: str) -> Part:
    r = Reader(data, path)
    kind = r.get("type", kind=str)
    if kind == "text":
        return str(r.get("text", kind=str))
    if kind == "tool_call":
        return ToolCall(r.get("id", kind=str), r.get("name", kind=str), r.get("arguments", kind=dict))
    if kind == "thinking":
        return ThinkingBlock.Text(r.get("text", kind=str), r.get("signature", default=None, kind=(str, type(None))))
    if kind == "redacted_thinking":
        return ThinkingBlock.Redacted(r.get("data", kind=str))
    if kind == "opaque_thinking":
        return ThinkingBlock.Opaque(r.get("provider", kind=str), r.get("data", kind=str))
    if kind == "native":
        return _native_from(r)
    raise ValidationError(f"{path}.type: unknown part type {kind!r}", path=f"{path}.type")


def message_to_dict(message: Message) -> dict[str, Any]:
    """``message.to_dict()``: a JSON-ready dict of every field, binding included
    (the inverse of ``message_from_dict``)."""
    if not isinstance(message, Message):
        raise ValidationError(f"message: expected a Message, got {type(message).__name__}", path="message")
    return message.to_dict()


def message_from_dict(data: Mapping[str, Any], *, path: str = "$") -> Message:
    """The message written by ``Message.to_dict()``. ``ValidationError`` names the
    field of anything malformed, under ``path``. A stored binding is kept as
    stored, never re-derived: on an edited turn it no longer holds."""
    r = Reader(data, path)
    role = r.get("role", kind=str)
    try:
        if role in ("system", "user"):
            cls = SystemMessage if role == "system" else UserMessage
            return cls(content_from_dict(r.get("content", kind=(str, list)), f"{path}.content"))
        if role == "tool":
            return ToolMessage(
                content_from_dict(r.get("content", kind=(str, list)), f"{path}.content"),
                r.get("tool_call_id", kind=str),
                r.get("is_error", default=False, kind=bool),
            )
        if role == "assistant":
            raw_parts = r.get("parts", kind=list)
            parts = [_part_from_dict(p, f"{path}.parts[{i}]") for i, p in enumerate(raw_parts)]
            message = AssistantMessage.from_parts(parts)
            binding = r.get("binding", default=None, kind=(str, type(None)))
            return message if binding is None else message._bound(Binding.parse(binding))
    except ValidationError as err:
        raise reroot(path, err) from err
    raise ValidationError(f"{path}.role: unknown role {role!r}", path=f"{path}.role")
