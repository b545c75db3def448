"""A local stand-in for Ollama's ``/api/chat`` that enforces the request rules
thinkseal relies on, and answers with scripted replies.

It checks what Ollama documents (``think`` values, with Ollama's own error
text; ``"<model>" does not support thinking`` for a model configured as
non-thinking; tool-call arguments as an object; ``format``; ``options``;
``images`` as a list of base64 strings, refused with the text of Go's base64
decoder, which Ollama's JSON binding reports, not confirmed from Ollama's
documentation) and the
tool pairing thinkseal promises (each tool result answers a call of the turn
before it, by ``tool_name``, and every call is answered before the conversation
goes on). Wording not quoted from Ollama is the emulator's own.

Like Ollama, it streams unless the body says ``"stream": false``; it leaves
thinking out when the request says ``"think": false``.

``JsonServer`` (the HTTP plumbing) and ``assert_recognised`` are shared with
the Mistral emulator and tests.
"""

from __future__ import annotations

import base64
import json
import string
import threading
from collections import deque
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any, Generic, TypeVar

THINK_LEVELS = ("high", "medium", "low", "max")
ROLES = ("system", "user", "assistant", "tool")
CREATED_AT = "2026-11-30T12:00:00.000000Z"


class RequestRejected(Exception):
    """A request the emulated provider refuses: ``status`` and the JSON ``body`` it answers."""

    def __init__(self, status: int, body: dict[str, Any]) -> None:
        super().__init__(json.dumps(body))
        self.status = status
        self.body = body


@dataclass
class Answer:
    """What a handler returns: a JSON body, or lines to stream."""

    status: int = 200
    body: dict[str, Any] | None = None
    lines: list[bytes] = field(default_factory=list)
    content_type: str = "application/json"


class JsonServer:
    """A ThreadingHTTPServer on 127.0.0.1 (port 0) handing each POST's path,
    headers and decoded JSON body to ``handle``; started and stopped by a fixture."""

    def __init__(self, handle: Callable[[str, dict[str, str], Any], Answer]) -> None:
        serve = handle

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"  # chunked streams need it

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("content-length", "0")))
                try:
                    body = json.loads(raw)
                except ValueError:
                    answer = Answer(400, {"error": "invalid JSON body"})
                else:
                    try:
                        answer = serve(self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                    except RequestRejected as rejected:
                        answer = Answer(rejected.status, rejected.body)
                self.send_response(answer.status)
                self.send_header("content-type", answer.content_type)
                if answer.body is not None:
                    data = json.dumps(answer.body).encode()
                    self.send_header("content-length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                    return
                self.send_header("transfer-encoding", "chunked")
                self.end_headers()
                for line in answer.lines:
                    self.wfile.write(f"{len(line):x}\r\n".encode() + line + b"\r\n")
                self.wfile.write(b"0\r\n\r\n")

            def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
                pass  # keep test output clean

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        host, port = self._server.server_address[:2]
        return f"http://{host!s}:{port}"

    def start(self) -> None:
        self._thread.start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join()


def assert_recognised(sent: Any, parsed: Any, path: str = "$") -> None:
    """Every field of ``sent`` survives, unchanged, in ``parsed`` (an SDK model's
    dump of it): the SDK's request model knows every field thinkseal sends
    (pydantic models ignore unknown fields, so validating alone proves little)."""
    if isinstance(sent, dict):
        assert isinstance(parsed, dict), f"{path}: the SDK model read {parsed!r}"
        for key, value in sent.items():
            assert key in parsed, f"{path}.{key}: unknown to the SDK model (dropped)"
            assert_recognised(value, parsed[key], f"{path}.{key}")
    elif isinstance(sent, list):
        assert isinstance(parsed, list), f"{path}: the SDK model read {parsed!r}"
        assert len(parsed) == len(sent), f"{path}: the SDK model read {parsed!r}"
        for i, (a, b) in enumerate(zip(sent, parsed, strict=True)):
            assert_recognised(a, b, f"{path}[{i}]")
    else:
        assert sent == parsed, f"{path}: sent {sent!r}, the SDK model read {parsed!r}"


R = TypeVar("R")


class ScriptedEmulator(Generic[R]):
    """A ``JsonServer`` answering from a queue of scripted replies; ``requests``
    holds every body received, accepted or not. Subclasses enforce their
    provider's rules in ``_handle``."""

    def __init__(self) -> None:
        self.replies: deque[R] = deque()
        self.requests: list[Any] = []
        self._server = JsonServer(self._handle)

    @property
    def url(self) -> str:
        return self._server.url

    def queue(self, *replies: R) -> None:
        self.replies.extend(replies)

    def start(self) -> None:
        self._server.start()

    def close(self) -> None:
        self._server.close()

    def _handle(self, path: str, headers: dict[str, str], body: Any) -> Answer:
        raise NotImplementedError


@dataclass
class Reply:
    """A scripted Ollama reply. ``cut`` ends a stream without its done line;
    ``error`` streams an error line after the first fragment."""

    content: str = ""
    thinking: str = ""
    tool_calls: Sequence[tuple[str, dict[str, Any]]] = ()
    cut: bool = False
    error: str | None = None


def _reject(message: str) -> RequestRejected:
    return RequestRejected(400, {"error": message})


def invalid_think(value: object) -> str:
    shown = json.dumps(value, ensure_ascii=False)
    return f'invalid think value: {shown} (must be "high", "medium", "low", "max", true, or false)'


def check_chat_request(body: Any, non_thinking: Sequence[str]) -> None:
    """Raise ``RequestRejected`` for a body Ollama (or thinkseal's pairing rule) refuses."""
    if not isinstance(body, dict):
        raise _reject("request body must be a JSON object")
    model = body.get("model")
    if not isinstance(model, str) or not model:
        raise _reject("model is required")
    think = body.get("think")
    if think is not None and not (isinstance(think, bool) or think in THINK_LEVELS):
        raise _reject(invalid_think(think))
    if think not in (None, False) and model in non_thinking:
        raise _reject(f'"{model}" does not support thinking')
    if "stream" in body and not isinstance(body["stream"], bool):
        raise _reject("stream must be a boolean")
    fmt = body.get("format")
    if fmt is not None and fmt not in ("", "json") and not isinstance(fmt, dict):
        raise _reject('format must be "json" or a JSON schema object')
    if body.get("options") is not None and not isinstance(body["options"], dict):
        raise _reject("options must be an object")
    keep_alive = body.get("keep_alive")
    if keep_alive is not None and (isinstance(keep_alive, bool) or not isinstance(keep_alive, (str, int, float))):
        raise _reject("keep_alive must be a duration string or a number")
    for i, tool in enumerate(body.get("tools") or []):
        function = tool.get("function") if isinstance(tool, dict) else None
        if tool.get("type") != "function" or not isinstance(function, dict) or not function.get("name"):
            raise _reject(f"tools[{i}]: expected {{'type': 'function', 'function': {{'name': ...}}}}")
    messages = body.get("messages")
    if not isinstance(messages, list):
        raise _reject("messages must be a list")
    _check_messages(messages)


def _check_messages(messages: list[Any]) -> None:
    open_calls: list[str] = []  # names of the calls of the last assistant turn not yet answered
    for i, message in enumerate(messages):
        if not isinstance(message, dict) or message.get("role") not in ROLES:
            raise _reject(f"messages[{i}]: role must be one of {', '.join(ROLES)}")
        role = message["role"]
        for key in ("content", "thinking", "tool_name"):
            if key in message and not isinstance(message[key], str):
                raise _reject(f"messages[{i}].{key} must be a string")
        _check_images(message.get("images"), i)
        if role == "tool":
            name = message.get("tool_name")
            if name not in open_calls:
                raise _reject(f"messages[{i}]: tool result for {name!r} answers no open call of the turn before it")
            open_calls.remove(name)
            continue
        if role == "system":
            continue
        if open_calls:
            raise _reject(f"messages[{i}]: the calls {open_calls} of the assistant turn before have no result")
        if role == "assistant":
            open_calls = [_check_call(c, f"messages[{i}].tool_calls[{j}]") for j, c in enumerate(_calls(message))]
    if open_calls:
        raise _reject(f"the calls {open_calls} of the last assistant turn have no result")


_BASE64 = frozenset(string.ascii_letters + string.digits + "+/=")


def _check_images(images: Any, i: int) -> None:
    """``images``: base64 strings (Ollama decodes them as Go ``[]byte``)."""
    if images is None:
        return
    if not isinstance(images, list) or not all(isinstance(x, str) for x in images):
        raise _reject(f"messages[{i}].images must be a list of base64 strings")
    for image in images:
        bad = next((n for n, c in enumerate(image) if c not in _BASE64), None)
        if bad is None and len(image) % 4:
            bad = len(image) - len(image) % 4
        if bad is not None:
            raise _reject(f"illegal base64 data at input byte {bad}")
        base64.b64decode(image, validate=True)


def _calls(message: dict[str, Any]) -> list[Any]:
    calls = message.get("tool_calls") or []
    if not isinstance(calls, list):
        raise _reject("tool_calls must be a list")
    return calls


def _check_call(call: Any, where: str) -> str:
    function = call.get("function") if isinstance(call, dict) else None
    if not isinstance(function, dict) or not isinstance(function.get("name"), str):
        raise _reject(f"{where}: expected {{'function': {{'name', 'arguments'}}}}")
    if not isinstance(function.get("arguments"), dict):
        raise _reject(f"{where}.function.arguments: must be a JSON object")
    name: str = function["name"]
    return name


def _pieces(text: str, count: int = 3) -> list[str]:
    """``text`` in up to ``count`` fragments, as a stream would send it."""
    if not text:
        return []
    size = max(1, -(-len(text) // count))
    return [text[i : i + size] for i in range(0, len(text), size)]


def _message(reply: Reply, thinking: bool) -> dict[str, Any]:
    message: dict[str, Any] = {"role": "assistant", "content": reply.content}
    if thinking and reply.thinking:
        message["thinking"] = reply.thinking
    if reply.tool_calls:
        message["tool_calls"] = [{"function": {"name": n, "arguments": a}} for n, a in reply.tool_calls]
    return message


def reply_body(model: str, reply: Reply, thinking: bool = True) -> dict[str, Any]:
    """The non-streamed response to ``reply``."""
    return {
        "model": model,
        "created_at": CREATED_AT,
        "message": _message(reply, thinking),
        "done": True,
        "done_reason": "stop",
        "total_duration": 1200,
        "eval_count": 42,
    }


def stream_lines(model: str, reply: Reply, thinking: bool = True) -> Iterator[dict[str, Any]]:
    """The NDJSON lines of ``reply`` streamed: thinking fragments, content
    fragments, the tool calls, then the done line."""

    def line(**message: Any) -> dict[str, Any]:
        return {
            "model": model,
            "created_at": CREATED_AT,
            "message": {"role": "assistant", "content": "", **message},
            "done": False,
        }

    sent = 0
    for piece in _pieces(reply.thinking) if thinking else []:
        yield line(thinking=piece)
        sent += 1
    for piece in _pieces(reply.content):
        yield line(content=piece)
        sent += 1
    if reply.error is not None and sent:
        yield {"error": reply.error}
        return
    if reply.tool_calls:
        yield line(tool_calls=_message(reply, False)["tool_calls"])
    if not reply.cut:
        done = reply_body(model, Reply(), thinking)
        done["message"] = {"role": "assistant", "content": ""}
        yield done


class OllamaEmulator(ScriptedEmulator[Reply]):
    """Scripted replies behind the enforced ``/api/chat`` rules. ``requests``
    holds every body received, accepted or not."""

    def __init__(self, non_thinking_models: Sequence[str] = ("llama3.2",)) -> None:
        self.non_thinking = tuple(non_thinking_models)
        super().__init__()

    def _handle(self, path: str, headers: dict[str, str], body: Any) -> Answer:
        self.requests.append(body)
        if path != "/api/chat":
            return Answer(404, {"error": "404 page not found"})
        check_chat_request(body, self.non_thinking)
        if not self.replies:
            return Answer(500, {"error": "emulator: no scripted reply left"})
        reply = self.replies.popleft()
        thinking = body.get("think") is not False
        if body.get("stream", True) is False:
            return Answer(body=reply_body(body["model"], reply, thinking))
        lines = [json.dumps(e).encode() + b"\n" for e in stream_lines(body["model"], reply, thinking)]
        return Answer(lines=lines, content_type="application/x-ndjson")
