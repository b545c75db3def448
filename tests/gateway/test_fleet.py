"""A fleet: two gateway processes (``thinkseal gateway``) sharing one seal
ledger, behind a client that alternates between them request by request. A
reply one gateway recorded is honoured by the other: with ``unknown_seals =
"unseal"`` a turn stays sealed only if the ledger knows it, so every kept
turn below was recognised across processes. SQLite always; PostgreSQL and
Redis on the servers the store tests use (THINKSEAL_TEST_POSTGRES,
THINKSEAL_TEST_REDIS; skipped loudly locally, failed under CI=true when absent)."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import uuid
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import anthropic
import pytest

from thinkseal.testing import Step
from thinkseal.testing.anthropic import AnthropicEmulator

from ..store.conftest import server_url
from .conftest import anthropic_route, rejections
from .test_anthropic_surface import SONNET, Session


@contextmanager
def gateway_process(config: dict[str, Any], path: Path) -> Iterator[str]:
    """``thinkseal gateway`` on a free port for the block; its base URL."""
    path.write_text(json.dumps(config))
    process = subprocess.Popen(
        [sys.executable, "-m", "thinkseal", "gateway", "--config", str(path), "--port", "0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        url = process.stdout.readline().strip()
        assert url, process.communicate(timeout=10)[1]
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        _, err = process.communicate(timeout=15)
        assert process.returncode == 0, err


class RoundRobin:
    """The session's requests go to each gateway in turn."""

    def __init__(self, session: Session, clients: list[anthropic.Anthropic]) -> None:
        self.session = session
        self.clients = clients
        self.sent = 0

    def next(self) -> Session:
        self.session.client = self.clients[self.sent % len(self.clients)]
        self.sent += 1
        return self.session


def ledger_of(backend: str, tmp_path: Path) -> dict[str, str]:
    if backend == "sqlite":
        return {"ledger": f"sqlite:///{tmp_path / 'fleet.db'}"}
    return {"ledger": server_url(backend), "ledger_namespace": f"gw{uuid.uuid4().hex[:12]}"}


@pytest.mark.parametrize("backend", ["sqlite", "postgres", "redis"])
def test_a_reply_recorded_by_one_gateway_is_honoured_by_the_other(
    anthropic_emu: AnthropicEmulator, tmp_path: Path, backend: str
) -> None:
    gateway = {"unknown_seals": "unseal", **ledger_of(backend, tmp_path)}
    config = {"gateway": gateway, "routes": [anthropic_route(anthropic_emu)]}
    with ExitStack() as stack:
        urls = [stack.enter_context(gateway_process(config, tmp_path / f"gw{n}.json")) for n in range(2)]
        clients = [stack.enter_context(anthropic.Anthropic(base_url=u + "/anthropic", api_key="k")) for u in urls]
        rr = RoundRobin(Session(clients[0]), clients)
        anthropic_emu.script(
            Step(thinking="Look it up.", calls=[("lookup", {"q": 1})]),
            Step(thinking="Now the second.", calls=[("lookup", {"q": 2})]),
            Step(thinking="Both known.", text="3."),
        )
        assert rr.next().ask(SONNET, "What is 1 + 2?")  # gateway 0 records turn 1
        kept = []
        for _ in range(2):
            assert rr.next().results(SONNET)  # the other gateway continues the loop sealed
            kept.append((rr.session.kept(), rr.session.unsealed()))
    assert kept == [(1, 0), (2, 0)]
    assert rejections(anthropic_emu) == 0
