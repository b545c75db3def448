"""Shared fixtures of the gateway tests: the gateway served by uvicorn on an
ephemeral loopback port (in a thread of the test process), configured from a
mapping whose routes lead to thinkseal's emulators, and the counts of what the
emulators refused.

Other gateway test modules may import ``serve``, ``Served``, ``anthropic_route``,
``sqlite_url``, ``rejections`` and the fixtures ``gateway`` and ``anthropic_emu``."""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import uvicorn

from thinkseal.gateway import Gateway, app
from thinkseal.testing import emulate
from thinkseal.testing.anthropic import AnthropicEmulator

KEY = "sk-ant-test-key-0123456789abcdef"  # the upstream key the tests look for in logs and answers


class Served:
    """A running gateway: its ``url`` (``http://127.0.0.1:PORT``) and ``app``."""

    def __init__(self, gateway: Gateway, server: uvicorn.Server, thread: threading.Thread, port: int) -> None:
        self.app = gateway
        self.server = server
        self.thread = thread
        self.url = f"http://127.0.0.1:{port}"

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(10)
        assert not self.thread.is_alive(), "the gateway did not stop"


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _bound_port(server: uvicorn.Server) -> int:
    for listener in server.servers:
        for sock in listener.sockets:
            return int(sock.getsockname()[1])
    raise AssertionError("uvicorn is not listening")


@contextmanager
def serve(config: Mapping[str, Any] | Gateway) -> Iterator[Served]:
    """The gateway for ``config`` (a configuration mapping, or a made
    ``Gateway``), listening on 127.0.0.1:0 for the ``with`` block."""
    gateway = config if isinstance(config, Gateway) else app(config)
    server = uvicorn.Server(
        uvicorn.Config(
            gateway,
            host="127.0.0.1",
            port=0,
            log_level="warning",
            lifespan="on",
            access_log=False,
            server_header=False,  # the upstream's own date and server headers are relayed
            date_header=False,
        )
    )
    thread = threading.Thread(target=lambda: asyncio.run(server.serve()), daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if not thread.is_alive() or time.monotonic() > deadline:
            raise AssertionError("the gateway did not start")
        time.sleep(0.005)
    served = Served(gateway, server, thread, _bound_port(server))
    try:
        yield served
    finally:
        served.stop()


def anthropic_route(emu: Any, prefix: str = "/anthropic", **extra: Any) -> dict[str, Any]:
    """A route to the Anthropic emulator ``emu``."""
    return {"prefix": prefix, "provider": "anthropic", "upstream": emu.base_url, **extra}


def sqlite_url(tmp_path: Path, name: str = "ledger.db") -> str:
    return f"sqlite:///{tmp_path / name}"


def rejections(emu: AnthropicEmulator) -> int:
    """How many requests the Anthropic emulator refused with a 400 so far."""
    return len(emu.errors)


@pytest.fixture
def anthropic_emu() -> Iterator[AnthropicEmulator]:
    with emulate("anthropic") as emu:
        assert isinstance(emu, AnthropicEmulator)
        yield emu


@pytest.fixture
def gateway(anthropic_emu: AnthropicEmulator) -> Iterator[Served]:
    """The gateway with one route, /anthropic, to ``anthropic_emu``, and a memory ledger."""
    with serve({"routes": [anthropic_route(anthropic_emu)]}) as served:
        yield served
