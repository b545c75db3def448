"""The one HTTP server base every provider emulator is built on.

``Emulator`` is a real ``ThreadingHTTPServer`` on 127.0.0.1 (port 0, an
ephemeral port, unless one is given). It records every request it receives
(``requests``), applies the faults queued with ``fault`` before any provider
logic, checks the provider's auth header when ``require_auth`` is set, and
hands what is left to the subclass's ``_answer``. Subclasses say how their
provider shapes an error body (``_error``), which header carries its
credentials (``_authorized``), whether a request asks for a stream
(``_streaming``) and how their seals are made stale (``_rotate``).
"""

from __future__ import annotations

import json
import threading
from collections import deque
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType, TracebackType
from typing import Any, Literal, Self

_NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})


@dataclass(frozen=True)
class Step:
    """One scripted model reply: ``thinking`` (the reasoning, returned the way
    the provider returns it), ``text`` (the answer) and ``calls`` (tool calls,
    ``(name, arguments)``, given ids the provider's way)."""

    thinking: str | None = None
    text: str | None = None
    calls: Sequence[tuple[str, Mapping[str, Any]]] = ()


@dataclass(frozen=True)
class Fault:
    """A fault injected into the next ``times`` requests (see ``Emulator.fault``)."""

    kind: Literal["error", "malformed", "truncated", "slow", "hang"]
    status: int = 200
    retry_after: float | None = None
    seconds: float = 0.0
    times: int = 1

    @classmethod
    def error(cls, status: int, retry_after: float | None = None, *, times: int = 1) -> Fault:
        """Answer with ``status`` and the provider's own error body for it
        (and a ``retry-after`` header when ``retry_after`` is given)."""
        return cls("error", status=status, retry_after=retry_after, times=times)

    @classmethod
    def malformed(cls, *, times: int = 1) -> Fault:
        """Answer 200 with a body that is not JSON (a stream: an event whose data is not JSON)."""
        return cls("malformed", times=times)

    @classmethod
    def truncated(cls, *, times: int = 1) -> Fault:
        """Cut the answer off part-way and close the connection: a JSON body
        shorter than its Content-Length, a stream without its final events."""
        return cls("truncated", times=times)

    @classmethod
    def slow(cls, seconds: float, *, times: int = 1) -> Fault:
        """Answer normally after ``seconds``."""
        return cls("slow", seconds=seconds, times=times)

    @classmethod
    def hang(cls, *, times: int = 1) -> Fault:
        """Never answer (the request is held until the emulator stops)."""
        return cls("hang", times=times)


@dataclass(frozen=True)
class Request:
    """One request as the emulator received it."""

    method: str
    path: str  # with the query string, as sent
    headers: Mapping[str, str]  # names lower-cased
    raw: bytes
    body: Any  # the parsed JSON, or None when the body is not JSON


@dataclass
class Response:
    """What an emulator answers: a JSON ``body`` (or ``data``, bytes as they
    are), or a stream of ``chunks`` (one event each)."""

    status: int = 200
    body: Any = None
    chunks: list[bytes] | None = None
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)
    data: bytes | None = None

    def payload(self) -> bytes:
        if self.data is not None:
            return self.data
        return json.dumps(self.body, ensure_ascii=False).encode()


class RequestRejected(Exception):
    """A request the emulated provider refuses: ``status`` and the JSON ``body`` it answers."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(json.dumps(body))
        self.status = status
        self.body = body


def parse_json(raw: bytes) -> Any:
    """``raw`` as JSON, or None when it is not."""
    try:
        return json.loads(raw) if raw else None
    except ValueError:
        return None


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    emulator: Emulator


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:
        self.server.emulator._serve(self)

    def do_GET(self) -> None:
        self.server.emulator._serve(self)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # keep test output clean


class Emulator:
    """A provider emulator: a real HTTP server on 127.0.0.1.

    ``start()``/``stop()`` or ``with Emulator() as emu:``; ``base_url`` is the
    provider's base URL on this server (``base_url + req.path`` is the endpoint
    of a request ``thinkseal`` prepared); ``requests`` every request received.
    """

    provider: str = ""
    base_path: str = ""
    stream_content_type: str = "text/event-stream"

    def __init__(self, *, port: int = 0, require_auth: bool = False) -> None:
        self.port = port
        self.require_auth = require_auth
        self._lock = threading.RLock()
        self._requests: list[Request] = []
        self._faults: deque[Fault] = deque()
        self._script: deque[Any] = deque()
        self._stopping = threading.Event()
        self._server: _Server | None = None
        self._thread: threading.Thread | None = None

    # -- what a request for this provider needs -------------------------------------

    @property
    def options(self) -> Mapping[str, Any]:
        """The least ``prepare`` options a request to this provider needs."""
        return _NO_OPTIONS

    @property
    def thinking_options(self) -> Mapping[str, Any]:
        """The ``prepare`` options that turn reasoning on (``{}`` where nothing is needed)."""
        return _NO_OPTIONS

    # -- life cycle ----------------------------------------------------------------------

    def start(self) -> Self:
        """Start serving (on ``port``, or an ephemeral port when it is 0)."""
        if self._server is not None:
            return self
        self._stopping.clear()
        self._server = _Server(("127.0.0.1", self.port), _Handler)
        self._server.emulator = self
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        """Stop serving; requests held by ``Fault.hang`` are let go (unanswered)."""
        self._stopping.set()
        server, self._server = self._server, None
        if server is not None:
            server.shutdown()
            server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)
            self._thread = None

    def __enter__(self) -> Self:
        return self.start()

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.stop()

    @property
    def server_url(self) -> str:
        """The server's own address (``http://127.0.0.1:<port>``)."""
        if self._server is None:
            raise RuntimeError("the emulator is not started")
        return f"http://127.0.0.1:{self._server.server_address[1]}"

    @property
    def base_url(self) -> str:
        """The provider's base URL on this server: ``base_url + req.path`` is the endpoint."""
        return self.server_url + self.base_path

    def url(self, path: str = "") -> str:
        """``base_url + path``."""
        return self.base_url + path

    # -- scripting, faults, inspection -----------------------------------------------

    def script(self, *steps: Step) -> None:
        """Queue replies: each ``Step`` answers one request, in order. With the
        queue empty, a request is answered with a short text ("Done.")."""
        with self._lock:
            self._script.extend(steps)

    def clear_script(self) -> None:
        """Drop every reply still queued."""
        with self._lock:
            self._script.clear()

    def fault(self, fault: Fault) -> None:
        """Queue ``fault`` for the next ``fault.times`` requests (before any provider logic)."""
        if fault.times < 1:
            raise ValueError("times must be at least 1")
        with self._lock:
            self._faults.extend([fault] * fault.times)

    def rotate_keys(self) -> None:
        """Make every seal issued so far stale: a request replaying one is
        refused with the provider's invalid-signature answer."""
        with self._lock:
            self._rotate()

    @property
    def requests(self) -> list[Request]:
        """Every request received, in order (faulted and refused ones too)."""
        with self._lock:
            return list(self._requests)

    def _take(self) -> Any:
        """The next scripted reply (a ``Step`` or a provider-native one), or None."""
        with self._lock:
            return self._script.popleft() if self._script else None

    def _record(self, request: Request) -> None:
        with self._lock:
            self._requests.append(request)

    # -- what subclasses provide ------------------------------------------------------

    def _answer(self, request: Request) -> Response:
        raise NotImplementedError

    def _error(self, status: int, message: str) -> Response:
        """The provider's own error answer for ``status``."""
        return Response(status, {"error": {"code": status, "message": message}})

    def _authorized(self, request: Request) -> bool:
        return True

    def _auth_error(self) -> Response:
        return self._error(401, "Missing or invalid credentials.")

    def _streaming(self, request: Request) -> bool:
        return isinstance(request.body, dict) and request.body.get("stream") is True

    def _malformed_stream(self) -> list[bytes]:
        return [b'data: {"type": "broken\n\n']

    def _rotate(self) -> None:
        pass

    # -- HTTP -------------------------------------------------------------------------------

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        raw = handler.rfile.read(int(handler.headers.get("content-length") or 0))
        headers = {k.lower(): v for k, v in handler.headers.items()}
        request = Request(handler.command, handler.path, MappingProxyType(headers), raw, parse_json(raw))
        self._record(request)
        with self._lock:
            fault = self._faults.popleft() if self._faults else None
        if fault is not None and fault.kind == "hang":
            self._stopping.wait()
            handler.close_connection = True
            return
        if fault is not None and fault.kind == "slow" and self._stopping.wait(fault.seconds):
            handler.close_connection = True
            return
        response = self._faulted_or_answered(request, fault)
        self._send(handler, response, truncated=fault is not None and fault.kind == "truncated")

    def _faulted_or_answered(self, request: Request, fault: Fault | None) -> Response:
        if fault is not None and fault.kind == "error":
            response = self._error(fault.status, _FAULT_MESSAGES.get(fault.status, f"Emulated error {fault.status}."))
            if fault.retry_after is not None:
                seconds = fault.retry_after
                response.headers["retry-after"] = str(int(seconds)) if seconds == int(seconds) else str(seconds)
            return response
        if fault is not None and fault.kind == "malformed":
            if self._streaming(request):
                return Response(chunks=self._malformed_stream(), content_type=self.stream_content_type)
            return Response(data=b'{"id": "emulated", "content": [', content_type="application/json")
        if self.require_auth and not self._authorized(request):
            return self._auth_error()
        try:
            return self._answer(request)
        except RequestRejected as rejected:
            return Response(rejected.status, rejected.body)
        except Exception as exc:  # an emulator bug: answer it rather than hang the client
            return self._error(500, f"emulator error: {type(exc).__name__}: {exc}")

    def _send(self, handler: BaseHTTPRequestHandler, response: Response, *, truncated: bool) -> None:
        handler.send_response(response.status)
        handler.send_header("content-type", response.content_type)
        for name, value in response.headers.items():
            handler.send_header(name, value)
        if response.chunks is None:
            data = response.payload()
            handler.send_header("content-length", str(len(data)))
            if truncated:
                handler.send_header("connection", "close")
            handler.end_headers()
            handler.wfile.write(data[: len(data) // 2] if truncated else data)
            if truncated:
                handler.close_connection = True
            return
        handler.send_header("transfer-encoding", "chunked")
        if truncated:
            handler.send_header("connection", "close")
        handler.end_headers()
        chunks = response.chunks[: len(response.chunks) // 2] if truncated else response.chunks
        for chunk in chunks:
            if chunk:
                handler.wfile.write(f"{len(chunk):x}\r\n".encode() + chunk + b"\r\n")
                handler.wfile.flush()
        handler.wfile.write(b"0\r\n\r\n")
        handler.wfile.flush()
        if truncated:
            handler.close_connection = True


_FAULT_MESSAGES = {
    400: "Bad request.",
    401: "Invalid credentials.",
    403: "Permission denied.",
    404: "Not found.",
    408: "Request timed out.",
    413: "Request too large.",
    429: "Rate limit exceeded. Please retry after a while.",
    500: "Internal server error.",
    502: "Bad gateway.",
    503: "Service unavailable.",
    504: "Gateway timeout.",
    529: "Overloaded.",
}
