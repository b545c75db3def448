"""The gateway under uvicorn on an ephemeral 127.0.0.1 port, for the Gemini
surface's tests: ``serving(config)`` starts it in a thread and yields its
base URL; leaving the block shuts it down (its ledger closed)."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from typing import Any

import uvicorn

from thinkseal.gateway import app


@contextmanager
def serving(config: Mapping[str, Any]) -> Iterator[str]:
    """The gateway for ``config`` (its decoded tables), served until the block ends."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app(config), log_level="warning", lifespan="on"))
    thread = threading.Thread(target=lambda: asyncio.run(server.serve(sockets=[sock])), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise RuntimeError("the gateway did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(10)
        sock.close()
