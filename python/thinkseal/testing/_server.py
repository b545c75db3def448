"""The one HTTP server base every provider emulator is built on.

``Emulator`` is a real ``ThreadingHTTPServer`` on 127.0.0.1 (port 0, an
ephemeral port, unless one is given). It records every request it receives
(``requests``), applies the faults queued with ``fault`` before any provider
logic, checks the provider's auth header when ``require_auth`` is set, and
hands what is left to the subclass's ``_answer``. Subclasses say how their
provider shapes an error body (``_error``), which header carries its
credentials (``_authorized``), whether a request asks for a stream
(``_streaming``) and how their seals are made stale (``_rotate``).

The body is read here, whole, for every emulator alike: by its
Content-Length or, sent ``Transfer-Encoding: chunked``, chunk by chunk.
A body that is not JSON (not UTF-8 either), nested deeper than
``max_depth`` or longer than ``max_body_bytes`` never reaches ``_answer``:
it gets the provider's own 4xx for it (``_invalid_json``, ``_too_large``),
so no request can make an emulator drop the connection or answer 500.
"""

from __future__ import annotations

import json
import math
import sys
import threading
from collections import deque
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import MappingProxyType, TracebackType
from typing import Any, Literal, NamedTuple, Self, TypeVar

_NO_OPTIONS: Mapping[str, Any] = MappingProxyType({})

MAX_BODY_BYTES = 32 * 1024 * 1024
"""The longest request body an emulator reads (Anthropic documents 32 MB for
its Messages API; the emulators take that bound for every provider)."""

MAX_DEPTH = 128
"""The deepest nesting of arrays and objects an emulator takes in a body (the
emulator's own bound: deep enough for any real request, shallow enough that
no rule engine recurses out of its stack)."""


@dataclass(frozen=True)
class Step:
    """One scripted model reply: ``thinking`` (the reasoning, returned the way
    the provider returns it), ``text`` (the answer) and ``calls`` (tool calls,
    ``(name, arguments)``, given ids the provider's way)."""

    thinking: str | None = None
    text: str | None = None
    calls: Sequence[tuple[str, Mapping[str, Any]]] = ()

    def to_json(self) -> dict[str, Any]:
        """The step's JSON form (docs/testing.md, "Scripts as JSON"):
        ``{"thinking", "text", "calls": [{"name", "arguments"}]}``, members
        that are None or empty left out."""
        out: dict[str, Any] = {}
        if self.thinking is not None:
            out["thinking"] = self.thinking
        if self.text is not None:
            out["text"] = self.text
        if self.calls:
            out["calls"] = [{"name": name, "arguments": dict(arguments)} for name, arguments in self.calls]
        return out

    @classmethod
    def from_json(cls, value: Any, where: str = "step") -> Step:
        """A step from its JSON form; ``ValueError`` naming the member (``where``
        is the step's place, for the message) for anything else."""
        _members(value, where, {"thinking", "text", "calls"})
        thinking = _optional_text(value, "thinking", where)
        text = _optional_text(value, "text", where)
        calls = value.get("calls", [])
        if not isinstance(calls, list):
            raise ValueError(f"{where}.calls: expected an array of {{name, arguments}} objects")
        parsed: list[tuple[str, Mapping[str, Any]]] = []
        for k, call in enumerate(calls):
            at = f"{where}.calls[{k}]"
            _members(call, at, {"name", "arguments"})
            name, arguments = call.get("name"), call.get("arguments", {})
            if not isinstance(name, str) or not name:
                raise ValueError(f"{at}.name: expected a non-empty string")
            if not isinstance(arguments, dict):
                raise ValueError(f"{at}.arguments: expected an object")
            parsed.append((name, arguments))
        return cls(thinking, text, tuple(parsed))


def _members(value: Any, where: str, allowed: set[str]) -> None:
    if not isinstance(value, dict):
        raise ValueError(f"{where}: expected an object")
    unknown = sorted(set(value) - allowed)
    if unknown:
        raise ValueError(f"{where}.{unknown[0]}: unknown member (expected {', '.join(sorted(allowed))})")


def _optional_text(value: Mapping[str, Any], name: str, where: str) -> str | None:
    text = value.get(name)
    if text is not None and not isinstance(text, str):
        raise ValueError(f"{where}.{name}: expected a string or null")
    return text


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


FAULT_KINDS = ("error", "malformed", "truncated", "slow", "hang")


@dataclass(frozen=True)
class Fault:
    """A fault injected into the next ``times`` requests (see ``Emulator.fault``)."""

    kind: Literal["error", "malformed", "truncated", "slow", "hang"]
    status: int = 200
    retry_after: float | None = None
    seconds: float = 0.0
    times: int = 1

    def to_json(self) -> dict[str, Any]:
        """The fault's JSON form (docs/testing.md, "Scripts as JSON"):
        ``{"kind", "times"}`` and the members its kind uses (``status`` and
        ``retry_after`` for "error", ``seconds`` for "slow")."""
        out: dict[str, Any] = {"kind": self.kind, "times": self.times}
        if self.kind == "error":
            out["status"] = self.status
            if self.retry_after is not None:
                out["retry_after"] = self.retry_after
        if self.kind == "slow":
            out["seconds"] = self.seconds
        return out

    @classmethod
    def from_json(cls, value: Any, where: str = "fault") -> Fault:
        """A fault from its JSON form; ``ValueError`` naming the member for anything else."""
        _members(value, where, {"kind", "status", "retry_after", "seconds", "times"})
        kind = value.get("kind")
        if kind not in FAULT_KINDS:
            raise ValueError(f"{where}.kind: expected one of {', '.join(FAULT_KINDS)}")
        uses = {"error": {"status", "retry_after"}, "slow": {"seconds"}}.get(kind, set())
        for unused in sorted({"status", "retry_after", "seconds"} - uses):
            if unused in value:
                raise ValueError(f"{where}.{unused}: not a member of a {kind!r} fault")
        times = value.get("times", 1)
        if not isinstance(times, int) or isinstance(times, bool) or times < 1:
            raise ValueError(f"{where}.times: expected an integer of at least 1")
        if kind == "error":
            status = value.get("status")
            if not isinstance(status, int) or isinstance(status, bool) or not 400 <= status <= 599:
                raise ValueError(f"{where}.status: expected an HTTP error status (400 to 599)")
            retry_after = value.get("retry_after")
            if retry_after is not None and (not _number(retry_after) or retry_after < 0):
                raise ValueError(f"{where}.retry_after: expected a number of seconds, or null")
            return cls.error(status, retry_after, times=times)
        if kind == "slow":
            seconds = value.get("seconds")
            if not _number(seconds) or seconds < 0:
                raise ValueError(f"{where}.seconds: expected a number of seconds")
            return cls.slow(seconds, times=times)
        return cls(kind, times=times)

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
class BodyProblem:
    """Why a request body was not read as JSON: ``kind`` is "syntax" (not
    JSON, or not UTF-8), "depth" (nested deeper than the emulator's
    ``max_depth``) or "size" (longer than its ``max_body_bytes``);
    ``detail`` says what went wrong (Python's ``json`` wording), at
    ``line``, ``column`` (from 1) and ``position`` (from 0, in characters) of
    the body; ``at_end``: the body ended where more was needed (cut off);
    ``found``: the character at ``position`` ("" at the end)."""

    kind: Literal["syntax", "depth", "size"]
    detail: str
    line: int = 1
    column: int = 1
    position: int = 0
    at_end: bool = False
    found: str = ""


@dataclass(frozen=True)
class Request:
    """One request as the emulator received it."""

    method: str
    path: str  # with the query string, as sent
    headers: Mapping[str, str]  # names lower-cased
    raw: bytes
    body: Any  # the parsed JSON, or None when the body is not JSON
    problem: BodyProblem | None = None  # why ``body`` is None, for a body that was not taken


class Rejection(NamedTuple):
    """A request an emulator answered with a 4xx: ``status`` and the JSON
    ``body`` of the answer (None when it was not JSON)."""

    request: Request
    status: int
    body: Any


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


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def parse_body(raw: bytes, max_depth: int = MAX_DEPTH) -> tuple[Any, BodyProblem | None]:
    """``raw`` as JSON (strict: UTF-8, no NaN or Infinity, nested at most
    ``max_depth`` deep), or None and why not."""
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as err:
        return None, BodyProblem("syntax", "invalid UTF-8", 1, err.start + 1, err.start)
    try:
        value = json.loads(text, parse_constant=_no_constant)
    except json.JSONDecodeError as err:
        end = err.pos >= len(text.rstrip())
        found = "" if end else text[err.pos]
        return None, BodyProblem("syntax", err.msg, err.lineno, err.colno, err.pos, end, found)
    except ValueError as err:  # NaN, Infinity
        return None, BodyProblem("syntax", str(err))
    except RecursionError:
        return None, BodyProblem("depth", f"nested deeper than {max_depth} levels")
    if _deeper_than(value, max_depth):
        return None, BodyProblem("depth", f"nested deeper than {max_depth} levels")
    return value, None


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether arrays and objects nest in ``value`` more than ``limit`` deep
    (a loop, not recursion: the value may be as deep as the parser allowed)."""
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        children = node.values() if isinstance(node, dict) else node if isinstance(node, list) else None
        if children is None:
            continue
        if depth > limit:
            return True
        stack.extend((child, depth + 1) for child in children)
    return False


class BadFraming(Exception):
    """A request whose body cannot be delimited (bad Content-Length or chunk framing)."""


def read_body(handler: BaseHTTPRequestHandler, limit: int) -> tuple[bytes, bool]:
    """The request body as sent (by Content-Length, or chunked) and whether it
    was longer than ``limit`` (then the bytes past the limit are read and
    dropped, so the connection stays in step). Raises ``BadFraming``."""
    if "chunked" in handler.headers.get("transfer-encoding", "").lower():
        return _read_chunked(handler, limit)
    declared = handler.headers.get("content-length")
    if declared is None:
        return b"", False
    if not declared.strip().isdigit():
        raise BadFraming(f"invalid Content-Length {declared!r}")
    length = int(declared)
    if length > limit:
        _discard(handler, length)
        return b"", True
    raw = handler.rfile.read(length)
    if len(raw) != length:
        raise BadFraming("the body ended before its Content-Length")
    return raw, False


def _discard(handler: BaseHTTPRequestHandler, count: int) -> None:
    while count > 0:
        piece = handler.rfile.read(min(count, 1 << 16))
        if not piece:
            raise BadFraming("the body ended before its Content-Length")
        count -= len(piece)


def _read_chunked(handler: BaseHTTPRequestHandler, limit: int) -> tuple[bytes, bool]:
    parts: list[bytes] = []
    total = 0
    while True:
        line = handler.rfile.readline(1 << 12)
        size_text = line.split(b";", 1)[0].strip()
        try:
            size = int(size_text, 16)
        except ValueError:
            raise BadFraming(f"invalid chunk size {size_text[:20]!r}") from None
        if size < 0:
            raise BadFraming("invalid chunk size")
        if size == 0:
            break
        total += size
        if total > limit:
            _discard(handler, size)
        else:
            data = handler.rfile.read(size)
            if len(data) != size:
                raise BadFraming("the body ended inside a chunk")
            parts.append(data)
        if handler.rfile.readline(3) not in (b"\r\n", b"\n"):
            raise BadFraming("a chunk does not end with CRLF")
    while handler.rfile.readline(1 << 12) not in (b"\r\n", b"\n", b""):
        pass  # trailer fields, ignored
    return (b"", True) if total > limit else (b"".join(parts), False)


_POLL = 0.02  # seconds between the serving thread's checks for shutdown


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    # Many clients connecting at once (a test suite's concurrent first
    # requests) must queue, not be refused: the default backlog is 5.
    request_queue_size = 128
    emulator: Emulator

    def handle_error(self, request: Any, client_address: Any) -> None:
        if isinstance(sys.exc_info()[1], (ConnectionError, TimeoutError)):
            return  # a client that went away mid-answer: nothing to report
        super().handle_error(request, client_address)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:
        self.server.emulator._serve(self)

    def do_GET(self) -> None:
        self.server.emulator._serve(self)

    def do_PUT(self) -> None:
        self.server.emulator._serve(self)

    def do_DELETE(self) -> None:
        self.server.emulator._serve(self)

    def do_PATCH(self) -> None:
        self.server.emulator._serve(self)

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass  # keep test output clean


# What reading a member of the wrong type raises (a string where an object
# was expected, a missing key...): a refused body, not an emulator bug.
_SHAPE_ERRORS = (TypeError, AttributeError, KeyError, IndexError, ValueError)

CONTROL_PATH = "/_thinkseal"


def _is_control(path: str) -> bool:
    route = path.split("?", 1)[0]
    return route == CONTROL_PATH or route.startswith(CONTROL_PATH + "/")


_SDK_LOCK = threading.Lock()
_T = TypeVar("_T")


def load_once(load: Callable[[], _T]) -> Callable[[], _T]:
    """``load`` run once per process, under one lock shared by every such
    loader: the SDK modules the emulators check bodies against are imported
    by one thread at a time, never by two request threads at once (two
    threads importing the same package's modules in another order deadlock
    on Python's module locks)."""
    done: list[_T] = []

    def loaded() -> _T:
        if not done:
            with _SDK_LOCK:
                if not done:
                    done.append(load())
        return done[0]

    return loaded


class Emulator:
    """A provider emulator: a real HTTP server on 127.0.0.1.

    ``start()``/``stop()`` or ``with Emulator() as emu:``; ``base_url`` is the
    provider's base URL on this server (``base_url + req.path`` is the endpoint
    of a request ``thinkseal`` prepared); ``requests`` every request received.
    """

    provider: str = ""
    base_path: str = ""
    stream_content_type: str = "text/event-stream"
    max_body_bytes: int = MAX_BODY_BYTES
    max_depth: int = MAX_DEPTH

    def __init__(self, *, port: int = 0, require_auth: bool = False) -> None:
        self.port = port
        self.require_auth = require_auth
        self.control = False  # serve the test-only control endpoint (thinkseal.testing._control)
        self._lock = threading.RLock()
        self._requests: list[Request] = []
        self._answered: list[Rejection] = []
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
        self._prepare()
        if self.control:
            from . import _control  # noqa: F401, PLC0415 (imported here, not by a request thread)
        self._stopping.clear()
        self._server = _Server(("127.0.0.1", self.port), _Handler)
        self._server.emulator = self
        # Polled every 20 ms for ``stop``: the default 0.5 s made each stop wait up to that long.
        self._thread = threading.Thread(target=self._server.serve_forever, args=(_POLL,), daemon=True)
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

    def clear_faults(self) -> None:
        """Drop every fault still pending."""
        with self._lock:
            self._faults.clear()

    def clear_requests(self) -> None:
        """Forget the requests received so far (``requests`` starts empty again)."""
        with self._lock:
            self._requests.clear()
            self._answered.clear()

    def _pending(self) -> tuple[list[Any], int]:
        """The replies still queued, and how many faulted requests are pending."""
        with self._lock:
            return list(self._script), len(self._faults)

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

    @property
    def rejections(self) -> list[Rejection]:
        """The requests answered with a 4xx (the provider refusing them, faults
        included), in the order they were answered, each with the status and
        the JSON body of the answer: a test counts what a client without
        thinkseal gets refused, and why."""
        with self._lock:
            return list(self._answered)

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

    def _serves(self, request: Request) -> bool:
        """Whether the request is for one of the provider's endpoints (the
        others are answered by ``_answer``, with the provider's 404)."""
        return True

    def _prepare(self) -> None:
        """Load what answering needs before the first request (``start``
        calls it in the starting thread): the SDK types a body is checked against."""

    def _invalid_json(self, problem: BodyProblem) -> Response:
        """The provider's answer to a body that is not JSON (or too deeply nested)."""
        return self._error(400, f"The request body is not valid JSON: {problem.detail} (emulator wording)")

    def _invalid_shape(self, error: Exception) -> Response:
        """The provider's answer to a JSON body whose members have the wrong types."""
        detail = f"{type(error).__name__}: {error}"[:300]
        return self._error(400, f"The request body does not have the shape the API takes ({detail}) (emulator wording)")

    def _too_large(self) -> Response:
        """The provider's answer to a body longer than ``max_body_bytes``."""
        return self._error(413, "Request exceeds the maximum allowed number of bytes.")

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
        try:
            raw, oversized = read_body(handler, self.max_body_bytes)
        except BadFraming as err:
            # The rest of the stream cannot be read in step: answer, then close.
            refused = self._error(400, f"Malformed HTTP request body: {err} (emulator wording)")
            refused.headers["connection"] = "close"
            self._send(handler, refused, truncated=False)
            handler.close_connection = True
            return
        if self.control and _is_control(handler.path):
            from ._control import answer  # noqa: PLC0415 (it builds on this module; loaded by start())

            self._send(handler, answer(self, handler.command, handler.path, raw), truncated=False)
            return
        headers: dict[str, str] = {}
        for name, value in handler.headers.items():
            # A header sent twice reads as its values joined, as HTTP defines it.
            key = name.lower()
            headers[key] = f"{headers[key]}, {value}" if key in headers else value
        problem: BodyProblem | None
        if oversized:
            body, problem = None, BodyProblem("size", f"longer than {self.max_body_bytes} bytes")
        elif raw or handler.command in ("POST", "PUT", "PATCH"):
            body, problem = parse_body(raw, self.max_depth)
        else:
            body, problem = None, None
        request = Request(handler.command, handler.path, MappingProxyType(headers), raw, body, problem)
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
        if 400 <= response.status < 500:
            with self._lock:
                self._answered.append(Rejection(request, response.status, response.body))
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
        if request.problem is not None and self._serves(request):
            return self._too_large() if request.problem.kind == "size" else self._invalid_json(request.problem)
        try:
            return self._answer(request)
        except RequestRejected as rejected:
            return Response(rejected.status, rejected.body)
        except _SHAPE_ERRORS as exc:
            # JSON whose members are not of the types the API takes reached a
            # rule that reads them: the provider refuses such a body with a 4xx,
            # in words the emulator does not have for every member.
            return self._invalid_shape(exc)
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
