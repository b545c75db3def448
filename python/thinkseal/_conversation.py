"""``Conversation``: an immutable history plus the request context, with the
replay caches that make a request after k new messages cost O(k) hashing."""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

from . import _core
from ._binding import Origin
from ._errors import ValidationError
from ._frozen import Frozen, check_sequence
from ._json import freeze_json, require_object
from ._limits import check_body
from ._load import decode_stored, messages_of
from ._messages import Message, SystemMessage
from ._reader import Reader, reroot
from ._replay import MessageLog, Replay, ReplayCaches, ReplayReport, decide_replay
from ._tool import Tool, tool_from_dict, tool_to_dict
from ._walk import rebind_messages, settled_after, settled_end


def _check_messages(messages: object, start: int = 0) -> list[Message]:
    values = check_sequence(messages, "Conversation.messages")
    for i, m in enumerate(values):
        if not isinstance(m, Message):
            raise ValidationError(
                f"Conversation.messages[{start + i}]: expected a Message, got {type(m).__name__}",
                path=f"Conversation.messages[{start + i}]",
            )
    return list(values)


def _check_tools(tools: object) -> tuple[Tool, ...]:
    values = check_sequence(tools, "Conversation.tools")
    for i, t in enumerate(values):
        if not isinstance(t, Tool):
            raise ValidationError(
                f"Conversation.tools[{i}]: expected Tool, got {type(t).__name__}", path=f"Conversation.tools[{i}]"
            )
    return values


def _check_response_format(fmt: object) -> tuple[Mapping[str, Any] | None, bytes | None]:
    if fmt is None:
        return None, None
    require_object(fmt, "Conversation.response_format")
    frozen, canonical = freeze_json(fmt, "Conversation.response_format")
    if not isinstance(frozen.get("type"), str):
        raise ValidationError(
            'Conversation.response_format.type: expected a string such as "json_object" or "json_schema"',
            path="Conversation.response_format.type",
        )
    return frozen, canonical


# The stored format (docs/persistence.md): `format` names it and `version` is
# this release's format version; from_json reads every version from 1 to it.
FORMAT = "thinkseal.conversation"
# 2: content parts, native blocks, cache breakpoints (a version 1 document is read as it is).
FORMAT_VERSION = 2


class Conversation(Frozen):
    """Messages (system messages included, wherever they stand), tools and an
    optional response format (OpenAI chat-completions shape). Immutable: the
    ``append`` and ``with_*`` methods return new conversations."""

    __slots__ = (
        "_context",
        "_len",
        "_log",
        "_messages",
        "_replay",
        "_rf_jcs",
        "_settled",
        "_system_messages",
        "_systems",
        "response_format",
        "tools",
    )
    tools: tuple[Tool, ...]
    response_format: Mapping[str, Any] | None
    _log: MessageLog
    _len: int
    _rf_jcs: bytes | None
    _settled: int | None
    _system_messages: tuple[SystemMessage, ...]
    _systems: tuple[str, ...]
    _context: bytes | None
    _messages: tuple[Message, ...] | None
    _replay: ReplayCaches

    def __init__(
        self,
        messages: Sequence[Message] = (),
        tools: Sequence[Tool] = (),
        response_format: Mapping[str, object] | None = None,
    ) -> None:
        items = _check_messages(messages)
        rf, rf_jcs = _check_response_format(response_format)
        self._setup(MessageLog(items), len(items), _check_tools(tools), rf, rf_jcs, None, {})

    def _setup(
        self,
        log: MessageLog,
        length: int,
        tools: tuple[Tool, ...],
        rf: Mapping[str, Any] | None,
        rf_jcs: bytes | None,
        systems: tuple[SystemMessage, ...] | None,
        replay: ReplayCaches,
    ) -> None:
        if systems is None:
            systems = tuple(m for m in log.items[:length] if isinstance(m, SystemMessage))
        self._init(
            _log=log,
            _len=length,
            tools=tools,
            response_format=rf,
            _rf_jcs=rf_jcs,
            _system_messages=systems,
            _systems=tuple(m.text for m in systems),
            _context=None,
            _messages=None,
            _replay=replay,
            _settled=None,
        )

    # -- sequence protocol -------------------------------------------------

    @property
    def messages(self) -> tuple[Message, ...]:
        cached: tuple[Message, ...] | None = self._messages
        if cached is None:
            cached = tuple(self._log.items[: self._len])
            object.__setattr__(self, "_messages", cached)
        return cached

    def __len__(self) -> int:
        return self._len

    @overload
    def __getitem__(self, i: int) -> Message: ...
    @overload
    def __getitem__(self, i: slice) -> tuple[Message, ...]: ...
    def __getitem__(self, i: int | slice) -> Message | tuple[Message, ...]:
        if isinstance(i, slice):
            return self.messages[i]
        if i < 0:
            i += self._len
        if not 0 <= i < self._len:
            raise IndexError("conversation index out of range")
        return self._log.items[i]

    def __iter__(self) -> Iterator[Message]:
        items = self._log.items
        for i in range(self._len):
            yield items[i]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Conversation):
            return NotImplemented
        return (
            self._len == other._len
            and self.tools == other.tools
            and self._rf_jcs == other._rf_jcs
            and all(a == b for a, b in zip(self, other, strict=True))
        )

    def __hash__(self) -> int:
        return hash((self._len, self.tools, self._rf_jcs, self._len and self[-1]))

    def __reduce__(self) -> tuple[Any, ...]:
        return (Conversation.from_json, (self.to_json(),))

    def __repr__(self) -> str:
        return f"Conversation(<{self._len} messages>, tools={[t.name for t in self.tools]!r})"

    # -- derivation --------------------------------------------------------

    def append(self, *messages: Message) -> Conversation:
        """This conversation with ``messages`` added at the end. Shares this one's
        storage and replay caches, so it costs O(len(messages))."""
        new = _check_messages(messages, self._len)
        log = self._log
        with log.lock:
            if len(log.items) == self._len:
                log.items.extend(new)
            else:  # another conversation already appended to this prefix: branch
                branch = log.items[: self._len]
                branch += new
                log = MessageLog(branch)
        new_systems = tuple(m for m in new if isinstance(m, SystemMessage))
        child = Conversation.__new__(Conversation)
        child._setup(
            log,
            self._len + len(new),
            self.tools,
            self.response_format,
            self._rf_jcs,
            self._system_messages + new_systems,
            {} if new_systems else self._replay.copy(),
        )
        if not new_systems:
            object.__setattr__(child, "_context", self._context)
        if self._settled is not None:  # kept incremental: a tool loop answered result by result stays linear
            settled = settled_after(log.items, self._len, self._settled, child._len)
            object.__setattr__(child, "_settled", settled)
        return child

    def with_messages(self, messages: Sequence[Message]) -> Conversation:
        """The same tools and response format with other messages. Replay caches
        are kept for the leading messages that are the very same objects."""
        items = _check_messages(messages)
        child = Conversation.__new__(Conversation)
        child._setup(MessageLog(items), len(items), self.tools, self.response_format, self._rf_jcs, None, {})
        if child._systems == self._systems:
            object.__setattr__(child, "_context", self._context)
            same = 0
            old = self._log.items
            limit = min(self._len, len(items))
            while same < limit and items[same] is old[same]:
                same += 1
            # Decisions before `same` are reused only where the tool runs they
            # looked ahead into lie wholly before `same` too.
            reusable = settled_end(items, same)
            # copy() is atomic, so a replay() for another origin in another thread
            # cannot change the dict while it is read.
            caches = {o: (store, min(n, reusable)) for o, (store, n) in self._replay.copy().items()}
            object.__setattr__(child, "_replay", caches)
        return child

    def with_tools(self, tools: Sequence[Tool]) -> Conversation:
        child = Conversation.__new__(Conversation)
        child._setup(
            self._log, self._len, _check_tools(tools), self.response_format, self._rf_jcs, self._system_messages, {}
        )
        return child

    def with_response_format(self, response_format: Mapping[str, object] | None) -> Conversation:
        rf, rf_jcs = _check_response_format(response_format)
        child = Conversation.__new__(Conversation)
        child._setup(self._log, self._len, self.tools, rf, rf_jcs, self._system_messages, {})
        return child

    @property
    def system_messages(self) -> tuple[SystemMessage, ...]:
        """Every system message, in order (with their cache breakpoints)."""
        return self._system_messages

    @property
    def system_prompts(self) -> tuple[str, ...]:
        """The text of every system message, in order (for providers with a
        single top-level system field)."""
        return self._systems

    # -- fingerprint and replay ---------------------------------------------

    @property
    def context_digest(self) -> bytes:
        """The digest of everything a sealed turn depends on besides its prefix:
        every system message, the tools and the response format."""
        cached: bytes | None = self._context
        if cached is None:
            tools = [(t.name, t.description, t._parameters_jcs) for t in self.tools]
            cached = _core.context_digest(list(self._systems), tools, self._rf_jcs)
            object.__setattr__(self, "_context", cached)
        return cached

    def replay(self, origin: Origin) -> Replay:
        """The replay decision for sending this conversation to ``origin``."""
        if not isinstance(origin, Origin):
            raise ValidationError("origin: expected an Origin", path="origin")
        source = self._log.source
        if source is not None and origin not in self._replay:  # loaded lazily: the stored decisions first
            source.restore(self, origin)
        settled = self._settled
        if settled is None:
            settled = settled_end(self._log.items, self._len)
            object.__setattr__(self, "_settled", settled)
        return decide_replay(self._log, self._len, settled, self._replay, origin, self.context_digest)

    def replay_report(self, origin: Origin) -> ReplayReport:
        """Shorthand for ``self.replay(origin).report``."""
        return self.replay(origin).report

    def rebind(self, origin: Origin) -> Conversation:
        """Bind every turn with sealed thinking to its present prefix under ``origin``.

        The explicit escape hatch for history imported from elsewhere (or bound
        under an older fingerprint version) whose caller vouches that it is
        unchanged. Nothing calls it implicitly.
        """
        if not isinstance(origin, Origin):
            raise ValidationError("origin: expected an Origin", path="origin")
        return self.with_messages(rebind_messages(self.messages, origin, self.context_digest))

    # -- persistence (docs/persistence.md) --------------------------------------

    def to_json(self) -> str:
        """Versioned JSON of every field, thinking and bindings included (docs/persistence.md)."""
        document = {
            "format": FORMAT,
            "version": FORMAT_VERSION,
            "messages": [m.to_dict() for m in self],
            "tools": [tool_to_dict(t) for t in self.tools],
            "response_format": self.response_format,
        }
        import json  # noqa: PLC0415 - not on import thinkseal's path

        return json.dumps(document, ensure_ascii=False, separators=(",", ":"))

    @classmethod
    def from_json(cls, text: str | bytes) -> Conversation:
        """The conversation written by ``to_json`` (by this or an earlier release).
        ``ValidationError`` names the path of anything malformed; stored bindings
        are kept as stored, never re-derived."""
        if not isinstance(text, (str, bytes, bytearray)):
            raise ValidationError(f"$: expected JSON text, got {type(text).__name__}", path="$")
        check_body(len(text), "$")
        document = decode_stored(text)
        r = Reader(document, "$")
        if r.get("format", kind=str) != FORMAT:
            raise ValidationError(f"$.format: expected {FORMAT!r}", path="$.format")
        version = r.get("version", kind=int)
        if not 1 <= version <= FORMAT_VERSION:
            raise ValidationError(
                f"$.version: format version {version} is not supported (this release reads 1..{FORMAT_VERSION})",
                path="$.version",
            )
        messages = messages_of(r.get("messages", kind=list), "$.messages")
        tools = [tool_from_dict(t, f"$.tools[{i}]") for i, t in enumerate(r.get("tools", default=[], kind=list))]
        response_format = r.get("response_format", default=None, kind=(dict, type(None)))
        try:
            return stored_conversation(MessageLog(messages), tools, response_format)
        except ValidationError as err:
            raise reroot("$", err) from err


def stored_conversation(
    log: MessageLog,
    tools: Sequence[Tool],
    response_format: Mapping[str, object] | None,
    systems: tuple[SystemMessage, ...] | None = None,
) -> Conversation:
    """A conversation of every message of ``log`` (messages all: they are not
    checked again), whose system messages are ``systems`` (a lazily loaded log
    is not read to find them: ``store/_lazy.py``), found in the log when None."""
    rf, rf_jcs = _check_response_format(response_format)
    conversation = Conversation.__new__(Conversation)
    conversation._setup(log, len(log.items), _check_tools(tools), rf, rf_jcs, systems, {})
    return conversation
