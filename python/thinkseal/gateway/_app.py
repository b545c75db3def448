"""The gateway as an ASGI application (``thinkseal.gateway.app(config)``).

Per request to a route's provider API: read the body, import it
(``_surfaces``), attach it to the ledger, make the replay decision for the
upstream it goes to, edit the body in place where a turn goes out unsealed
(``_edit``), forward it, relay the answer to the client as it arrives, and
bind and record the reply from what was relayed. Anything else under a route's
prefix is forwarded to that route's upstream as it is; nothing else is
reachable. ``/healthz`` and ``/metrics`` are the gateway's own.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping
from typing import Any

from .._binding import Origin
from .._conversation import Conversation
from .._errors import ThinksealError, ValidationError
from .._messages import AssistantMessage
from .._replay import Replay
from ..ledger import AsyncLedger, Attached, Recognition, open_async_ledger
from ..ledger._backend import BackendError
from ._config import Config, Route
from ._edit import edited, replaced_member
from ._held import HeldConversations
from ._metrics import Metrics
from ._sigv4 import resigned, upstream_credential
from ._surfaces import BodyError, Incoming, Surface, surface_of

log = logging.getLogger("thinkseal.gateway")

Scope = Mapping[str, Any]
Receive = Callable[[], Awaitable[Mapping[str, Any]]]
Send = Callable[[Mapping[str, Any]], Awaitable[None]]

# Not forwarded either way: they describe one connection, not the request.
_HOP_BY_HOP = frozenset(
    {"connection", "keep-alive", "proxy-connection", "transfer-encoding", "te", "trailer", "upgrade", "host"}
)
# Not forwarded upstream: what describes the client's side of the gateway (its cookies,
# the addresses of the proxies before it), which a provider has no use for.
_CLIENT_SIDE = frozenset({"cookie", "forwarded", "x-real-ip"})
# Credentials a client may send, one per provider auth kind.
_CREDENTIAL_HEADERS = ("authorization", "x-api-key", "x-goog-api-key")
_TOKEN_HEADER = "x-thinkseal-token"
# On every answer the gateway did not decide a history for (its own, a refusal,
# a request passed through): a client reads the headers without special cases.
_NONE_DECIDED = ((b"thinkseal-kept", b"0"), (b"thinkseal-unsealed", b"0"))


class Refusal(Exception):
    """An answer the gateway gives itself: ``status`` and a JSON ``body``."""

    def __init__(self, status: int, message: str, kind: str = "invalid_request_error") -> None:
        super().__init__(message)
        self.status = status
        self.message = message
        self.kind = kind

    def body(self) -> bytes:
        return json.dumps({"type": "error", "error": {"type": self.kind, "message": self.message}}).encode()


def open_ledger(config: Config) -> AsyncLedger:
    if config.ledger_namespace is not None and config.ledger.startswith(("postgres://", "postgresql://")):
        return AsyncLedger.postgres(config.ledger, schema=config.ledger_namespace, secret=config.ledger_secret)
    if config.ledger_namespace is not None and config.ledger.startswith(("redis://", "rediss://")):
        prefix = f"{config.ledger_namespace}:"
        return AsyncLedger.redis(config.ledger, prefix=prefix, secret=config.ledger_secret)
    return open_async_ledger(config.ledger, secret=config.ledger_secret)


def account_of(key: bytes, credential: str | None) -> str | None:
    """The account a credential stands for: a keyed hash of it, never the credential."""
    if not credential:
        return None
    return "k" + hashlib.blake2b(credential.encode(), key=key[:64], digest_size=12).hexdigest()


class Decision:
    """What the gateway decided for one request: the body to send, the replay
    behind it, and the counts its answer reports."""

    __slots__ = ("attached", "body", "incoming", "kept", "origin", "raw", "reasons", "replay", "unsealed")

    def __init__(
        self,
        raw: bytes,
        body: bytes,
        incoming: Incoming,
        attached: Attached,
        replay: Replay,
        origin: Origin,
        kept: int,
        unsealed: int,
        reasons: dict[str, int],
    ) -> None:
        self.raw = raw  # as the client sent it
        self.body = body
        self.incoming = incoming
        self.attached = attached
        self.replay = replay
        self.origin = origin
        self.kept = kept
        self.unsealed = unsealed
        self.reasons = reasons

    def headers(self) -> list[tuple[bytes, bytes]]:
        out = [(b"thinkseal-kept", str(self.kept).encode()), (b"thinkseal-unsealed", str(self.unsealed).encode())]
        if self.reasons:
            text = ",".join(f"{reason}={count}" for reason, count in sorted(self.reasons.items()))
            out.append((b"thinkseal-reasons", text.encode()))
        return out


class Gateway:
    """The ASGI application. ``config``: a ``Config``."""

    def __init__(self, config: Config) -> None:
        self.config = config
        self.metrics = Metrics()
        self._ledger: AsyncLedger | None = None
        self._http: Any = None
        self._surfaces: dict[str, Surface] = {}
        self._held: dict[str, HeldConversations] = {}
        for route in config.routes:
            from ..providers import provider  # noqa: PLC0415

            self._surfaces[route.prefix] = surface_of(provider(route.provider), config.read_cache_bytes)
            self._held[route.prefix] = HeldConversations()

    # -- lifecycle -------------------------------------------------------------------------

    async def _open(self) -> None:
        if self._http is None:
            import httpx  # noqa: PLC0415

            self._http = httpx.AsyncClient(follow_redirects=False, timeout=self.config.timeout)
        if self._ledger is None:
            self._ledger = open_ledger(self.config)

    async def close(self) -> None:
        if self._http is not None:
            await self._http.aclose()
            self._http = None
        if self._ledger is not None:
            await self._ledger.close()
            self._ledger = None

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            await self._lifespan(receive, send)
        elif scope["type"] == "http":
            await self._open()
            await self._http_request(scope, receive, send)

    async def _lifespan(self, receive: Receive, send: Send) -> None:
        while True:
            message = await receive()
            if message["type"] == "lifespan.startup":
                try:
                    await self._open()
                except (ThinksealError, OSError) as err:
                    await send({"type": "lifespan.startup.failed", "message": str(err)})
                    return
                await send({"type": "lifespan.startup.complete"})
            elif message["type"] == "lifespan.shutdown":
                await self.close()
                await send({"type": "lifespan.shutdown.complete"})
                return

    # -- one request -----------------------------------------------------------------------

    async def _http_request(self, scope: Scope, receive: Receive, send: Send) -> None:
        path: str = scope["path"]
        started = time.perf_counter()
        if path == "/healthz":
            await _answer(send, 200, b'{"status":"ok"}', [(b"content-type", b"application/json")])
            return
        if path == "/metrics":
            await _answer(send, 200, self.metrics.render().encode(), [(b"content-type", b"text/plain; version=0.0.4")])
            return
        unsafe = _unsafe_path(scope)
        if unsafe is not None:
            await _refuse(send, Refusal(400, unsafe))
            return
        found = self.config.route_of(path)
        if found is None:
            await _refuse(send, Refusal(404, f"no route serves {path!r}", "not_found_error"))
            return
        route, provider_path = found
        headers = _headers(scope)
        try:
            credential = self._authorise(route, headers)
            raw = await _read_body(receive, self.config.max_body, headers, self.config.timeout)
            surface = self._surfaces[route.prefix]
            served = scope["method"] == "POST" and surface.serves(provider_path)
            decision = await self._decide(route, surface, raw, provider_path, credential) if served else None
        except Refusal as refusal:
            self.metrics.count("requests", route=route.prefix, status=str(refusal.status))
            await _refuse(send, refusal)
            return
        upstream_headers = self._upstream_headers(route, surface, headers)
        if decision is not None and decision.origin.model != decision.incoming.model:
            provider_path = surface.upstream_path(provider_path, decision.incoming, decision.origin.model)
        url = route.upstream + provider_path + (("?" + scope["query_string"].decode()) if scope["query_string"] else "")
        body = raw if decision is None else decision.body
        status = await self._forward(scope["method"], url, upstream_headers, body, decision, route, surface, send)
        elapsed = time.perf_counter() - started
        self.metrics.count("requests", route=route.prefix, status=str(status))
        self.metrics.observe("request_seconds", elapsed, route=route.prefix)
        log.info(
            json.dumps(
                {
                    "route": route.prefix,
                    "provider": route.provider,
                    "path": provider_path,
                    "status": status,
                    "kept": None if decision is None else decision.kept,
                    "unsealed": None if decision is None else decision.unsealed,
                    "reasons": None if decision is None else decision.reasons,
                    "model": None if decision is None else decision.origin.model,
                    "bytes_in": len(raw),
                    "ms": round(elapsed * 1000, 2),
                }
            )
        )

    def _authorise(self, route: Route, headers: Mapping[str, str]) -> str | None:
        """Check the client's token (when tokens are configured) and return the
        credential the upstream request carries (the route's key, or the
        client's own)."""
        tokens = self.config.client_tokens
        client_credential = _credential(headers)
        if tokens:
            presented = headers.get(_TOKEN_HEADER) or (client_credential if route.api_key else None)
            if presented not in tokens:
                raise Refusal(401, "a valid gateway token is required", "authentication_error")
        try:
            return upstream_credential(route, headers, client_credential)
        except ValidationError as err:  # a credential the gateway cannot send on (an AWS signature)
            raise Refusal(401, str(err), "authentication_error") from None

    def _upstream_headers(self, route: Route, surface: Surface, headers: Mapping[str, str]) -> dict[str, str]:
        out = {
            k: v
            for k, v in headers.items()
            if k not in _HOP_BY_HOP
            and k not in _CLIENT_SIDE
            and not k.startswith("x-forwarded-")
            and k not in ("content-length", "accept-encoding", _TOKEN_HEADER)
        }
        out["accept-encoding"] = "identity"  # relayed as it comes, and read as it goes by
        if route.api_key:
            for name in _CREDENTIAL_HEADERS:
                out.pop(name, None)
            auth = surface.adapter.connection.auth  # the route's adapter, made once
            if auth == "x-api-key":
                out["x-api-key"] = route.api_key
            elif auth == "x-goog-api-key":
                out["x-goog-api-key"] = route.api_key
            else:
                out["authorization"] = f"Bearer {route.api_key}"
        return out

    async def _decide(
        self, route: Route, surface: Surface, raw: bytes, path: str, credential: str | None
    ) -> Decision | None:
        """The body to send for a provider API request, or None when the body is
        not one thinkseal reads (it is then forwarded as it came, and said so)."""
        try:
            incoming = surface.read_body(raw, path)
        except BodyError as err:
            raise Refusal(400, str(err)) from None
        except ValidationError as err:
            log.warning(json.dumps({"route": route.prefix, "not_read": err.path or "body"}))
            self.metrics.count("passed_through", route=route.prefix)
            return None
        account = account_of(self.config.account_key, credential)
        model = route.models.get(incoming.model, incoming.model)
        origin = Origin(route.provider, model, account)
        attached = await self._attach(incoming.conversation, account, self._held[route.prefix])
        replay, edits, counts = self._edits(attached, origin, surface, incoming)
        body = _body(raw, incoming, edits, model, surface)
        kept, unsealed, reasons = counts
        self.metrics.count("turns_kept", kept, route=route.prefix)
        for reason, n in reasons.items():
            self.metrics.count("turns_unsealed", n, route=route.prefix, reason=reason)
        return Decision(raw, body, incoming, attached, replay, origin, kept, unsealed, reasons)

    async def _attach(self, conversation: Conversation, account: str | None, held: HeldConversations) -> Attached:
        assert self._ledger is not None
        attached = await self._ledger.attach(conversation, account=account)
        return Attached(held.resume(attached.conversation), attached.turns)

    def _edits(
        self, attached: Attached, origin: Origin, surface: Surface, incoming: Incoming
    ) -> tuple[Replay, dict[int, object | None], tuple[int, int, dict[str, int]]]:
        """The replay decision for ``origin``, the wire elements to replace, and
        the counts (kept, unsealed, per reason) of the turns with sealed parts."""
        conversation = attached.conversation
        unknown = {t.index for t in attached.turns if t.status is Recognition.UNKNOWN}
        keep_unknown = self.config.unknown_seals == "keep"
        replay = conversation.replay(origin)
        edits: dict[int, object | None] = {}
        kept = 0
        reasons: dict[str, int] = {}
        for entry in replay.report:
            turn = conversation[entry.index]
            assert isinstance(turn, AssistantMessage)
            if entry.kept or (keep_unknown and entry.index in unknown):
                kept += 1  # a kept turn, as an unknown one, has sealed parts
                continue
            sent = replay.sent(entry.index)
            if sent is turn:
                continue  # nothing sealed to take off, no call to drop: it goes as it came
            assert isinstance(sent, AssistantMessage)
            edits.update(surface.wire_edits(incoming, entry.index, sent, origin.model))
            reasons[str(entry.reason)] = reasons.get(str(entry.reason), 0) + 1
        return replay, edits, (kept, sum(reasons.values()), reasons)

    async def _forward(
        self,
        method: str,
        url: str,
        headers: dict[str, str],
        body: bytes,
        decision: Decision | None,
        route: Route,
        surface: Surface,
        send: Send,
    ) -> int:
        """Send ``body`` upstream and relay the answer as it arrives; return its status."""
        import httpx  # noqa: PLC0415

        signed = resigned(route, method, url, body, headers)  # a SigV4 signature covers the bytes sent
        request = self._http.build_request(method, url, content=body, headers=signed)
        try:
            response = await self._http.send(request, stream=True)
        except httpx.TimeoutException:
            await _refuse(send, Refusal(504, "the upstream did not answer in time", "timeout_error"))
            return 504
        except httpx.TransportError as err:
            await _refuse(send, Refusal(502, f"the upstream could not be reached ({type(err).__name__})", "api_error"))
            return 502
        try:
            if decision is not None and response.status_code == 400 and self.config.recover:
                raw = b"".join([chunk async for chunk in response.aiter_raw()])  # as it came, to relay
                retried = await self._recovered(raw, decision, route, surface, method, url, headers)
                if retried is None:
                    return await self._relay(response, decision, route, surface, send, None, raw)
                await response.aclose()
                response, decision, recovered = retried
                return await self._relay(response, decision, route, surface, send, recovered)
            return await self._relay(response, decision, route, surface, send, None)
        finally:
            await response.aclose()

    async def _recovered(
        self,
        raw: bytes,
        decision: Decision,
        route: Route,
        surface: Surface,
        method: str,
        url: str,
        headers: dict[str, str],
    ) -> tuple[Any, Decision, int] | None:
        """After a 400 whose body is ``raw``: when it is the provider rejecting
        thinking this request kept, the answer to the request sent once more
        with that turn unsealed (None: relay the 400 as it is)."""
        message = _error_message(raw)
        turn = surface.adapter.rejected_turn(decision.replay, message) if message else None
        if turn is None:
            return None
        conversation = decision.attached.conversation
        messages = list(conversation)
        original = messages[turn]
        assert isinstance(original, AssistantMessage)
        messages[turn] = original.unsealed()
        unsealed = conversation.with_messages(messages)
        attached = Attached(unsealed, decision.attached.turns)
        replay, edits, (kept, count, reasons) = self._edits(attached, decision.origin, surface, decision.incoming)
        # The turn itself has no seals left for the replay to report: it goes out as sent, said so here.
        sent = replay.sent(turn)
        assert isinstance(sent, AssistantMessage)
        edits.update(surface.wire_edits(decision.incoming, turn, sent, decision.origin.model))
        reasons = {**reasons, "provider-rejected": reasons.get("provider-rejected", 0) + 1}
        body = _body(decision.raw, decision.incoming, edits, decision.origin.model, surface)
        retried = Decision(
            decision.raw, body, decision.incoming, attached, replay, decision.origin, kept, count + 1, reasons
        )
        self.metrics.count("recoveries", route=route.prefix)
        self.metrics.count("turns_unsealed", route=route.prefix, reason="provider-rejected")
        signed = resigned(route, method, url, body, headers)
        request = self._http.build_request(method, url, content=body, headers=signed)
        return await self._http.send(request, stream=True), retried, turn

    async def _relay(
        self,
        response: Any,
        decision: Decision | None,
        route: Route,
        surface: Surface,
        send: Send,
        recovered: int | None,
        read: bytes | None = None,
    ) -> int:
        """Relay ``response`` to the client as it arrives (``read``: its body,
        when it was read already), feeding the ledger's recorder on the way.
        The route's own key is hidden wherever an upstream echoes it."""
        masker = _Masker(route.sent_secret.encode()) if route.sent_secret else None
        headers = [
            (k.encode("latin-1"), masker.hide(v.encode("latin-1")) if masker else v.encode("latin-1"))
            for k, v in response.headers.items()
            if k.lower() not in _HOP_BY_HOP  # the body goes as it came, so its length and encoding hold
        ]
        headers += _NONE_DECIDED if decision is None else decision.headers()
        if recovered is not None:
            headers.append((b"thinkseal-recovered", str(recovered).encode()))
        await send({"type": "http.response.start", "status": response.status_code, "headers": headers})
        ok = decision is not None and response.status_code < 300
        recorder = _Recorder(surface, decision, self.config.max_body) if ok and decision is not None else None
        chunks = _once(read) if read is not None else response.aiter_raw()
        # A whole answer's last bytes wait for the ledger: a client that has them may send its
        # next request to another gateway of the fleet, which must find the reply recorded.
        # A stream's events go out as they arrive; the one that ends its reply goes out once the
        # reply is recorded, as a client may stop reading at it (the openai SDK at ``[DONE]``).
        # Should bytes follow it, the reply is read again at the end and recorded again if they
        # changed it.
        whole = recorder is not None and not recorder.streaming
        last = b""
        ended = late = False  # the reply was recorded when its stream ended; bytes came after that
        recorded: AssistantMessage | None = None  # the reply recorded then
        try:
            async for chunk in chunks:
                if recorder is not None:
                    recorder.feed(chunk)
                    late = ended
                out = masker.feed(chunk) if masker is not None else chunk
                if whole:
                    if last:
                        await send({"type": "http.response.body", "body": last, "more_body": True})
                    last = out
                    continue
                if recorder is not None and not ended and recorder.ended():
                    recorded, ended = await self._record(recorder), True
                if out:
                    await send({"type": "http.response.body", "body": out, "more_body": True})
        except Exception as err:
            # The upstream's answer broke off: the client's is broken off too (closed
            # unfinished, never completed with what came), and nothing is recorded but
            # a streamed reply that had ended before (recorded at its end).
            self.metrics.count("answers_cut", route=route.prefix)
            log.warning(json.dumps({"route": route.prefix, "answer_cut": type(err).__name__}))
            raise
        if recorder is not None and (not ended or late or recorded is None):
            await self._record(recorder, recorded)
        final = last + (masker.flush() if masker is not None else b"")
        await send({"type": "http.response.body", "body": final, "more_body": False})
        return int(response.status_code)

    async def _record(self, recorder: _Recorder, recorded: AssistantMessage | None = None) -> AssistantMessage | None:
        """Record the reply ``recorder`` read (unless it is ``recorded``, the
        one recorded before); the reply, or None when it could not be read."""
        message = recorder.finish()
        if message is None or self._ledger is None or message == recorded:
            return message
        try:
            await self._ledger.record(message)
        except BackendError as err:
            log.warning("the reply could not be recorded (%s)", type(err).__name__)
        return message


class _Masker:
    """Hides ``secret`` in relayed bytes (an upstream may echo the credential it
    was sent): each occurrence becomes as many ``*``, so lengths hold. Only
    bytes that could begin an occurrence split across chunks wait for the next
    chunk; a stream's events are not held back otherwise."""

    def __init__(self, secret: bytes) -> None:
        self.secret = secret
        self.tail = b""

    def hide(self, data: bytes) -> bytes:
        return data.replace(self.secret, b"*" * len(self.secret))

    def feed(self, chunk: bytes) -> bytes:
        data = self.hide(self.tail + chunk)
        keep = min(len(data), len(self.secret) - 1)
        while keep and not data.endswith(self.secret[:keep]):
            keep -= 1
        self.tail = data[len(data) - keep :]
        return data[: len(data) - keep]

    def flush(self) -> bytes:
        tail, self.tail = self.tail, b""
        return tail


class _Recorder:
    """Reads the answer as it is relayed (whole or streamed) with the
    adapter's own parser, and gives the reply bound to the request as sent.
    An answer over ``limit`` bytes is not recorded (nor held in memory)."""

    def __init__(self, surface: Surface, decision: Decision, limit: int) -> None:
        self.adapter = surface.adapter
        self.decision = decision
        self.streaming = decision.incoming.stream
        self.limit = limit
        self.size = 0
        self.chunks: list[bytes] = []
        if self.streaming:
            from ..client._events import decoder  # noqa: PLC0415

            self.frames = decoder(self.adapter.connection.stream_format, self.adapter.id)
            self.parser = self.adapter.new_stream()
        self.failed = False

    def feed(self, chunk: bytes) -> None:
        if self.failed:
            return
        self.size += len(chunk)
        if self.size > self.limit:
            self.failed = True
            self.chunks.clear()
            log.warning("the answer is over %d bytes: relayed, not recorded", self.limit)
            return
        try:
            if self.streaming:
                for event in self.frames.feed(chunk):
                    self.parser.feed(event)
            else:
                self.chunks.append(chunk)
        except ThinksealError as err:
            self.failed = True
            log.warning("the answer could not be read for the ledger (%s)", type(err).__name__)

    def ended(self) -> bool:
        """A stream whose reply has ended (its end marker or its final event came), still being read."""
        return self.streaming and not self.failed and (self.frames.done or self.parser.ended())

    def finish(self) -> AssistantMessage | None:
        if self.failed:
            return None
        try:
            if self.streaming:
                if not self.parser.ended():  # else it is read whole: what may follow is metadata
                    for event in self.frames.close():
                        self.parser.feed(event)
                message = self.parser.finish()
            else:
                message = self.adapter.parse(json.loads(b"".join(self.chunks)))
        except (ThinksealError, ValueError, RecursionError) as err:
            log.warning("the answer could not be read for the ledger (%s)", type(err).__name__)
            return None
        return self.decision.replay.bind(message)


# -- helpers ---------------------------------------------------------------------------------------


def _headers(scope: Scope) -> dict[str, str]:
    out: dict[str, str] = {}
    for name, value in scope.get("headers", ()):
        key = name.decode("latin-1").lower()
        text = value.decode("latin-1")
        out[key] = f"{out[key]}, {text}" if key in out else text
    return out


def _credential(headers: Mapping[str, str]) -> str | None:
    for name in _CREDENTIAL_HEADERS:
        value = headers.get(name)
        if value:
            return value.removeprefix("Bearer ").removeprefix("bearer ")
    return None


async def _read_body(receive: Receive, limit: int, headers: Mapping[str, str], timeout: float) -> bytes:
    """The request body, refused past ``limit`` bytes, or when a part of it takes
    longer than ``timeout`` seconds to arrive (a client trickling its body would
    otherwise hold the connection for ever)."""
    declared = headers.get("content-length", "")
    if declared.isdigit() and int(declared) > limit:
        raise Refusal(413, f"the request body is over the gateway's limit of {limit} bytes", "request_too_large")
    chunks: list[bytes] = []
    size = 0
    while True:
        try:
            message = await asyncio.wait_for(receive(), timeout)
        except TimeoutError:
            raise Refusal(408, f"the request body did not arrive within {timeout:g} s", "timeout_error") from None
        if message["type"] == "http.disconnect":
            raise Refusal(400, "the client went away before its body arrived")
        chunk = message.get("body", b"")
        size += len(chunk)
        if size > limit:
            raise Refusal(413, f"the request body is over the gateway's limit of {limit} bytes", "request_too_large")
        chunks.append(chunk)
        if not message.get("more_body", False):
            return b"".join(chunks)


# Percent-escapes of ".", "/", "\\", "?" and "#": decoded by the server, they would make
# the path forwarded upstream another path (or a query) than the one the route checked.
_ENCODED_SEPARATORS = (b"%2e", b"%2f", b"%5c", b"%3f", b"%23")


def _unsafe_path(scope: Scope) -> str | None:
    """Why the request's path is refused: a dot segment or an escaped
    separator could take the route's credential to another path of its
    upstream's host. None for a path that is forwarded as routed."""
    raw = scope.get("raw_path") or scope["path"].encode()
    if any(escape in raw.lower() for escape in _ENCODED_SEPARATORS):
        return "the path holds an escaped '.', '/', '\\', '?' or '#'"
    if any(segment in (".", "..") for segment in scope["path"].split("/")):
        return "the path holds a '.' or '..' segment"
    return None


def _body(raw: bytes, incoming: Incoming, edits: Mapping[int, object | None], model: str, surface: Surface) -> bytes:
    """The body to send: ``raw`` with the ``edits`` spliced in and the model
    the route's map names, every other byte as the client wrote it."""
    body = edited(raw, incoming.field, edits)
    if model != incoming.model and surface.model_in_body():
        body = replaced_member(body, "model", model)
    return body


def _error_message(raw: bytes) -> str | None:
    try:
        value = json.loads(raw)
    except (ValueError, RecursionError):
        return None
    for error in [value] if not isinstance(value, list) else value:
        if isinstance(error, Mapping):
            inner = error.get("error", error)
            if isinstance(inner, Mapping) and isinstance(inner.get("message"), str):
                return str(inner["message"])
    return None


async def _once(data: bytes) -> AsyncIterator[bytes]:
    yield data


async def _answer(send: Send, status: int, body: bytes, headers: list[tuple[bytes, bytes]]) -> None:
    await send({"type": "http.response.start", "status": status, "headers": [*headers, *_NONE_DECIDED]})
    await send({"type": "http.response.body", "body": body, "more_body": False})


async def _refuse(send: Send, refusal: Refusal) -> None:
    await _answer(send, refusal.status, refusal.body(), [(b"content-type", b"application/json")])


def app(config: Config | Mapping[str, Any] | str) -> Gateway:
    """The gateway for ``config`` (a ``Config``, its decoded tables, or the path
    of its file), as an ASGI application: ``uvicorn.run(app(...))``."""
    from ._config import load_config  # noqa: PLC0415

    if isinstance(config, str):
        config = load_config(config)
    elif not isinstance(config, Config):
        config = Config.of(config)
    return Gateway(config)
