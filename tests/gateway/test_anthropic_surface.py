"""The gateway's Anthropic surface driven by the official ``anthropic`` SDK
(only its base URL changed), with thinkseal's Anthropic emulator upstream; the
scenarios also run on Claude on Vertex AI (``AnthropicVertex``, the model in
the path) against the ``vertex-anthropic`` emulator.

Each user-reported failure is played twice: the SDK pointed at the emulator
directly (the control: what a client without thinkseal gets) and through the
gateway. The emulator's 400s are counted each way."""

from __future__ import annotations

import asyncio
import json
import logging
import os
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path
from typing import Any

import anthropic
import httpx
import pytest

from thinkseal.testing import Fault, Step, emulate
from thinkseal.testing.anthropic import AnthropicEmulator

from .conftest import KEY, anthropic_route, rejections, serve, sqlite_url

SONNET = "claude-sonnet-4-5"
OPUS = "claude-opus-4-5"
THINKING = {"type": "enabled", "budget_tokens": 1024}
TOOLS = [
    {
        "name": "lookup",
        "description": "Look a number up.",
        "input_schema": {"type": "object", "properties": {"q": {"type": "integer"}}},
    }
]

Connect = Callable[..., AbstractContextManager[anthropic.Anthropic]]
VERTEX = {"region": "us-east5", "project_id": "test-project", "access_token": "t", "max_retries": 0}


def dump(block: Any) -> dict[str, Any]:
    """A reply block as the client sends it back (the SDK's own model, dumped)."""
    out: dict[str, Any] = block.model_dump(exclude_none=True)
    return out


class Session:
    """A client's conversation: the messages it keeps and re-sends, and how
    many of its requests were refused."""

    def __init__(self, client: anthropic.Anthropic) -> None:
        self.client = client
        self.messages: list[dict[str, Any]] = []
        self.refused = 0
        self.headers: Any = None
        self.last: Any = None

    def send(self, model: str, **extra: Any) -> bool:
        try:
            raw = self.client.messages.with_raw_response.create(
                model=model, max_tokens=2048, thinking=THINKING, tools=TOOLS, messages=self.messages, **extra
            )
        except anthropic.BadRequestError:
            self.refused += 1
            return False
        self.headers = raw.headers
        self.last = raw.parse()
        self.messages.append({"role": "assistant", "content": [dump(b) for b in self.last.content]})
        return True

    def ask(self, model: str, text: str) -> bool:
        self.messages.append({"role": "user", "content": text})
        return self.send(model)

    def results(self, model: str) -> bool:
        calls = [b for b in self.last.content if b.type == "tool_use"]
        self.messages.append(
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": c.id, "content": "42"} for c in calls]}
        )
        return self.send(model)

    def loop(self, emu: AnthropicEmulator, model: str, text: str) -> bool:
        """One tool loop: a question, a call (with thinking), its result, the answer (with thinking)."""
        emu.script(
            Step(thinking="Look it up first.", calls=[("lookup", {"q": 1})]), Step(thinking="Got it.", text="42.")
        )
        return self.ask(model, text) and self.results(model)

    def kept(self) -> int:
        return int(self.headers["thinkseal-kept"])

    def unsealed(self) -> int:
        return int(self.headers["thinkseal-unsealed"])


# -- the scenarios, each a client's session told through ``connect`` ----------------------------------
# ``connect(**gateway_options)`` opens a client: through a gateway with those options (and the route's
# ``models``), or straight to the emulator for the control. They return the session.


def tool_loop(connect: Connect, emu: AnthropicEmulator, tmp_path: Path, via: bool) -> Session:
    with connect() as client:
        session = Session(client)
        session.loop(emu, SONNET, "What is 1?") and session.loop(emu, SONNET, "And 2?")
        if via and not session.refused:
            assert session.kept() == 3
            assert session.unsealed() == 0
    return session


def client_model_switch(connect: Connect, emu: AnthropicEmulator, tmp_path: Path, via: bool) -> Session:
    with connect() as client:
        session = Session(client)
        session.loop(emu, SONNET, "What is 1?") and session.ask(OPUS, "Say it again.")
        if via and not session.refused:
            assert session.kept() == 0
            assert session.unsealed() == 2
            assert session.headers["thinkseal-reasons"] == "origin-mismatch=2"
    return session


def map_model_switch(connect: Connect, emu: AnthropicEmulator, tmp_path: Path, via: bool) -> Session:
    """The operator maps ``claude-opus-x`` to Sonnet, then (a restart later) to Opus."""
    ledger = sqlite_url(tmp_path, "map.db")
    with connect(ledger=ledger, models={"claude-opus-x": SONNET}) as client:
        session = Session(client)
        ok = session.loop(emu, "claude-opus-x" if via else SONNET, "What is 1?")
        if via and ok:
            assert sent_model(emu) == SONNET
            assert session.kept() == 1
    if session.refused:
        return session
    with connect(ledger=ledger, models={"claude-opus-x": OPUS}) as client:
        session.client = client
        session.ask("claude-opus-x" if via else OPUS, "Say it again.")
        if via and not session.refused:
            assert sent_model(emu) == OPUS
            assert session.unsealed() == 2
    return session


def pruning(connect: Connect, emu: AnthropicEmulator, tmp_path: Path, via: bool) -> Session:
    with connect() as client:
        session = Session(client)
        if session.loop(emu, SONNET, "What is 1?") and session.loop(emu, SONNET, "And 2?"):
            del session.messages[:4]  # the first loop pruned: the second's prefix changed
            session.ask(SONNET, "And 3?")
            if via and not session.refused:
                assert session.unsealed() == 2
                assert session.kept() == 0
    return session


def cache_marks_moved(connect: Connect, emu: AnthropicEmulator, tmp_path: Path, via: bool) -> Session:
    with connect() as client:
        session = Session(client)
        if session.loop(emu, SONNET, "What is 1?"):
            session.messages[0] = {
                "role": "user",
                "content": [{"type": "text", "text": "What is 1?", "cache_control": {"type": "ephemeral"}}],
            }
            session.messages[-1]["content"][-1]["cache_control"] = {"type": "ephemeral"}
            session.ask(SONNET, "And 2?")
            if via and not session.refused:
                assert session.kept() == 2
                assert session.unsealed() == 0
    return session


def restart(connect: Connect, emu: AnthropicEmulator, tmp_path: Path, via: bool) -> Session:
    """The gateway restarts on the same SQLite ledger mid tool loop; with
    ``unknown_seals = "unseal"`` only a recognised turn would stay sealed."""
    ledger = sqlite_url(tmp_path, "restart.db")
    with connect(ledger=ledger, unknown_seals="unseal") as client:
        session = Session(client)
        emu.script(
            Step(thinking="Look it up first.", calls=[("lookup", {"q": 1})]), Step(thinking="Got it.", text="42.")
        )
        ok = session.ask(SONNET, "What is 1?")
    if not ok:
        return session
    with connect(ledger=ledger, unknown_seals="unseal") as client:
        session.client = client
        session.results(SONNET)
        if via and not session.refused:
            assert session.kept() == 1
            assert session.unsealed() == 0
    return session


def stale_signature(connect: Connect, emu: AnthropicEmulator, tmp_path: Path, via: bool) -> Session:
    """The provider's keys rotate between two requests: every signature it gave is stale."""
    with connect() as client:
        session = Session(client)
        if session.loop(emu, SONNET, "What is 1?"):
            emu.rotate_keys()
            before = rejections(emu)
            session.ask(SONNET, "And 2?")
            if via and not session.refused:
                assert rejections(emu) == before + 1  # refused once upstream, then sent unsealed
                assert session.headers["thinkseal-recovered"] == "1"
                assert session.unsealed() >= 1
    return session


SCENARIOS = {
    "tool loop": tool_loop,
    "model switch by the client": client_model_switch,
    "model switch by the model map": map_model_switch,
    "pruned history": pruning,
    "cache marks moved": cache_marks_moved,
    "gateway restart": restart,
    "stale signatures": stale_signature,
}


def sent_model(emu: AnthropicEmulator) -> str:
    """The model of the last request the emulator received (in the body, or in Vertex's path)."""
    request = emu.requests[-1]
    if emu.provider == "vertex-anthropic":
        return request.path.rsplit("/models/", 1)[1].split(":")[0]
    return str(request.body["model"])


def sdk(emu: AnthropicEmulator, base_url: str) -> Any:
    """The SDK's client for ``emu``'s provider, at ``base_url`` (Vertex's ends in ``/v1``)."""
    if emu.provider == "vertex-anthropic":
        return anthropic.AnthropicVertex(base_url=base_url + "/v1", **VERTEX)
    return anthropic.Anthropic(base_url=base_url, api_key="k", max_retries=0)


def direct(emu: AnthropicEmulator) -> Connect:
    @contextmanager
    def connect(**_: Any) -> Iterator[anthropic.Anthropic]:
        with sdk(emu, emu.base_url) as client:
            yield client

    return connect


def through(emu: AnthropicEmulator) -> Connect:
    @contextmanager
    def connect(*, models: dict[str, str] | None = None, **options: Any) -> Iterator[anthropic.Anthropic]:
        route = anthropic_route(emu, models=models or {}, provider=emu.provider)
        with serve({"gateway": options, "routes": [route]}) as gw, sdk(emu, gw.url + "/anthropic") as client:
            yield client

    return connect


@pytest.mark.parametrize("provider", ["anthropic", "vertex-anthropic"])
def test_rejections_without_and_with_the_gateway(
    provider: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    table: dict[str, tuple[int, int, int]] = {}
    with emulate(provider) as emu:
        assert isinstance(emu, AnthropicEmulator)
        for name, scenario in SCENARIOS.items():
            emu.clear_script()
            before = rejections(emu)
            without = scenario(direct(emu), emu, tmp_path / "direct", False).refused
            assert rejections(emu) - before == without
            emu.clear_script()
            before = rejections(emu)
            with_ = scenario(through(emu), emu, tmp_path / "gateway", True).refused
            table[name] = (without, with_, rejections(emu) - before)
    with capsys.disabled():
        print(f"\n{provider} scenario: refused without / with the gateway (emulator 400s with the gateway)")
        for name, (a, b, c) in table.items():
            print(f"  {name}: {a} / {b} ({c})")
    assert sum(a for a, _, _ in table.values()) >= 1
    assert all(b == 0 for _, b, _ in table.values()), table
    for name in ("model switch by the client", "model switch by the model map", "pruned history", "stale signatures"):
        assert table[name][0] == 1, name
    assert table["stale signatures"][2] == 1  # the one refusal the gateway recovered from
    assert sum(c for _, _, c in table.values()) == 1


@pytest.fixture(autouse=True)
def _dirs(tmp_path: Path) -> None:
    (tmp_path / "direct").mkdir()
    (tmp_path / "gateway").mkdir()


# -- streaming, the async client, the policy for seals the ledger never saw ------------------------------


def test_stream_relayed_as_events_and_recorded(anthropic_emu: AnthropicEmulator, tmp_path: Path) -> None:
    """``messages.stream``: the SDK gets the events; the ledger records the streamed
    reply, so (with unknown seals unsealed) the next request keeps it."""
    config = {"gateway": {"unknown_seals": "unseal"}, "routes": [anthropic_route(anthropic_emu)]}
    anthropic_emu.script(Step(thinking="Look it up first.", calls=[("lookup", {"q": 1})]))
    with serve(config) as gw, anthropic.Anthropic(base_url=gw.url + "/anthropic", api_key="k") as client:
        messages: list[dict[str, Any]] = [{"role": "user", "content": "What is 1?"}]
        kinds = []
        with client.messages.stream(
            model=SONNET, max_tokens=2048, thinking=THINKING, tools=TOOLS, messages=messages
        ) as stream:
            assert stream.response.headers["thinkseal-kept"] == "0"
            for event in stream:
                kinds.append(event.type)
            reply = stream.get_final_message()
        assert {"message_start", "content_block_delta", "message_stop"} <= set(kinds)
        assert [b.type for b in reply.content] == ["thinking", "tool_use"]
        assert reply.content[0].signature
        call = reply.content[1]
        messages += [
            {"role": "assistant", "content": [dump(b) for b in reply.content]},
            {"role": "user", "content": [{"type": "tool_result", "tool_use_id": call.id, "content": "42"}]},
        ]
        raw = client.messages.with_raw_response.create(
            model=SONNET, max_tokens=2048, thinking=THINKING, tools=TOOLS, messages=messages, stream=True
        )
        assert raw.headers["thinkseal-kept"] == "1"
        assert raw.headers["thinkseal-unsealed"] == "0"
        events = list(raw.parse())
        assert events[-1].type == "message_stop"
    assert rejections(anthropic_emu) == 0


def test_async_client_tool_loop(anthropic_emu: AnthropicEmulator) -> None:
    async def run(url: str) -> list[str]:
        seen = []
        async with anthropic.AsyncAnthropic(base_url=url + "/anthropic", api_key="k") as client:
            messages: list[dict[str, Any]] = [{"role": "user", "content": "What is 1?"}]
            for _ in range(2):
                raw = await client.messages.with_raw_response.create(
                    model=SONNET, max_tokens=2048, thinking=THINKING, tools=TOOLS, messages=messages
                )
                seen.append(raw.headers["thinkseal-kept"])
                reply = await raw.parse()
                messages.append({"role": "assistant", "content": [dump(b) for b in reply.content]})
                calls = [b for b in reply.content if b.type == "tool_use"]
                messages.append(
                    {
                        "role": "user",
                        "content": [{"type": "tool_result", "tool_use_id": c.id, "content": "1"} for c in calls],
                    }
                )
        return seen

    anthropic_emu.script(Step(thinking="One.", calls=[("lookup", {"q": 1})]), Step(thinking="Two.", text="1."))
    with serve({"routes": [anthropic_route(anthropic_emu)]}) as gw:
        assert asyncio.run(run(gw.url)) == ["0", "1"]
    assert rejections(anthropic_emu) == 0


@pytest.mark.parametrize(("policy", "kept", "unsealed"), [("keep", 2, 0), ("unseal", 0, 2)])
def test_unknown_seals_policy(anthropic_emu: AnthropicEmulator, policy: str, kept: int, unsealed: int) -> None:
    """A history the gateway never saw (made straight against the provider):
    ``keep`` forwards its seals as they are, ``unseal`` takes them off."""
    with anthropic.Anthropic(base_url=anthropic_emu.base_url, api_key="k") as client:
        session = Session(client)
        assert session.loop(anthropic_emu, SONNET, "What is 1?")
    config = {"gateway": {"unknown_seals": policy}, "routes": [anthropic_route(anthropic_emu)]}
    with serve(config) as gw, anthropic.Anthropic(base_url=gw.url + "/anthropic", api_key="k") as client:
        session.client = client
        assert session.ask(SONNET, "And 2?")
    assert (session.kept(), session.unsealed()) == (kept, unsealed)
    sent = anthropic_emu.requests[-1].body["messages"]
    assert sum(b["type"] == "thinking" for m in sent if m["role"] == "assistant" for b in m["content"]) == kept
    assert rejections(anthropic_emu) == 0


# -- the gateway's own answers: headers, health, metrics, refusals, secrets ------------------------------


def _post(url: str, body: bytes, **headers: str) -> httpx.Response:
    return httpx.post(url, content=body, headers={"content-type": "application/json", **headers}, timeout=10)


def test_decision_headers_on_every_answer(anthropic_emu: AnthropicEmulator, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("TS_TEST_TOKENS", "tok-a,tok-b")
    config = {
        "gateway": {"client_tokens_env": "TS_TEST_TOKENS", "max_body": 4096},
        "routes": [anthropic_route(anthropic_emu)],
    }
    auth = {"x-api-key": "k", "x-thinkseal-token": "tok-a", "anthropic-version": "2023-06-01"}
    body = json.dumps({"model": SONNET, "max_tokens": 10, "messages": [{"role": "user", "content": "hi"}]}).encode()
    with serve(config) as gw:
        base = gw.url + "/anthropic"
        answers = {
            "health": httpx.get(gw.url + "/healthz"),
            "metrics": httpx.get(gw.url + "/metrics"),
            "no route": _post(gw.url + "/elsewhere/v1/messages", body, **auth),
            "no token": _post(base + "/v1/messages", body, **{"x-api-key": "k"}),
            "wrong token": _post(base + "/v1/messages", body, **{**auth, "x-thinkseal-token": "tok-c"}),
            "too large": _post(base + "/v1/messages", b" " * 5000 + body, **auth),
            "passed through": httpx.get(base + "/v1/models", headers=auth),
            "decided": _post(base + "/v1/messages", body, **auth),
        }
        anthropic_emu.fault(Fault.error(529))
        answers["upstream error"] = _post(base + "/v1/messages", body, **{**auth, "x-thinkseal-token": "tok-b"})
    statuses = {name: r.status_code for name, r in answers.items()}
    assert statuses == {
        "health": 200,
        "metrics": 200,
        "no route": 404,
        "no token": 401,
        "wrong token": 401,
        "too large": 413,
        "passed through": statuses["passed through"],
        "decided": 200,
        "upstream error": 529,
    }
    for name, response in answers.items():
        assert response.headers.get("thinkseal-kept") == "0", name
        assert response.headers.get("thinkseal-unsealed") == "0", name
    assert answers["health"].json() == {"status": "ok"}
    # No open proxy: the unknown prefix never reached the emulator; the refused requests neither.
    assert [r.path for r in anthropic_emu.requests] == ["/v1/models", "/v1/messages", "/v1/messages"]


def test_metrics_count_decisions(anthropic_emu: AnthropicEmulator) -> None:
    with serve({"routes": [anthropic_route(anthropic_emu)]}) as gw:
        with anthropic.Anthropic(base_url=gw.url + "/anthropic", api_key="k") as client:
            session = Session(client)
            assert session.loop(anthropic_emu, SONNET, "What is 1?")
            assert session.ask(OPUS, "Again?")
        text = httpx.get(gw.url + "/metrics").text
    assert "# TYPE thinkseal_gateway_requests_total counter" in text
    assert 'thinkseal_gateway_requests_total{route="/anthropic",status="200"} 3' in text
    assert 'thinkseal_gateway_turns_kept_total{route="/anthropic"} 1' in text
    assert 'thinkseal_gateway_turns_unsealed_total{reason="origin-mismatch",route="/anthropic"} 2' in text
    assert 'thinkseal_gateway_request_seconds_count{route="/anthropic"} 3' in text


def test_keys_never_logged_nor_echoed(
    anthropic_emu: AnthropicEmulator, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    """The route's upstream key replaces the client's credential: it reaches the
    provider, and neither a log record nor an answer carries it."""
    monkeypatch.setenv("TS_TEST_KEY", KEY)
    caplog.set_level(logging.DEBUG)
    config = {"routes": [anthropic_route(anthropic_emu, api_key_env="TS_TEST_KEY")]}
    answers: list[httpx.Response] = []
    with (
        serve(config) as gw,
        anthropic.Anthropic(base_url=gw.url + "/anthropic", api_key="client-key", max_retries=0) as client,
    ):
        session = Session(client)
        assert session.loop(anthropic_emu, SONNET, "What is 1?")
        anthropic_emu.fault(Fault.error(500))
        with pytest.raises(anthropic.InternalServerError) as failed:
            session.ask(SONNET, "Again?")
        answers.append(failed.value.response)
        answers.append(httpx.get(gw.url + "/anthropic/v1/models", headers={"x-api-key": "client-key"}))
        answers.append(httpx.get(gw.url + "/metrics"))
        assert repr(gw.app.config.routes[0]).count(KEY) == 0
    assert {r.headers["x-api-key"] for r in anthropic_emu.requests} == {KEY}
    assert caplog.records
    assert any(r.name == "thinkseal.gateway" for r in caplog.records)
    logged = "\n".join(r.getMessage() + repr(r.args) for r in caplog.records)
    assert KEY not in logged
    assert "client-key" not in logged
    for response in answers:
        assert KEY not in response.text
        assert KEY not in str(response.headers)
    assert os.environ["TS_TEST_KEY"] == KEY
