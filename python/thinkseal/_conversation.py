"""``Conversation``: an immutable history plus the request context, with the
replay caches that make a request after k new messages cost O(k) hashing."""

from __future__ import annotations

import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any, overload

from . import _core
from ._binding import FINGERPRINT_VERSION, Binding, Origin
from ._errors import ValidationError
from ._frozen import Frozen, check_sequence
from ._json import freeze_json, require_object
from ._messages import AssistantMessage, Message, SystemMessage
from ._replay import (
    Replay,
    ReplayReport,
    ReplayStore,
    prefix_digest,
    settled_end,
    walk,
)
from ._tool import Tool


class _Log:
    """An append-only list of messages shared by conversations derived by
    appending; each conversation reads only its own prefix of it."""

    __slots__ = ("items", "lock")

    def __init__(self, items: list[Message]) -> None:
        self.items = items
        self.lock = threading.Lock()


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
        "_systems",
        "response_format",
        "tools",
    )
    tools: tuple[Tool, ...]
    response_format: Mapping[str, Any] | None
    _log: _Log
    _len: int
    _rf_jcs: bytes | None
    _systems: tuple[str, ...]
    _context: bytes | None
    _messages: tuple[Message, ...] | None
    _replay: dict[Origin, tuple[ReplayStore, int]]

    def __init__(
        self,
        messages: Sequence[Message] = (),
        tools: Sequence[Tool] = (),
        response_format: Mapping[str, object] | None = None,
    ) -> None:
        items = _check_messages(messages)
        rf, rf_jcs = _check_response_format(response_format)
        self._setup(_Log(items), len(items), _check_tools(tools), rf, rf_jcs, None, {})

    def _setup(
        self,
        log: _Log,
        length: int,
        tools: tuple[Tool, ...],
        rf: Mapping[str, Any] | None,
        rf_jcs: bytes | None,
        systems: tuple[str, ...] | None,
        replay: dict[Origin, tuple[ReplayStore, int]],
    ) -> None:
        if systems is None:
            systems = tuple(m.content for m in log.items[:length] if isinstance(m, SystemMessage))
        self._init(
            _log=log,
            _len=length,
            tools=tools,
            response_format=rf,
            _rf_jcs=rf_jcs,
            _systems=systems,
            _context=None,
            _messages=None,
            _replay=replay,
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
                log = _Log(log.items[: self._len] + new)
        new_systems = tuple(m.content for m in new if isinstance(m, SystemMessage))
        child = Conversation.__new__(Conversation)
        child._setup(
            log,
            self._len + len(new),
            self.tools,
            self.response_format,
            self._rf_jcs,
            self._systems + new_systems,
            {} if new_systems else dict(self._replay),
        )
        if not new_systems:
            object.__setattr__(child, "_context", self._context)
        return child

    def with_messages(self, messages: Sequence[Message]) -> Conversation:
        """The same tools and response format with other messages. Replay caches
        are kept for the leading messages that are the very same objects."""
        items = _check_messages(messages)
        child = Conversation.__new__(Conversation)
        child._setup(_Log(items), len(items), self.tools, self.response_format, self._rf_jcs, None, {})
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
            caches = {o: (store, min(n, reusable)) for o, (store, n) in self._replay.items()}
            object.__setattr__(child, "_replay", caches)
        return child

    def with_tools(self, tools: Sequence[Tool]) -> Conversation:
        child = Conversation.__new__(Conversation)
        child._setup(self._log, self._len, _check_tools(tools), self.response_format, self._rf_jcs, self._systems, {})
        return child

    def with_response_format(self, response_format: Mapping[str, object] | None) -> Conversation:
        rf, rf_jcs = _check_response_format(response_format)
        child = Conversation.__new__(Conversation)
        child._setup(self._log, self._len, self.tools, rf, rf_jcs, self._systems, {})
        return child

    @property
    def system_prompts(self) -> tuple[str, ...]:
        """The contents of every system message, in order (for providers with a
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
        context = self.context_digest
        items = self._log.items
        total = self._len
        store, have = self._replay.get(origin) or (ReplayStore(origin, context), 0)
        if store.context != context:
            store, have = ReplayStore(origin, context), 0
        settled = settled_end(items, total)
        if store.log is self._log:
            # Entries a longer conversation on this same log already decided.
            have = max(have, min(len(store), settled))
        have = min(have, settled)
        if have < settled:
            done = walk(items, have, settled, total, store.chain_before(have), origin, context)
            store = store.extend(have, self._log, done.chain, done.codes, done.turns)
            have = settled
        self._replay[origin] = (store, have)
        tail = walk(items, settled, total, total, store.chain_before(settled), origin, context, keep_sent=True)
        chain_end = bytes(tail.chain[-32:]) if total > settled else store.chain_before(settled)
        report = ReplayReport(
            store, settled, list(zip(tail.turns, (tail.codes[i - settled] for i in tail.turns), strict=True))
        )
        return Replay(items, total, origin, context, report, settled, tail.sent, chain_end)

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
        context = self.context_digest
        items = list(self)
        total = len(items)
        chain, walked_to = _core.CHAIN_START, 0
        for i, message in enumerate(items):
            if isinstance(message, AssistantMessage) and message.has_sealed_thinking:
                # Chain the messages since the last sealed turn the way they go out
                # (earlier turns are already rebound, so they go out sealed).
                done = walk(items, walked_to, i, total, chain, origin, context)
                if done.chain:
                    chain = bytes(done.chain[-32:])
                walked_to = i
                binding = Binding(origin, FINGERPRINT_VERSION, prefix_digest(origin, context, chain), message.digest)
                items[i] = message._bound(binding)
        return self.with_messages(items)

    # -- persistence ---------------------------------------------------------

    def to_json(self) -> str:
        """Versioned JSON of every field, thinking and bindings included (docs/persistence.md)."""
        from ._persist import conversation_to_json

        return conversation_to_json(self)

    @classmethod
    def from_json(cls, text: str | bytes) -> Conversation:
        from ._persist import conversation_from_json

        return conversation_from_json(text)
