"""What every provider adapter shares: ``Provider.prepare`` → ``PreparedRequest``
with ``receive`` and ``stream``, the response-path helpers, and the registry.

An adapter (one module per wire format) subclasses ``Provider`` and supplies:

- ``build(conversation, replay, model, options, stream) -> Built``: the body
  (from ``replay.sent_messages()``, and ``replay.last_turn()`` where the
  format checks the open turn), path and headers;
- ``parse(response) -> AssistantMessage``: an unbound reply from a response body;
- ``reply_info(response) -> ReplyInfo``: its stop reason, usage, id and model;
- ``new_stream() -> StreamParser``: an accumulator of streamed events, whose
  ``feed`` returns the typed deltas of each event.

The base binds replies to the request as it was sent, so no adapter can forget,
and never binds a partial (cut-off) stream.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from types import MappingProxyType
from typing import TYPE_CHECKING, Any, ClassVar, Final

from .._binding import Origin
from .._conversation import Conversation
from .._errors import ValidationError
from .._frozen import check_str
from .._json import frozen
from .._messages import AssistantMessage
from .._replay import Replay, ReplayReport
from .._reply import Delta, Reply, ReplyInfo
from ._connection import Connection
from ._sdk_objects import Response as SDKResponse
from ._sdk_objects import wire_dict

if TYPE_CHECKING:
    from ._wire import Body  # the adapters' shared-fragment bodies; not needed to import this module


# Every way out of a ``ReplayError`` an adapter can offer, as ``thinkseal.Client``'s
# ``on_replay_error`` names them: opt into the provider's dropping of blocks that
# do not verify, or send this request without thinking.
REPLAY_ERROR_WAYS: Final[tuple[str, ...]] = ("drop_block", "disable_thinking")

# Where Claude's errors name a wire turn: "messages.3.content.0: ..." (Bedrock:
# "messages.3"); the same text comes back through routers that relay them (OpenRouter).
WIRE_INDEX: Final = re.compile(r"\bmessages[.\[](\d+)")


class Built:
    """An adapter's output for one request (``content``: the encoded body, as
    bytes or as the shared pieces of a ``Body``; in ``body``, the member a
    ``Body`` splices in holds only its place, and is read from the bytes)."""

    __slots__ = ("body", "content", "headers", "path")

    def __init__(self, body: dict[str, Any], content: bytes | Body, path: str, headers: Mapping[str, str]) -> None:
        self.body = body
        self.content = content
        self.path = path
        self.headers = dict(headers)


class StreamParser:
    """Accumulates one streamed reply. ``feed`` returns the deltas the event
    produced, in order; ``finish`` returns the message unbound (or raises
    ``ResponseError`` when the stream is incomplete); ``info`` the metadata seen
    so far; ``partial`` what arrived, unsealed, or None when nothing did;
    ``ended`` whether the event that ends the reply has come (``finish`` no
    longer raises for a stream cut off; events after it may still carry
    metadata)."""

    def feed(self, event: Mapping[str, Any]) -> list[Delta]:
        raise NotImplementedError

    def ended(self) -> bool:
        raise NotImplementedError

    def finish(self) -> AssistantMessage:
        raise NotImplementedError

    def info(self) -> ReplyInfo:
        raise NotImplementedError

    def partial(self) -> AssistantMessage | None:
        raise NotImplementedError


class StreamAccumulator:
    """``PreparedRequest.stream()``: ``feed`` each event as the provider sends it
    (decoded from JSON) and relay the deltas it returns; then ``finish()`` for
    the bound reply message, and ``reply`` for the whole ``Reply``. A stream cut
    off before its end can still give ``partial()``: what arrived, never sealed
    or bound."""

    __slots__ = ("_history", "_parser", "_replay", "_reply")

    def __init__(self, parser: StreamParser, replay: Replay, history: Conversation) -> None:
        self._parser = parser
        self._replay = replay
        self._history = history
        self._reply: Reply | None = None

    def feed(self, event: SDKResponse) -> list[Delta]:
        if self._reply is not None:
            raise ValidationError("stream: feed() after finish()", path="stream")
        return self._parser.feed(wire_dict(event, "event"))

    def finish(self) -> AssistantMessage:
        """The reply message, bound to the request as sent (``ResponseError`` if
        the stream did not end properly)."""
        if self._reply is None:
            message = self._replay.bind(self._parser.finish())
            self._reply = Reply(message, self._parser.info(), history=self._history)
        return self._reply.message

    @property
    def reply(self) -> Reply:
        """The finished stream's ``Reply`` (calls ``finish()`` if needed)."""
        self.finish()
        assert self._reply is not None
        return self._reply

    def partial(self) -> AssistantMessage | None:
        """What arrived so far as an unbound, unsealed message (None if no text
        or tool call arrived): for a stream that was cut off."""
        message = self._parser.partial()
        return None if message is None else message.unsealed()


class PreparedRequest:
    """One request, ready to send: ``body``/``content``, ``path``, ``headers``,
    and the ``origin`` and ``report`` of its replay decision."""

    __slots__ = (
        "_body",
        "_encoded",
        "_frozen_body",
        "_history",
        "_provider",
        "_replay",
        "headers",
        "origin",
        "path",
        "report",
    )

    def __init__(self, provider: Provider, replay: Replay, built: Built, history: Conversation) -> None:
        self._provider = provider
        self._history = history
        self._replay = replay
        self._body = built.body
        self._frozen_body: dict[str, Any] | None = None
        self._encoded = built.content
        self.path = built.path
        self.headers = built.headers
        self.origin: Origin = replay.origin
        self.report: ReplayReport = replay.report

    @property
    def replay(self) -> Replay:
        """The replay decision this request was built from."""
        return self._replay

    @property
    def body(self) -> dict[str, Any]:
        """The request body, read-only: what ``content`` says, made on first
        access (a server that sends ``content`` never pays for it). The history
        in it is decoded from the encoded fragments, which are all the wire
        caches keep of it."""
        body = self._frozen_body
        if body is None:
            body = self._frozen_body = frozen(self._member(None))
        return body

    def _member(self, key: str | None) -> Any:
        """The body member ``key`` as built, not frozen (None: the whole body),
        decoding the history only when it is what is asked for: what reads one
        member (``interop``: the stream flag) need not decode the history."""
        built = self._body
        encoded = self._encoded
        if isinstance(encoded, bytes) or not encoded.field:
            return built if key is None else built.get(key)
        field = encoded.field
        if key is None:
            return {k: encoded.decoded_items() if k == field else v for k, v in built.items()}
        return encoded.decoded_items() if key == field else built.get(key)

    @property
    def content(self) -> bytes:
        """The body as compact UTF-8 JSON bytes, what goes on the wire. Joined
        from the shared per-message fragments on first access; an HTTP layer
        that can take pieces uses ``chunks()`` and ``content_length`` instead."""
        encoded = self._encoded
        return encoded if isinstance(encoded, bytes) else encoded.joined()

    @property
    def content_length(self) -> int:
        """``len(content)``, known without joining."""
        return len(self._encoded)

    def chunks(self) -> Iterator[bytes]:
        """``content`` in order, in pieces (about 64 KiB each) made from the
        shared fragments without joining the whole body."""
        encoded = self._encoded
        return iter((encoded,)) if isinstance(encoded, bytes) else encoded.chunks()

    def receive(self, response: SDKResponse) -> AssistantMessage:
        """The reply in ``response`` (the provider's JSON as decoded from HTTP,
        the official SDK's response object, or its ``model_dump()``), bound to
        this request as sent."""
        return self.parse(response).message

    def parse(self, response: SDKResponse) -> Reply:
        """The whole reply in ``response``: the bound message (what ``receive``
        returns), stop reason, usage, response id and served model."""
        response = wire_dict(response)
        message = self._replay.bind(self._provider.parse(response))
        return Reply(message, self._provider.reply_info(response), history=self._history)

    def stream(self) -> StreamAccumulator:
        return StreamAccumulator(self._provider.new_stream(), self._replay, self._history)

    def __repr__(self) -> str:
        return f"PreparedRequest(origin={self.origin!r}, path={self.path!r}, {self.content_length} bytes)"


def check_aliases(aliases: object) -> Mapping[str, str]:
    """``aliases`` (model id -> the name it is bound under) checked, as a
    read-only copy: non-blank ``str`` on both sides, and no chains (a name
    that is bound under another name would make the binding depend on order)."""
    if aliases is None:
        return MappingProxyType({})
    if not isinstance(aliases, Mapping):
        raise ValidationError(
            f"aliases: expected a mapping of model id to the name it is bound under, got {type(aliases).__name__}",
            path="aliases",
        )
    checked: dict[str, str] = {}
    for key, name in aliases.items():
        model = check_str(key, "aliases", blank_ok=False)
        checked[model] = check_str(name, f"aliases[{model!r}]", blank_ok=False)
    for model, name in checked.items():
        if checked.get(name, name) != name:
            raise ValidationError(
                f"aliases[{model!r}]: {name!r} is itself an alias of {checked[name]!r}; map each model id "
                "straight to the name it is bound under (no chains)",
                path=f"aliases[{model!r}]",
            )
    return MappingProxyType(checked)


class Provider:
    """Base of the adapters. ``thinkseal.provider(id, account=None, aliases=None)`` makes one.

    ``aliases`` maps a model id to the name its turns are bound under (off by
    default): the origin of a request for ``model`` is ``Origin(id,
    aliases.get(model, model), account)``, while the body carries ``model``."""

    id: ClassVar[str]
    # How the provider is reached over HTTP (``thinkseal.Client``); not used by ``prepare``.
    connection: ClassVar[Connection]
    # The ways out of a ``ReplayError`` this adapter offers (``on_replay_error``:
    # a subset of ``REPLAY_ERROR_WAYS``); none for adapters that raise none.
    replay_error_ways: ClassVar[tuple[str, ...]] = ()

    def __init__(self, account: str | None = None, aliases: Mapping[str, str] | None = None) -> None:
        self.account = account
        self.aliases = check_aliases(aliases)

    def prepare(
        self, conversation: Conversation, *, model: str, stream: bool = False, **options: Any
    ) -> PreparedRequest:
        """The request that sends ``conversation`` to ``model``, thinking replayed
        where the replay decision keeps it. ``options`` use the provider's own
        field names and are merged into the body after validation."""
        if not isinstance(conversation, Conversation):
            raise ValidationError("conversation: expected a Conversation", path="conversation")
        if not isinstance(stream, bool):
            raise ValidationError("stream: expected bool", path="stream")
        bound_as = self.aliases.get(model, model) if isinstance(model, str) else model
        origin = Origin(self.id, bound_as, self.account)
        replay = conversation.replay(origin)
        built = self.build(conversation, replay, model, dict(options), stream)
        if replay.log.source is not None:  # loaded lazily from a store: keep what was mapped (store/_lazy.py)
            replay.log.source.after_prepare(replay)
        return PreparedRequest(self, replay, built, conversation)

    # -- adapter hooks ---------------------------------------------------------

    def build(
        self, conversation: Conversation, replay: Replay, model: str, options: dict[str, Any], stream: bool
    ) -> Built:
        raise NotImplementedError

    def parse(self, response: Mapping[str, Any]) -> AssistantMessage:
        raise NotImplementedError

    def resolve_replay_error(self, options: Mapping[str, Any], way: str) -> dict[str, Any]:
        """``options`` changed to take the ``way`` out of a ``ReplayError`` (see
        ``thinkseal.Client``'s ``on_replay_error``). Only adapters that raise
        ``ReplayError`` have ways out (``replay_error_ways``)."""
        raise ValidationError(f"{self.id} raises no ReplayError; there is nothing to resolve", path="on_replay_error")

    def rejected_turn(self, replay: Replay, message: str) -> int | None:
        """After the provider answered the request ``replay`` decided with HTTP
        400 and ``message``: the index of the turn to unseal and send again
        without, or None when ``message`` is not the provider's documented
        rejection of replayed thinking (``connection.rejections``) or nothing
        went out sealed. The turn the message names (``named_turn``) when it
        names a kept one, else the first kept turn: every later turn bound over
        it is unsealed with it. (The client and the gateway both ask this.)"""
        if not self.connection.rejects_thinking(message):
            return None
        kept = [entry.index for entry in replay.report if entry.kept]
        if not kept:
            return None
        named = self.named_turn(replay, message)
        return named if named in kept else kept[0]

    def named_turn(self, replay: Replay, message: str) -> int | None:
        """The conversation index of the turn a rejection ``message`` names, for
        a provider whose errors name one (Claude's ``messages.N``); None here."""
        return None

    def reply_info(self, response: Mapping[str, Any]) -> ReplyInfo:
        raise NotImplementedError

    def new_stream(self) -> StreamParser:
        raise NotImplementedError

    def __repr__(self) -> str:
        extra = f", account={self.account!r}" if self.account else ""
        if self.aliases:
            extra += f", aliases={dict(self.aliases)!r}"
        return f"thinkseal.provider({self.id!r}{extra})"
