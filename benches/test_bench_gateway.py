"""Benchmark (pytest-benchmark) smoke of the gateway: one Anthropic request of
about 10k tokens, every turn recorded in the gateway's ledger first, through
the gateway under uvicorn to the bench's fake upstream. ``python -m
benches.gateway`` runs the whole comparison (the floor, LiteLLM, 1M tokens,
the soak, the profile)."""

from __future__ import annotations

import asyncio
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
import uvicorn

from .gateway import (
    HEADERS,
    KEY,
    PREFIX,
    Upstream,
    _uvicorn_config,
    assistant_turns,
    body,
    conversation,
    free_port,
    gateway_app,
    messages_for,
    preload,
    serve_upstream,
)


class Running:
    """A coroutine-served thing on its own event loop in a thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coroutine: Any, timeout: float = 30) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


@pytest.fixture(scope="module")
def served() -> Iterator[dict[str, Any]]:
    conv = conversation(messages_for(10_000))
    upstream_port = free_port()
    upstream = Running()
    listener = upstream.run(serve_upstream(upstream_port))
    gateway = gateway_app(f"http://127.0.0.1:{upstream_port}")
    server = uvicorn.Server(_uvicorn_config(gateway, free_port()))
    host = Running()
    recorded = host.run(preload(gateway, conv))
    serving = asyncio.run_coroutine_threadsafe(server.serve(), host.loop)
    deadline = time.monotonic() + 10
    while not server.started:
        assert not serving.done(), "the gateway did not start"
        assert time.monotonic() < deadline, "the gateway did not start in time"
        time.sleep(0.005)
    try:
        yield {"conv": conv, "recorded": recorded, "url": f"http://127.0.0.1:{server.config.port}{PREFIX}/v1/messages"}
    finally:
        server.should_exit = True
        serving.result(10)
        host.stop()
        upstream.loop.call_soon_threadsafe(listener.close)
        upstream.stop()


@pytest.mark.benchmark(group="gateway")
def test_gateway_request_10k_tokens(benchmark: Any, served: dict[str, Any]) -> None:
    payload = body(served["conv"])
    before = Upstream.stats["requests"]
    with httpx.Client(timeout=30) as client:
        response = benchmark(lambda: client.post(served["url"], content=payload, headers=HEADERS))
    assert response.status_code == 200, response.text
    assert Upstream.stats["requests"] > before
    # Every turn recognised and kept: the body reached the upstream byte for byte, with the route's key.
    assert response.headers["thinkseal-kept"] == str(assistant_turns(served["conv"]))
    assert served["recorded"] == assistant_turns(served["conv"])
    assert response.headers["thinkseal-unsealed"] == "0"
    assert Upstream.stats["last_body"] == payload
    assert Upstream.stats["last_headers"]["x-api-key"] == KEY
