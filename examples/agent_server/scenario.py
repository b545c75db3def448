"""Drive one of the agent-server example apps through what users report, at scale.

Starts thinkseal's Anthropic and OpenRouter emulators (real loopback HTTP
servers that refuse what the providers refuse, with their error bodies), runs
the app under uvicorn on 127.0.0.1, and takes N concurrent sessions through
the same steps: a thinking tool loop, a streamed tool loop, pruning the
oldest exchange, a restart of the server on the same store, a Claude model
switch (Sonnet -> Opus), a provider switch (Anthropic -> OpenRouter ->
Anthropic). Prints a JSON summary: requests made, the emulators' 4xx answers
(provider rejections) per step, whether the restart happened, and the line
counts of both app files.

    python -m examples.agent_server.scenario --app thinkseal --sessions 200
    python examples/agent_server/scenario.py --app pydantic-ai --sessions 200
"""

from __future__ import annotations

import argparse
import asyncio
import json
import socket
import sys
import tempfile
import threading
import time
import tokenize
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

import httpx
import uvicorn

if not __package__:  # run by path: the repository root makes `examples` importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[2]))

from examples.agent_server import app_pydantic_ai, app_thinkseal
from thinkseal.testing import Step, emulate

APPS = {"thinkseal": app_thinkseal, "pydantic-ai": app_pydantic_ai}
HERE = Path(__file__).resolve().parent
KEY = "test-key"  # the emulators take any key


# -- the app under uvicorn ------------------------------------------------------------------


class AppServer:
    """One uvicorn server of ``app`` in a thread, on a given port of 127.0.0.1 (0: any free one)."""

    def __init__(self, app: Any, port: int = 0) -> None:
        self.sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("127.0.0.1", port))
        self.port = self.sock.getsockname()[1]
        config = uvicorn.Config(
            app,
            log_level="warning",
            timeout_graceful_shutdown=30,
            backlog=2048,
            # Phases end when their slowest session does: idle connections are kept for the next one.
            timeout_keep_alive=600,
        )
        self.server = uvicorn.Server(config)
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [self.sock]}, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def __enter__(self) -> AppServer:
        self.thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("uvicorn did not start")
            time.sleep(0.01)
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=60)
        self.sock.close()


# -- counting what the providers refuse ---------------------------------------------------


class Rejections:
    """Counts an emulator's 4xx answers (``Emulator.rejections``) per scenario
    step, with the provider's error messages."""

    def __init__(self, emulator: Any) -> None:
        self.emulator = emulator
        self.seen = 0
        self.by_step: Counter[str] = Counter()
        self.messages: Counter[str] = Counter()

    def take(self, step: str) -> None:
        """Count the rejections since the last call as ``step``'s."""
        new = self.emulator.rejections[self.seen :]
        self.seen += len(new)
        self.by_step[step] += len(new)
        for refused in new:
            body = refused.body if isinstance(refused.body, dict) else {}
            error = body.get("error") if isinstance(body.get("error"), dict) else {}
            self.messages[str(error.get("message", ""))[:160]] += 1


# -- one session's steps ------------------------------------------------------------------


class Driver:
    """The scenario's HTTP calls to the app, counted per step."""

    def __init__(self) -> None:
        self.step = "start"
        self.requests: Counter[str] = Counter()
        self.failures: Counter[str] = Counter()
        self.first_failure: dict[str, str] = {}  # session -> the step it first failed at
        self.streamed_text = 0
        self.transport_errors = 0  # requests the app never answered (a broken connection)

    def failed(self, session: str) -> None:
        self.failures[self.step] += 1
        self.first_failure.setdefault(session, self.step)

    async def post(self, http: httpx.AsyncClient, session: str, path: str, body: dict[str, Any]) -> None:
        self.requests[self.step] += 1
        try:
            response = await http.post(f"/sessions/{session}/{path}", json=body)
        except httpx.TransportError:
            self.transport_errors += 1
            self.failed(session)
            return
        if response.status_code != 200:
            self.failed(session)

    async def message(self, http: httpx.AsyncClient, session: str, prompt: str) -> None:
        # Users do not all type the same words: each session's prompts are its own.
        await self.post(http, session, "messages", {"prompt": f"{prompt} ({session})"})

    async def stream(self, http: httpx.AsyncClient, session: str, prompt: str) -> None:
        self.requests[self.step] += 1
        events: list[str] = []
        params = {"prompt": f"{prompt} ({session})"}
        try:
            async with http.stream("GET", f"/sessions/{session}/stream", params=params) as response:
                async for line in response.aiter_lines():
                    if line.startswith("event: "):
                        events.append(line.removeprefix("event: "))
                    elif line.startswith("data: ") and not events:
                        self.streamed_text += len(json.loads(line.removeprefix("data: ")))
        except httpx.TransportError:  # the app broke off the stream
            self.transport_errors += 1
            events.append("broken")
        if events != ["done"]:
            self.failed(session)

    async def switch(self, http: httpx.AsyncClient, session: str, provider: str, model: str) -> None:
        await self.post(http, session, "model", {"provider": provider, "model": model})

    async def prune(self, http: httpx.AsyncClient, session: str, keep: int) -> None:
        await self.post(http, session, "prune", {"keep": keep})


def tool_loops(emulator: Any, runs: int) -> None:
    """Script ``runs`` agent runs: a signed-thinking tool call, then a signed-thinking answer.

    The emulator answers from one queue, whichever session asks: with runs
    interleaved, a run takes the next step whatever it is, and ends at the
    first text, so ``runs`` texts end ``runs`` runs (some with two tool calls,
    some with none)."""
    emulator.clear_script()
    for k in range(runs):
        call = ("get_weather", {"city": "Paris"}) if k % 2 else ("lookup", {"topic": "Rome"})
        emulator.script(
            Step(thinking="I should check with a tool first.", calls=[call]),
            Step(thinking="I have what I need.", text="It is 18°C in Paris and sunny in Rome."),
        )


# -- the run --------------------------------------------------------------------------------


Phase = tuple[str, Any, Callable[[Driver, httpx.AsyncClient, str], Awaitable[None]]]

BEFORE_RESTART: list[Phase] = [
    ("tool loop", "anthropic", lambda d, h, s: d.message(h, s, "What's the weather in Paris?")),
    ("streamed tool loop", "anthropic", lambda d, h, s: d.stream(h, s, "And in Rome? Look it up too.")),
]
AFTER_RESTART: list[Phase] = [
    ("after restart", "anthropic", lambda d, h, s: d.message(h, s, "Still with me? Paris again, please.")),
    ("switch to opus", None, lambda d, h, s: d.switch(h, s, "anthropic", "claude-opus-4-1")),
    ("after model switch", "anthropic", lambda d, h, s: d.message(h, s, "And tomorrow?")),
    ("switch to openrouter", None, lambda d, h, s: d.switch(h, s, "openrouter", "anthropic/claude-sonnet-4.5")),
    ("on openrouter", "openrouter", lambda d, h, s: d.message(h, s, "Weather in Oslo?")),
    ("back to anthropic", None, lambda d, h, s: d.switch(h, s, "anthropic", "claude-sonnet-4-5")),
    ("back on anthropic", "anthropic", lambda d, h, s: d.message(h, s, "Which city is warmest?")),
    ("prune", None, lambda d, h, s: d.prune(h, s, 1)),
    ("after pruning", "anthropic", lambda d, h, s: d.message(h, s, "What should I pack?")),
]


async def phases(
    driver: Driver, url: str, sessions: int, steps: list[Phase], emulators: dict[str, Any], counted: list[Rejections]
) -> None:
    limits = httpx.Limits(max_connections=sessions, max_keepalive_connections=sessions)
    async with httpx.AsyncClient(base_url=url, limits=limits, timeout=600) as http:
        for name, upstream, call in steps:
            driver.step = name
            if upstream is not None:
                tool_loops(emulators[upstream], sessions)
            await asyncio.gather(*(call(driver, http, f"session-{k}") for k in range(sessions)))
            for count in counted:
                count.take(name)


def run(app: str, sessions: int, store: str | None = None) -> dict[str, Any]:
    """Run the scenario for ``app`` ("thinkseal" or "pydantic-ai") with ``sessions`` concurrent sessions."""
    module = APPS[app]
    driver = Driver()
    started = time.monotonic()
    with (
        tempfile.TemporaryDirectory() as tmp,
        emulate("anthropic") as anthropic,
        emulate("openrouter") as openrouter,
    ):
        emulators = {"anthropic": anthropic, "openrouter": openrouter}
        counted = [Rejections(emu) for emu in emulators.values()]
        path = store or str(Path(tmp) / "sessions.db")

        def create() -> Any:
            return module.create_app(
                path,
                anthropic_url=anthropic.base_url,
                anthropic_key=KEY,
                openrouter_url=openrouter.base_url,
                openrouter_key=KEY,
            )

        with AppServer(create()) as first:
            asyncio.run(phases(driver, first.url, sessions, BEFORE_RESTART, emulators, counted))
        # A new process in all but name: a new app object on the same store file and the same port.
        with AppServer(create(), first.port) as second:
            restarted = second.port == first.port and not first.thread.is_alive()
            asyncio.run(phases(driver, second.url, sessions, AFTER_RESTART, emulators, counted))
        rejections = Counter[str]()
        messages = Counter[str]()
        for count in counted:
            rejections.update(count.by_step)
            messages.update(count.messages)
        upstream = {name: len(emu.requests) for name, emu in emulators.items()}
        sealed = {name: sum(1 for r in emu.requests if replays_seal(r.body)) for name, emu in emulators.items()}
    return {
        "app": app,
        "sessions": sessions,
        "seconds": round(time.monotonic() - started, 1),
        "app_requests": sum(driver.requests.values()),
        "app_failures": sum(driver.failures.values()),
        "app_transport_errors": driver.transport_errors,
        "upstream_requests": upstream,
        "upstream_requests_replaying_sealed_thinking": sealed,
        "rejections": sum(rejections.values()),
        "rejections_by_step": dict(rejections),
        "failures_by_step": dict(driver.failures),
        "sessions_failed": len(driver.first_failure),
        "sessions_first_failed_at": dict(Counter(driver.first_failure.values())),
        "rejection_messages": dict(messages.most_common(5)),
        "streamed_characters": driver.streamed_text,
        "restarted": restarted,
        "lines": line_counts(),
    }


def replays_seal(body: Any) -> bool:
    """Whether a request sends back sealed thinking: Claude's signed blocks, OpenRouter's reasoning details."""
    messages = body.get("messages", []) if isinstance(body, dict) else []
    for message in messages:
        if message.get("reasoning_details"):
            return True
        content = message.get("content")
        if isinstance(content, list) and any(b.get("type") == "thinking" and b.get("signature") for b in content):
            return True
    return False


def code_lines(path: Path) -> int:
    """Non-blank lines that are not only a comment."""
    lines = path.read_text(encoding="utf-8").splitlines()
    return sum(1 for line in lines if line.strip() and not line.strip().startswith("#"))


def code_lines_without_docstrings(path: Path) -> int:
    """As ``code_lines``, leaving out docstrings too (strings standing alone as statements)."""
    with path.open("rb") as f:
        tokens = list(tokenize.tokenize(f.readline))
    lines: set[int] = set()
    skip = {tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT, tokenize.ENCODING}
    previous = tokenize.NEWLINE
    for token in tokens:
        alone = token.type == tokenize.STRING and previous in (
            tokenize.NEWLINE,
            tokenize.INDENT,
            tokenize.DEDENT,
            tokenize.ENCODING,
        )
        if token.type not in skip and token.type != tokenize.ENDMARKER and not alone:
            lines.update(range(token.start[0], token.end[0] + 1))
        if token.type not in (tokenize.COMMENT, tokenize.NL):
            previous = token.type if not alone else tokenize.NEWLINE
    return len(lines)


def line_counts() -> dict[str, dict[str, int]]:
    return {
        name: {"code": code_lines(HERE / name), "code_without_docstrings": code_lines_without_docstrings(HERE / name)}
        for name in ("app_thinkseal.py", "app_pydantic_ai.py")
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--app", choices=sorted(APPS), required=True)
    parser.add_argument("--sessions", type=int, default=200)
    parser.add_argument("--store", help="the app's SQLite file (default: a temporary one)")
    args = parser.parse_args(argv)
    print(json.dumps(run(args.app, args.sessions, args.store), indent=2, ensure_ascii=False))


if __name__ == "__main__":
    main()
