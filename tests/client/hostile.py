"""A hostile HTTP server on 127.0.0.1 for the client tests: it records every
request it receives (``seen``: method, path, lower-cased headers, body) and
answers each with what the test's ``answer`` function returns: any status and
headers, and a body given whole or as an iterable of chunks (sent with chunked
transfer encoding, one HTTP chunk each, for as long as the client reads).
``sent`` counts the body bytes it managed to write."""

from __future__ import annotations

import http.client
import threading
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any
from urllib.parse import urlsplit

_WRITE = 2**16  # bytes written to the socket at once


@dataclass(frozen=True)
class Seen:
    """One request as the server received it."""

    method: str
    path: str
    headers: Mapping[str, str]
    body: bytes


@dataclass
class Answer:
    status: int = 200
    headers: Mapping[str, str] = field(default_factory=dict)
    body: bytes | Iterable[bytes] = b""


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    hostile: Hostile

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # the client hanging up mid-answer is what some tests are about


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server: _Server

    def do_POST(self) -> None:
        self.server.hostile._serve(self)

    do_GET = do_POST

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002
        pass


def _read_body(handler: BaseHTTPRequestHandler) -> bytes:
    if handler.headers.get("transfer-encoding", "").lower() == "chunked":
        body = bytearray()
        while True:
            size = int(handler.rfile.readline().split(b";")[0], 16)
            if size == 0:
                handler.rfile.readline()
                return bytes(body)
            body += handler.rfile.read(size)
            handler.rfile.readline()
    return handler.rfile.read(int(handler.headers.get("content-length") or 0))


class Hostile:
    """``Hostile(answer)``: ``answer(seen, server)`` gives each request's ``Answer``."""

    def __init__(self, answer: Callable[[Seen, Hostile], Answer]) -> None:
        self.answer = answer
        self.seen: list[Seen] = []
        self.sent = 0
        self._lock = threading.Lock()
        self._server = _Server(("127.0.0.1", 0), _Handler)
        self._server.hostile = self
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,), daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def stop(self) -> None:
        self._server.shutdown()
        self._server.server_close()
        self._thread.join(timeout=5)

    def _serve(self, handler: BaseHTTPRequestHandler) -> None:
        seen = Seen(
            handler.command, handler.path, {k.lower(): v for k, v in handler.headers.items()}, _read_body(handler)
        )
        with self._lock:
            self.seen.append(seen)
        answer = self.answer(seen, self)
        handler.send_response(answer.status)
        for name, value in answer.headers.items():
            handler.send_header(name, value)
        try:
            if isinstance(answer.body, bytes):
                handler.send_header("content-length", str(len(answer.body)))
                handler.end_headers()
                handler.wfile.write(answer.body)
                self._count(len(answer.body))
                return
            handler.send_header("transfer-encoding", "chunked")
            handler.end_headers()
            pending, size = bytearray(), 0  # small chunks are written together: one HTTP chunk each still
            for chunk in answer.body:
                pending += b"%x\r\n%s\r\n" % (len(chunk), chunk)
                size += len(chunk)
                if len(pending) >= _WRITE:
                    handler.wfile.write(pending)
                    self._count(size)
                    pending, size = bytearray(), 0
            handler.wfile.write(pending + b"0\r\n\r\n")
            self._count(size)
        except OSError:  # the client stopped reading and hung up
            handler.close_connection = True

    def _count(self, size: int) -> None:
        with self._lock:
            self.sent += size


def forward(seen: Seen, base_url: str, path: str) -> Answer:
    """``seen`` sent on to ``base_url`` + ``path`` (an emulator), and its answer relayed whole."""
    target = urlsplit(base_url)
    skipped = {"host", "content-length", "transfer-encoding", "connection"}
    connection = http.client.HTTPConnection(target.hostname or "127.0.0.1", target.port, timeout=30)
    try:
        headers = {name: value for name, value in seen.headers.items() if name not in skipped}
        connection.request(seen.method, path, body=seen.body, headers=headers)
        response = connection.getresponse()
        body = response.read()
        return Answer(response.status, {"content-type": response.getheader("content-type") or ""}, body)
    finally:
        connection.close()
