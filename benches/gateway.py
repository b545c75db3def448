"""The gateway side by side with a plain pass-through proxy (the floor) and
LiteLLM's proxy, in one run, over loopback HTTP to a fast fake Anthropic
upstream written here (canned JSON answer and canned SSE stream; an
``asyncio.Protocol`` server, so it is never the bottleneck).

Each proxy is served by uvicorn in its own process pinned to core 0 (so
"requests per core" is the server's CPU seconds, read from /proc); the load
generator and the upstream share core 1. The workload: Anthropic tool-loop
histories of about 10k, 100k and 1M tokens (4 bytes a token of JSON), every
assistant turn signed and recorded first in the gateway's (memory) ledger, so
the gateway recognises, decides and keeps every turn, as in production.

Measured per proxy and size: the latency added over the upstream called
directly (p50, p99, sequential requests), the time to the first streamed byte,
requests per second at concurrency 8 and requests per server CPU-second; then
a soak of the gateway at 100k tokens (RSS every 500 requests) and a cProfile
of the gateway at 100k tokens.

    python -m benches.gateway                      # about 5 minutes
    python -m benches.gateway --quick              # under a minute
    python -m benches.gateway --json out.json --litellm-path DIR

LiteLLM's proxy needs ``litellm[proxy]``; ``--litellm-path`` adds a directory
holding its extra dependencies to the LiteLLM server's ``sys.path`` only.
Without it the LiteLLM column is left out and said why.
"""

from __future__ import annotations

import argparse
import asyncio
import cProfile
import importlib.util
import json
import os
import pstats
import signal
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from contextlib import suppress
from pathlib import Path
from typing import Any, ClassVar

import httpx
import uvicorn

from thinkseal import AssistantMessage, Conversation, Origin, SystemMessage, ThinkingBlock, Tool, UserMessage, provider
from thinkseal.gateway import Config, Gateway, Route, app
from thinkseal.gateway._app import account_of
from thinkseal.gateway._config import DEFAULT_ACCOUNT_KEY
from thinkseal.testing import respond

from ._workload import message

MODEL = "claude-sonnet-4-5"
KEY = "sk-ant-bench-upstream-key-0123456789"  # the route's upstream key (the gateway's account is its hash)
PREFIX = "/anthropic"
LITELLM_MASTER_KEY = "sk-bench-litellm-master-key-0123456789abcdef"  # LiteLLM's proxy refuses to start without one
MARK = b"@@@@@@@@"  # in the last user message: the soak makes every body unique by replacing it
BYTES_PER_TOKEN = 4
SIZES: dict[str, int] = {"10k": 10_000, "100k": 100_000, "1M": 1_000_000}
SERVER_CPU = 0
CLIENT_CPU = 1
ROOT = Path(__file__).resolve().parents[1]


# -- workload -------------------------------------------------------------------------------------


def _origin() -> Origin:
    return Origin("anthropic", MODEL, account_of(DEFAULT_ACCOUNT_KEY, KEY))


def conversation(n: int) -> Conversation:
    """A system prompt, ``n`` (rounded up to end on a tool result) tool-loop
    messages (``benches._workload.message``, each thinking signed with its own
    signature) with every assistant turn bound as the gateway's upstream would
    have bound it, and a last user message carrying ``MARK``."""

    origin = _origin()
    conv = Conversation([SystemMessage("You are a research agent. Use the search tool.")], [Tool("search")])
    for i in range(-(-n // 3) * 3):
        m = message(i)
        if isinstance(m, AssistantMessage):
            signed = [ThinkingBlock.Text(m.thinking_text, f"EqSig{i:08d}" + "s" * 100)]
            conv = respond(conv, origin, AssistantMessage(m.content, m.tool_calls, signed))
        else:
            conv = conv.append(m)
    return conv.append(UserMessage(f"next step {MARK.decode()}"))


def body(conv: Conversation, stream: bool = False) -> bytes:
    """The request body a client holding ``conv`` sends (signatures in, no bindings on the wire)."""

    req = provider("anthropic", account=_origin().account).prepare(
        conv, model=MODEL, stream=stream, max_tokens=4096, thinking={"type": "enabled", "budget_tokens": 1024}
    )
    assert all(entry.kept for entry in req.report), "the workload replays every turn sealed"
    return bytes(req.content)


def messages_for(tokens: int) -> int:
    """How many tool-loop messages make a body of about ``tokens`` tokens."""
    probe = 300
    per_message = len(body(conversation(probe))) / probe
    return max(3, round(tokens * BYTES_PER_TOKEN / per_message))


def assistant_turns(conv: Conversation) -> int:

    return sum(1 for m in conv if isinstance(m, AssistantMessage) and m.has_sealed_thinking)


# -- the fake upstream ----------------------------------------------------------------------------

_THINKING = "The user wants the next search. " * 8


def canned_message(i: int) -> bytes:
    return json.dumps(
        {
            "id": f"msg_bench_{i}",
            "type": "message",
            "role": "assistant",
            "model": MODEL,
            "content": [
                {"type": "thinking", "thinking": _THINKING, "signature": f"EqBench{i:012d}" + "A" * 64},
                {"type": "tool_use", "id": f"toolu_bench_{i}", "name": "search", "input": {"query": "next", "page": i}},
            ],
            "stop_reason": "tool_use",
            "stop_sequence": None,
            "usage": {"input_tokens": 1000, "output_tokens": 50},
        },
        separators=(",", ":"),
    ).encode()


def canned_stream(i: int) -> list[bytes]:
    """The SSE events of the same answer, one chunk each."""
    start = json.loads(canned_message(i))
    start.update(content=[], stop_reason=None, usage={"input_tokens": 1000, "output_tokens": 1})
    thinking = {"type": "thinking", "thinking": "", "signature": ""}
    tool = {"type": "tool_use", "id": f"toolu_bench_{i}", "name": "search", "input": {}}
    deltas = [
        (0, {"type": "thinking_delta", "thinking": _THINKING}),
        (0, {"type": "signature_delta", "signature": f"EqBench{i:012d}" + "A" * 64}),
        (1, {"type": "input_json_delta", "partial_json": json.dumps({"query": "next", "page": i})}),
    ]
    events: list[dict[str, Any]] = [
        {"type": "message_start", "message": start},
        {"type": "content_block_start", "index": 0, "content_block": thinking},
        *({"type": "content_block_delta", "index": k, "delta": d} for k, d in deltas[:2]),
        {"type": "content_block_stop", "index": 0},
        {"type": "content_block_start", "index": 1, "content_block": tool},
        {"type": "content_block_delta", "index": 1, "delta": deltas[2][1]},
        {"type": "content_block_stop", "index": 1},
        {
            "type": "message_delta",
            "delta": {"stop_reason": "tool_use", "stop_sequence": None},
            "usage": {"output_tokens": 50},
        },
        {"type": "message_stop"},
    ]
    return [f"event: {e['type']}\ndata: {json.dumps(e, separators=(',', ':'))}\n\n".encode() for e in events]


class Upstream(asyncio.Protocol):
    """A keep-alive HTTP/1.1 server answering every POST with the canned
    message (``"stream":true`` in the body: the canned stream, chunked), and
    ``GET /stats`` with what it received. Bodies need a Content-Length."""

    stats: ClassVar[dict[str, Any]] = {"requests": 0, "bytes": 0, "last_body": b"", "last_headers": {}}

    def __init__(self) -> None:
        self.buffer = bytearray()
        self.head: bytes | None = None
        self.need = 0

    def connection_made(self, transport: Any) -> None:
        self.transport = transport

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while True:
            if self.head is None:
                end = self.buffer.find(b"\r\n\r\n")
                if end < 0:
                    return
                self.head = bytes(self.buffer[:end])
                del self.buffer[: end + 4]
                self.need = 0
                for line in self.head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        self.need = int(value)
            if len(self.buffer) < self.need:
                return
            received = bytes(self.buffer[: self.need])
            del self.buffer[: self.need]
            head, self.head = self.head, None
            self.answer(head, received)

    def answer(self, head: bytes, received: bytes) -> None:
        request_line = head.split(b"\r\n", 1)[0]
        if request_line.startswith(b"GET /stats"):
            stats = {k: v for k, v in self.stats.items() if k != "last_body"}
            self._whole(json.dumps(stats).encode())
            return
        stats = self.stats
        stats["requests"] += 1
        stats["bytes"] += len(received)
        stats["last_body"] = received
        stats["last_headers"] = {
            k.strip().decode("latin-1").lower(): v.strip().decode("latin-1")
            for k, _, v in (line.partition(b":") for line in head.split(b"\r\n")[1:])
        }
        i = stats["requests"]
        if b'"stream":true' in received or b'"stream": true' in received:
            self.transport.write(
                b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n"
                b"request-id: req_bench\r\n\r\n"
            )
            for chunk in canned_stream(i):
                self.transport.write(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            self.transport.write(b"0\r\n\r\n")
        else:
            self._whole(canned_message(i))

    def _whole(self, payload: bytes) -> None:
        self.transport.write(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nrequest-id: req_bench\r\n"
            b"content-length: %d\r\n\r\n%s" % (len(payload), payload)
        )


async def serve_upstream(port: int) -> asyncio.AbstractServer:
    loop = asyncio.get_running_loop()
    return await loop.create_server(Upstream, "127.0.0.1", port)


# -- the floor: a plain pass-through proxy --------------------------------------------------------

_HOP = frozenset({b"connection", b"keep-alive", b"transfer-encoding", b"te", b"trailer", b"upgrade", b"host"})


def floor_app(upstream: str, prefix: str = PREFIX) -> Callable[..., Awaitable[None]]:
    """The least a proxy does: read the body, forward it with httpx, relay the answer as it comes."""

    state: dict[str, Any] = {}

    async def app(scope: Mapping[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] == "lifespan":
            while True:
                message = await receive()
                if message["type"] == "lifespan.startup":
                    state["http"] = httpx.AsyncClient(timeout=600)
                    await send({"type": "lifespan.startup.complete"})
                else:
                    await state["http"].aclose()
                    await send({"type": "lifespan.shutdown.complete"})
                    return
        chunks = []
        more = True
        while more:
            message = await receive()
            chunks.append(message.get("body", b""))
            more = message.get("more_body", False)
        headers = [(k, v) for k, v in scope["headers"] if k not in _HOP and k != b"content-length"]
        path = scope["path"].removeprefix(prefix)
        request = state["http"].build_request(
            scope["method"], upstream + path, content=b"".join(chunks), headers=headers
        )
        response = await state["http"].send(request, stream=True)
        try:
            relayed = [
                (k, v) for k, v in response.headers.raw if k.lower() not in _HOP and k.lower() != b"content-length"
            ]
            await send({"type": "http.response.start", "status": response.status_code, "headers": relayed})
            async for chunk in response.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
            await send({"type": "http.response.body", "body": b"", "more_body": False})
        finally:
            await response.aclose()

    return app


# -- the gateway ----------------------------------------------------------------------------------


def gateway_app(upstream: str, read_cache_mib: int | None = None) -> Gateway:

    route = Route(PREFIX, "anthropic", upstream, api_key=KEY)
    if read_cache_mib is None:
        return app(Config([route], ledger="memory"))
    return app(Config([route], ledger="memory", read_cache_mib=read_cache_mib))


async def preload(gateway: Gateway, conv: Conversation) -> int:
    """Record every bound assistant turn of ``conv`` in the gateway's ledger, as
    if its replies had come through it. (The ledger is the gateway's own memory
    ledger: reached through its private attributes, the bench's one liberty.)"""
    await gateway._open()
    ledger = gateway._ledger
    assert ledger is not None
    recorded = 0
    for m in conv:
        if isinstance(m, AssistantMessage) and m.thinking_binding is not None:
            await ledger.record(m)
            recorded += 1
    return recorded


# -- servers (subprocesses) -----------------------------------------------------------------------


def _uvicorn_config(app: Any, port: int) -> Any:

    return uvicorn.Config(
        app, host="127.0.0.1", port=port, log_level="warning", access_log=False, lifespan="on", timeout_keep_alive=60
    )


def _litellm_config(upstream: str, directory: str) -> str:
    path = os.path.join(directory, "litellm.yaml")
    with open(path, "w") as f:
        f.write(
            "model_list:\n"
            f"  - model_name: {MODEL}\n"
            "    litellm_params:\n"
            f"      model: anthropic/{MODEL}\n"
            f"      api_base: {upstream}\n"
            f"      api_key: {KEY}\n"
            "general_settings:\n"
            f"  master_key: {LITELLM_MASTER_KEY}\n"
            "litellm_settings:\n"
            "  telemetry: false\n"
            "  drop_params: true\n"
        )
    return path


def serve(
    kind: str,
    port: int,
    upstream: str,
    record_messages: int,
    profile: str | None,
    litellm_path: str | None,
    read_cache_mib: int | None = None,
) -> None:
    """The body of a server subprocess (``--serve KIND``)."""
    with suppress(OSError, AttributeError):
        os.sched_setaffinity(0, {CLIENT_CPU if kind == "upstream" else SERVER_CPU})

    async def main() -> None:
        if kind == "upstream":
            listener = await serve_upstream(port)
            stop = asyncio.Event()
            asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
            await stop.wait()
            listener.close()
            return
        if kind == "floor":
            app: Any = floor_app(upstream)
        elif kind == "gateway":
            app = gateway_app(upstream, read_cache_mib)
            await preload(app, conversation(record_messages))
        elif kind == "litellm":
            if litellm_path:
                sys.path.insert(0, litellm_path)
            os.environ["CONFIG_FILE_PATH"] = _litellm_config(upstream, tempfile.mkdtemp(prefix="bench-litellm-"))
            from litellm.proxy.proxy_server import app as litellm_app  # noqa: PLC0415 (only here, and optional)

            app = litellm_app
        else:
            raise SystemExit(f"unknown server {kind!r}")
        server = uvicorn.Server(_uvicorn_config(app, port))
        profiler = cProfile.Profile() if profile else None
        if profiler is not None:
            profiler.enable()
        try:
            await server.serve()
        finally:
            if profiler is not None and profile:
                profiler.disable()
                profiler.dump_stats(profile)

    asyncio.run(main())


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """A server subprocess: ``url``, ``pid``, CPU seconds and RSS from /proc."""

    def __init__(self, kind: str, upstream: str = "", record_messages: int = 0, **options: Any) -> None:
        self.kind = kind
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        argv = [sys.executable, "-m", "benches.gateway", "--serve", kind, "--port", str(self.port)]
        argv += ["--upstream", upstream, "--record-messages", str(record_messages)]
        if options.get("profile"):
            argv += ["--profile-path", options["profile"]]
        if options.get("litellm_path"):
            argv += ["--litellm-path", options["litellm_path"]]
        if options.get("read_cache_mib") is not None:
            argv += ["--read-cache-mib", str(options["read_cache_mib"])]
        env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True", "LITELLM_LOG": "ERROR"}
        self.log = tempfile.NamedTemporaryFile(prefix=f"bench-{kind}-", suffix=".log", delete=False)  # noqa: SIM115
        self.process = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=self.log, stderr=subprocess.STDOUT)
        self.pid = self.process.pid

    def wait_ready(self, timeout: float) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"{self.kind} exited: {self.tail()}")
            with suppress(OSError), socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                return
            time.sleep(0.05)
        raise RuntimeError(f"{self.kind} did not listen within {timeout} s: {self.tail()}")

    def tail(self) -> str:
        return Path(self.log.name).read_text(errors="replace")[-1500:]

    def cpu_seconds(self) -> float:
        fields = Path(f"/proc/{self.pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")

    def rss(self) -> int:
        for line in Path(f"/proc/{self.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
        return 0

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT if self.kind != "upstream" else signal.SIGTERM)
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(5)


# -- measurements ---------------------------------------------------------------------------------

# The client's own credential: LiteLLM's master key (the floor forwards it; the gateway
# replaces it with the route's key).
HEADERS = {
    "authorization": f"Bearer {LITELLM_MASTER_KEY}",
    "anthropic-version": "2023-06-01",
    "content-type": "application/json",
}


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def one(client: Any, url: str, payload: bytes) -> Any:
    response = await client.post(url, content=payload, headers=HEADERS)
    if response.status_code != 200:
        raise RuntimeError(f"{url}: {response.status_code} {response.text[:300]}")
    return response


async def first_byte(client: Any, url: str, payload: bytes) -> tuple[float, float]:
    """(seconds to the first streamed byte, seconds to the end) of one streamed request."""
    started = time.perf_counter()
    first = None
    async with client.stream("POST", url, content=payload, headers=HEADERS) as response:
        if response.status_code != 200:
            raise RuntimeError(f"{url}: {response.status_code} {(await response.aread())[:300]!r}")
        async for _ in response.aiter_raw():
            if first is None:
                first = time.perf_counter() - started
    return (first if first is not None else float("nan")), time.perf_counter() - started


async def latencies(
    targets: dict[str, str], payload: bytes, streamed: bytes, rounds: int
) -> dict[str, dict[str, float]]:
    """Sequential requests, one per target per round (the targets interleaved,
    so drift in the machine's load hits all alike)."""

    clients = {name: httpx.AsyncClient(timeout=120) for name in targets}
    whole: dict[str, list[float]] = {name: [] for name in targets}
    ttfb: dict[str, list[float]] = {name: [] for name in targets}
    try:
        for name, url in targets.items():  # warm: connections, caches, imports
            for _ in range(3):
                await one(clients[name], url, payload)
                await first_byte(clients[name], url, streamed)
        for r in range(rounds):
            order = list(targets.items())
            order = order[r % len(order) :] + order[: r % len(order)]
            for name, url in order:
                started = time.perf_counter()
                await one(clients[name], url, payload)
                whole[name].append(time.perf_counter() - started)
                ttfb[name].append((await first_byte(clients[name], url, streamed))[0])
    finally:
        for c in clients.values():
            await c.aclose()
    out: dict[str, dict[str, float]] = {}
    for name in targets:
        out[name] = {
            "p50_ms": percentile(whole[name], 0.5) * 1e3,
            "p99_ms": percentile(whole[name], 0.99) * 1e3,
            "ttfb_p50_ms": percentile(ttfb[name], 0.5) * 1e3,
            "ttfb_p99_ms": percentile(ttfb[name], 0.99) * 1e3,
            "samples": len(whole[name]),
        }
    return out


async def saturate(
    url: str, payload: bytes, seconds: float, concurrency: int, server: Server | None
) -> dict[str, float]:
    """Requests/second with ``concurrency`` clients for ``seconds``, and per server CPU-second."""

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    done = 0
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        await asyncio.gather(*(one(client, url, payload) for _ in range(concurrency)))  # connections open
        cpu0 = server.cpu_seconds() if server else 0.0
        started = time.perf_counter()
        deadline = started + seconds

        async def worker() -> None:
            nonlocal done
            while time.perf_counter() < deadline:
                await one(client, url, payload)
                done += 1

        await asyncio.gather(*(worker() for _ in range(concurrency)))
        wall = time.perf_counter() - started
        cpu = (server.cpu_seconds() - cpu0) if server else 0.0
    return {
        "rps": done / wall,
        "requests": done,
        "server_cpu_s": cpu,
        "server_cpu_share": cpu / wall,
        "per_core_rps": done / cpu if cpu > 0 else float("nan"),
    }


async def soak(
    url: str, payload: bytes, streamed: bytes, total: int, every: int, concurrency: int, server: Server
) -> dict[str, Any]:
    """``total`` requests (unique bodies, one in four streamed) at ``concurrency``; RSS every ``every``."""

    rss = [(0, server.rss())]
    counter = iter(range(total))
    done = 0
    started = time.perf_counter()
    head, tail = payload.split(MARK, 1)
    s_head, s_tail = streamed.split(MARK, 1)

    async def worker(client: Any) -> None:
        nonlocal done
        for i in counter:
            mark = b"%08d" % i
            if i % 4 == 0:
                async with client.stream("POST", url, content=s_head + mark + s_tail, headers=HEADERS) as r:
                    assert r.status_code == 200, r.status_code
                    await r.aread()
            else:
                await one(client, url, head + mark + tail)
            done += 1
            if done % every == 0:
                rss.append((done, server.rss()))

    limits = httpx.Limits(max_connections=concurrency, max_keepalive_connections=concurrency)
    async with httpx.AsyncClient(timeout=120, limits=limits) as client:
        await asyncio.gather(*(worker(client) for _ in range(concurrency)))
    wall = time.perf_counter() - started
    after_first = [r for n, r in rss if n >= every]
    return {
        "requests": done,
        "seconds": wall,
        "rps": done / wall,
        "rss": rss,
        "rss_growth_after_first_checkpoint": (after_first[-1] - after_first[0]) if after_first else 0,
    }


def profile_top(path: str, limit: int, requests: int) -> dict[str, list[dict[str, Any]]]:
    """The top functions by own time, and thinkseal's by cumulative time, in ms per request."""
    stats = pstats.Stats(path)
    rows = []
    for (file, line, name), (_cc, calls, tottime, cumtime, _callers) in stats.stats.items():  # type: ignore[attr-defined]
        where = file.split("/thinkseal/", 1)[1] if "/thinkseal/" in file else Path(file).name
        rows.append(
            {
                "function": f"{where}:{line}({name})",
                "calls": calls,
                "own_ms": tottime * 1e3 / requests,
                "cumulative_ms": cumtime * 1e3 / requests,
                "thinkseal": "/thinkseal/" in file,
            }
        )
    own = sorted(rows, key=lambda r: r["own_ms"], reverse=True)[:limit]
    ours = sorted((r for r in rows if r["thinkseal"]), key=lambda r: r["cumulative_ms"], reverse=True)[:limit]
    return {"own": own, "thinkseal_cumulative": ours}


# -- the run --------------------------------------------------------------------------------------


def litellm_available(path: str | None) -> str | None:
    """None when LiteLLM's proxy imports here, else why not."""
    code = "import sys\nif sys.argv[1]: sys.path.insert(0, sys.argv[1])\nimport litellm.proxy.proxy_server\n"
    env = {**os.environ, "LITELLM_LOCAL_MODEL_COST_MAP": "True"}
    done = subprocess.run(
        [sys.executable, "-c", code, path or ""], capture_output=True, text=True, env=env, timeout=180, check=False
    )
    if done.returncode == 0:
        return None
    return (done.stderr.strip().splitlines() or ["failed"])[-1]


def server_kind() -> str:
    """What uvicorn serves every proxy with (``auto``: its C parser and event loop when installed)."""
    http = "httptools" if importlib.util.find_spec("httptools") else "h11"
    loop = "uvloop" if importlib.util.find_spec("uvloop") else "asyncio"
    return f"uvicorn, {http}, {loop}"


def run(args: argparse.Namespace) -> dict[str, Any]:
    with suppress(OSError, AttributeError):
        os.sched_setaffinity(0, {CLIENT_CPU})
    quick = args.quick
    sizes = {k: v for k, v in SIZES.items() if not quick or k != "1M"}
    rounds = {"10k": 20 if quick else 150, "100k": 20 if quick else 150, "1M": 10}
    seconds = 1.0 if quick else 2.0
    soak_total, soak_every = (400, 50) if quick else (args.soak, 500)
    counts = {label: messages_for(tokens) for label, tokens in sizes.items()}
    largest = max(counts.values())
    why_not = litellm_available(args.litellm_path) if not args.no_litellm else "left out (--no-litellm)"
    servers: dict[str, Server] = {}
    report: dict[str, Any] = {"quick": quick, "sizes": {}, "litellm": why_not or "measured", "server": server_kind()}
    report["read_cache_mib"] = args.read_cache_mib
    upstream = Server("upstream")
    upstream.wait_ready(30)
    try:
        servers["floor"] = Server("floor", upstream.url)
        servers["gateway"] = Server("gateway", upstream.url, largest, read_cache_mib=args.read_cache_mib)
        if why_not is None:
            servers["litellm"] = Server("litellm", upstream.url, litellm_path=args.litellm_path)
        convs = {label: conversation(n) for label, n in counts.items()}
        for s in servers.values():
            s.wait_ready(180)
        targets = {
            "direct": upstream.url + "/v1/messages",
            "floor": servers["floor"].url + PREFIX + "/v1/messages",
            "gateway": servers["gateway"].url + PREFIX + "/v1/messages",
        }
        if "litellm" in servers:
            targets["litellm"] = servers["litellm"].url + "/v1/messages"
        for label, conv in convs.items():
            payload, streamed = body(conv), body(conv, stream=True)
            row: dict[str, Any] = {"messages": len(conv), "body_bytes": len(payload)}
            row["kept_expected"] = assistant_turns(conv)
            row["kept_header"] = asyncio.run(_kept(targets["gateway"], payload))
            assert row["kept_header"] == row["kept_expected"], row  # the gateway really recognised every turn
            print(f"{label}: {len(conv)} messages, {len(payload):,} bytes; latency ...", file=sys.stderr, flush=True)
            row["latency"] = asyncio.run(latencies(targets, payload, streamed, rounds[label]))
            row["throughput"] = {}
            for name, url in targets.items():
                print(f"{label}: saturating {name} ...", file=sys.stderr, flush=True)
                server = servers.get(name, upstream)
                row["throughput"][name] = asyncio.run(saturate(url, payload, seconds, args.concurrency, server))
            report["sizes"][label] = row
        print(f"soak: {soak_total} requests at 100k ...", file=sys.stderr, flush=True)
        report["soak"] = asyncio.run(
            soak(
                targets["gateway"],
                body(convs["100k"]),
                body(convs["100k"], stream=True),
                soak_total,
                soak_every,
                args.concurrency,
                servers["gateway"],
            )
        )
    finally:
        for s in servers.values():
            s.stop()
    if args.profile:
        report["profile"] = profile(upstream, counts["100k"], convs["100k"], 50 if quick else 300)
    upstream.stop()
    return report


async def _kept(url: str, payload: bytes) -> int:
    async with httpx.AsyncClient(timeout=120) as client:
        response = await one(client, url, payload)
        return int(response.headers["thinkseal-kept"])


def profile(upstream: Server, n: int, conv: Conversation, requests: int) -> dict[str, list[dict[str, Any]]]:
    """cProfile of a gateway server answering ``requests`` sequential requests at 100k tokens."""
    path = tempfile.mktemp(prefix="bench-gateway-", suffix=".prof")
    server = Server("gateway", upstream.url, n, profile=path)
    try:
        server.wait_ready(180)
        url = server.url + PREFIX + "/v1/messages"
        payload = body(conv)

        async def drive() -> None:

            async with httpx.AsyncClient(timeout=120) as client:
                for _ in range(requests):
                    await one(client, url, payload)

        asyncio.run(drive())
    finally:
        server.stop()
    return profile_top(path, 20, requests)


def print_report(report: dict[str, Any]) -> None:
    print(f"\nLiteLLM: {report['litellm']}; every proxy served by {report['server']}")
    print("\n| size | body | proxy | p50 ms | p99 ms | added p50 ms | added p99 ms | TTFB p50 ms | added TTFB p50 ms "
          "| req/s @8 | server CPU | req per server CPU-s |")  # fmt: skip
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for label, row in report["sizes"].items():
        lat, thr = row["latency"], row["throughput"]
        base = lat["direct"]
        for name in lat:
            t, s = lat[name], thr[name]
            added = "" if name == "direct" else f"{t['p50_ms'] - base['p50_ms']:.2f}"
            added99 = "" if name == "direct" else f"{t['p99_ms'] - base['p99_ms']:.2f}"
            added_ttfb = "" if name == "direct" else f"{t['ttfb_p50_ms'] - base['ttfb_p50_ms']:.2f}"
            print(
                f"| {label} | {row['body_bytes'] / 1e3:,.0f} KB | {name} | {t['p50_ms']:.2f} | {t['p99_ms']:.2f} "
                f"| {added} | {added99} | {t['ttfb_p50_ms']:.2f} | {added_ttfb} | {s['rps']:.0f} "
                f"| {s['server_cpu_share'] * 100:.0f}% | {s['per_core_rps']:.0f} |"
            )
    print("\nratios of requests per server CPU-second (gateway / floor, gateway / litellm):")
    for label, row in report["sizes"].items():
        thr = row["throughput"]
        gw = thr["gateway"]["per_core_rps"]
        ll = thr.get("litellm", {}).get("per_core_rps")
        vs_ll = f"{gw / ll:.1f}x" if ll else "-"
        print(f"  {label}: {gw / thr['floor']['per_core_rps']:.2f}x of the floor; {vs_ll} LiteLLM")
    s = report["soak"]
    cache = report.get("read_cache_mib")
    print(
        f"\nsoak: {s['requests']} requests at 100k in {s['seconds']:.0f} s ({s['rps']:.0f} req/s), "
        f"read cache {'default' if cache is None else f'{cache} MiB'}; RSS MiB:"
    )
    print("  " + ", ".join(f"{n}: {r / 2**20:.1f}" for n, r in s["rss"]))
    print(f"  growth after the first checkpoint: {s['rss_growth_after_first_checkpoint'] / 2**20:.1f} MiB")
    if "profile" in report:
        print("\ngateway profile at 100k tokens (cProfile; its overhead inflates every figure):")
        for title, key in (("own time", "own"), ("thinkseal's functions by cumulative time", "thinkseal_cumulative")):
            print(f"\n{title} (ms per request under cProfile):\n| function | calls | own ms | cumulative ms |")
            print("|---|---|---|---|")
            for r in report["profile"][key]:
                print(f"| {r['function']} | {r['calls']} | {r['own_ms']:.2f} | {r['cumulative_ms']:.2f} |")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0], allow_abbrev=False)
    parser.add_argument("--quick", action="store_true", help="10k and 100k only, fewer rounds, a 1,000-request soak")
    parser.add_argument("--json", help="write the figures to this path")
    parser.add_argument("--concurrency", type=int, default=8)
    parser.add_argument("--soak", type=int, default=10_000, help="requests in the soak")
    parser.add_argument("--no-profile", dest="profile", action="store_false")
    parser.add_argument("--no-litellm", action="store_true")
    parser.add_argument("--litellm-path", default=os.environ.get("BENCH_LITELLM_PATH"))
    parser.add_argument(
        "--read-cache-mib", type=int, help="the gateway's read_cache_mib (default: its own default, 64)"
    )
    # The server subprocesses' own arguments.
    parser.add_argument("--serve", help=argparse.SUPPRESS)
    parser.add_argument("--port", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--upstream", default="", help=argparse.SUPPRESS)
    parser.add_argument("--record-messages", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--profile-path", dest="profile_path", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(
            args.serve,
            args.port,
            args.upstream,
            args.record_messages,
            args.profile_path,
            args.litellm_path,
            args.read_cache_mib,
        )
        return 0
    started = time.perf_counter()
    report = run(args)
    report["wall_seconds"] = time.perf_counter() - started
    print_report(report)
    print(f"\nwall time: {report['wall_seconds']:.0f} s")
    if args.json:
        Path(args.json).write_text(json.dumps(report, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
