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

Replies are scripted with ``Step``, or with the provider-native ``Reply``
(``queue(Reply(...))``) for a cut stream or an error line. Ollama takes no
credentials: ``require_auth`` checks nothing.
"""

from __future__ import annotations

import base64
import json
import string
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from ._server import BodyProblem, Emulator, Request, RequestRejected, Response, Step

THINK_LEVELS = ("high", "medium", "low", "max")
ROLES = ("system", "user", "assistant", "tool")
CREATED_AT = "2026-11-30T12:00:00.000000Z"


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


class OllamaEmulator(Emulator):
    """Scripted replies behind the enforced ``/api/chat`` rules. A model named in
    ``non_thinking_models`` refuses ``think``."""

    provider = "ollama"
    stream_content_type = "application/x-ndjson"

    def __init__(
        self, non_thinking_models: Sequence[str] = ("llama3.2",), *, port: int = 0, require_auth: bool = False
    ) -> None:
        super().__init__(port=port, require_auth=require_auth)
        self.non_thinking = tuple(non_thinking_models)

    @property
    def thinking_options(self) -> Mapping[str, Any]:
        return MappingProxyType({"think": True})

    def queue(self, *replies: Reply) -> None:
        """Queue provider-native replies (each answers one request)."""
        with self._lock:
            self._script.extend(replies)

    def _reply(self) -> Reply:
        item = self._take()
        if item is None:
            return Reply(content="Done.")
        if isinstance(item, Step):
            calls = [(name, dict(args)) for name, args in item.calls]
            return Reply(content=item.text or "", thinking=item.thinking or "", tool_calls=calls)
        assert isinstance(item, Reply)
        return item

    def _streaming(self, request: Request) -> bool:
        return not (isinstance(request.body, dict) and request.body.get("stream") is False)

    def _malformed_stream(self) -> list[bytes]:
        return [b'{"model": "emulated", "message": {"role": "assis\n']

    def _error(self, status: int, message: str) -> Response:
        return Response(status, {"error": message})

    def _serves(self, request: Request) -> bool:
        return request.path.split("?")[0] == "/api/chat"

    def _invalid_json(self, problem: BodyProblem) -> Response:
        # Go's JSON decoder's wording, which Ollama reports as it is.
        if problem.kind == "depth":
            message = "exceeded max depth (emulator bound)"
        elif problem.at_end:
            message = "unexpected EOF"
        else:
            message = f"invalid character {problem.found!r} looking for beginning of value"
        return Response(400, {"error": message})

    def _too_large(self) -> Response:
        return Response(413, {"error": "http: request body too large"})

    def _answer(self, request: Request) -> Response:
        if request.path.split("?")[0] != "/api/chat":
            return Response(404, {"error": "404 page not found"})
        body = request.body
        if body is None:
            return Response(400, {"error": "invalid JSON body"})
        check_chat_request(body, self.non_thinking)
        reply = self._reply()
        thinking = body.get("think") is not False
        if body.get("stream", True) is False:
            return Response(body=reply_body(body["model"], reply, thinking))
        lines = [json.dumps(e).encode() + b"\n" for e in stream_lines(body["model"], reply, thinking)]
        return Response(chunks=lines, content_type=self.stream_content_type)
