"""The soak: a long agent loop through ``thinkseal.Client`` against every
provider's enforcing emulator, with a seeded random schedule of tool-loop
steps with thinking, final answers, pruning, summarising, model and provider
switches and injected faults (a signature rejection forced by rotating the
emulator's keys, a 529 or 503, a stream cut off part-way).

Written once, used twice: ``tests/soak/test_soak.py`` runs a few hundred
steps in the normal test run, ``benches/soak.py`` the full 10,000.

What a run checks, on every step:

- every request is accepted, or recovered by the client (a retry of a 5xx, one
  resend after a signature rejection, the ``on_replay_error`` way out of a
  ``ReplayError``); a cut stream fails with a thinkseal error, yields no
  ``Reply``, appends nothing, and the step is run again; any other failure
  stops the run with ``SoakFailure``;
- a request the emulator received carries no sealed data (signature, redacted
  data, encrypted or opaque item) that another origin (provider, model)
  issued: every seal a reply returned is recorded with its origin, and each
  request's raw bytes, as the emulator received them, are scanned for them;
- a signature rejection forced on a request that replays sealed thinking is
  recovered, and ``reply.recoveries`` says so;
- the reply is the one scripted (its tool calls, or its text).

The emulators run in a child process (``EmulatorHost``), so that their own
bookkeeping (every request they received, every seal they issued) does not
count in the memory of the process under test. Memory of the driver process
is measured at checkpoints: every ``checkpoint_every`` steps the conversation
is summarised down to its system prompt and one user message, garbage is
collected, and traced memory (``tracemalloc``, started after warm-up) and RSS
are sampled, so every sample sees the same amount of live conversation.
"""

from __future__ import annotations

import gc
import json
import os
import random
import socket
import subprocess
import sys
import time
import tracemalloc
from collections import Counter, deque
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from multiprocessing.connection import Connection
from pathlib import Path
from typing import Any, Literal

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    ProviderError,
    Reply,
    ResponseError,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolMessage,
    UserMessage,
)
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import Fault, Step, emulator

# Two models per provider, for model switches (the first is where a provider starts).
MODELS: Mapping[str, tuple[str, str]] = {
    "anthropic": ("claude-sonnet-4-5", "claude-opus-4-5"),
    "vertex-anthropic": ("claude-sonnet-4-5", "claude-opus-4-5"),
    "bedrock": ("anthropic.claude-sonnet-4-5-20250929-v1:0", "anthropic.claude-opus-4-5-20251101-v1:0"),
    "openrouter": ("anthropic/claude-sonnet-4.5", "anthropic/claude-opus-4.5"),
    "deepseek": ("deepseek-reasoner", "deepseek-chat"),
    "zai": ("glm-4.6", "glm-4.5"),
    "ollama": ("qwen3", "deepseek-r1"),
    "mistral": ("magistral-medium-latest", "magistral-small-latest"),
    "gemini": ("gemini-2.5-pro", "gemini-2.5-flash"),
    "vertex-gemini": ("gemini-2.5-pro", "gemini-2.5-flash"),
    "gemini-openai": ("gemini-3-pro-preview", "gemini-3-flash-preview"),
    "openai": ("gpt-5", "gpt-5-mini"),
    "openai-responses": ("gpt-5", "gpt-5-mini"),
}
# How each provider's client gets out of a ReplayError (Claude's tool-loop rule).
ON_REPLAY_ERROR: Mapping[str, Literal["drop_block", "disable_thinking"]] = {
    "anthropic": "drop_block",
    "bedrock": "disable_thinking",
}
TOOLS = (
    Tool("lookup", "Look something up", {"type": "object", "properties": {"q": {"type": "integer"}}}),
    Tool(
        "add", "Add two numbers", {"type": "object", "properties": {"a": {"type": "integer"}, "b": {"type": "integer"}}}
    ),
)
SYSTEM = SystemMessage("You are a careful agent. Use the tools.")
MAX_MESSAGES = 24  # longer conversations are summarised before the next request
ROOT = Path(__file__).resolve().parents[2]
# Whether pruning one message may leave two assistant turns side by side (the
# Gemini adapters once sent them as two model turns, which Gemini refuses when
# the second holds a function call: tests/soak/test_findings.py).
ADJACENT_ASSISTANT_TURNS = True
SEAL_WINDOW = 64  # steps for which a seal is remembered after it left the conversation


class SoakFailure(AssertionError):
    """A step that was neither accepted nor recovered, or a check that failed."""


# -- the emulators, in a child process ---------------------------------------------------


def _child(fd: int, providers: tuple[str, ...]) -> None:
    """The child process: every emulator, started once, driven by commands on ``fd``."""
    conn = Connection(fd)
    emus = {p: emulator(p).start() for p in providers}
    seen = dict.fromkeys(providers, 0)
    conn.send({p: (e.base_url, dict(e.options), dict(e.thinking_options)) for p, e in emus.items()})
    try:
        while True:
            command, provider, argument = conn.recv()
            result: Any = None
            if command == "stop":
                break
            emu = emus[provider]
            if command == "script":
                emu.script(*argument)
            elif command == "fault":
                emu.fault(argument)
            elif command == "rotate":
                emu.rotate_keys()
            elif command == "clear":
                emu.clear_script()
            elif command == "take":
                received = emu.requests
                result = [(r.path, r.raw) for r in received[seen[provider] :]]
                seen[provider] = len(received)
            conn.send(result)
    finally:
        for emu in emus.values():
            emu.stop()


class EmulatorHost:
    """Every provider's emulator in a child process, driven over a socket pair."""

    def __init__(self, providers: tuple[str, ...] = PROVIDER_IDS) -> None:
        ours, theirs = socket.socketpair()
        code = f"from tests.soak.driver import _child; _child({theirs.fileno()}, {providers!r})"
        env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
        self._process = subprocess.Popen([sys.executable, "-c", code], pass_fds=[theirs.fileno()], cwd=ROOT, env=env)
        theirs.close()
        self._conn = Connection(ours.detach())
        if not self._conn.poll(60):
            self._process.kill()
            raise RuntimeError("the emulator host did not start")
        started: dict[str, tuple[str, dict[str, Any], dict[str, Any]]] = self._conn.recv()
        self.base_url = {p: s[0] for p, s in started.items()}
        self.options = {p: {**s[1], **s[2]} for p, s in started.items()}

    def _call(self, command: str, provider: str, argument: Any = None) -> Any:
        self._conn.send((command, provider, argument))
        return self._conn.recv()

    def script(self, provider: str, *steps: Step) -> None:
        self._call("script", provider, steps)

    def fault(self, provider: str, fault: Fault) -> None:
        self._call("fault", provider, fault)

    def rotate_keys(self, provider: str) -> None:
        self._call("rotate", provider)

    def clear_script(self, provider: str) -> None:
        self._call("clear", provider)

    def take(self, provider: str) -> list[tuple[str, bytes]]:
        """``(path, raw body)`` of every request received since the last ``take``."""
        taken: list[tuple[str, bytes]] = self._call("take", provider)
        return taken

    def close(self) -> None:
        if self._process.poll() is None:
            self._conn.send(("stop", "", None))
            try:
                self._process.wait(10)
            except subprocess.TimeoutExpired:
                self._process.kill()
                self._process.wait()
        self._conn.close()

    def __enter__(self) -> EmulatorHost:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


# -- seals ---------------------------------------------------------------------------------


# Labels of an opaque item, not its seals (gemini-openai's tool_call_id names the call a signature is on).
_NOT_SEALED = frozenset({"type", "format", "id", "index", "text", "tool_call_id"})


def seals(message: AssistantMessage) -> list[str]:
    """The sealed data of a turn, as it appears in a request body: signatures,
    redacted data, and the long strings inside opaque items."""
    found: list[str] = []
    for block in message.thinking:
        if isinstance(block, ThinkingBlock.Text) and block.signature:
            found.append(block.signature)
        elif isinstance(block, ThinkingBlock.Redacted):
            found.append(block.data)
        elif isinstance(block, ThinkingBlock.Opaque):
            # an item's seals: every long string but its reasoning text and its labels
            stack: list[Any] = [json.loads(block.data)]
            while stack:
                item = stack.pop()
                if isinstance(item, str) and len(item) >= 8:
                    found.append(item)
                elif isinstance(item, dict):
                    stack.extend(v for k, v in item.items() if k not in _NOT_SEALED)
                elif isinstance(item, list):
                    stack.extend(item)
    return found


def _strings(value: Any) -> Iterator[str]:
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, str):
            yield item
        elif isinstance(item, dict):
            stack.extend(item.values())
        elif isinstance(item, list):
            stack.extend(item)


# -- figures ---------------------------------------------------------------------------------


@dataclass
class Figures:
    """What a run did and measured."""

    steps: int = 0
    seed: int = 0
    requests: int = 0  # HTTP requests the emulators received
    replies: int = 0
    streamed: int = 0
    tool_calls: int = 0
    recoveries: Counter[str] = field(default_factory=Counter)  # by kind (and way)
    retries: int = 0  # requests the client sent again after a 5xx or a lost connection
    step_retries: int = 0  # steps run again after a cut stream
    faults: Counter[str] = field(default_factory=Counter)
    switches: Counter[str] = field(default_factory=Counter)  # model, provider
    edits: Counter[str] = field(default_factory=Counter)  # prune-exchange, prune-message, summarise, checkpoint
    by_provider: Counter[str] = field(default_factory=Counter)
    seals_issued: int = 0
    seals_replayed: int = 0  # seals found in later requests to their own origin
    max_messages: int = 0
    warmup: int = 0
    traced: list[tuple[int, int]] = field(default_factory=list)  # (step, bytes) at checkpoints after warm-up
    rss: list[tuple[int, int]] = field(default_factory=list)  # (step, bytes) at every checkpoint
    traced_peak: int = 0
    seconds: float = 0.0

    def growth(self) -> int:
        """Traced memory at the last checkpoint minus at the first (after warm-up)."""
        return self.traced[-1][1] - self.traced[0][1] if len(self.traced) > 1 else 0

    def as_dict(self) -> dict[str, Any]:
        rss_after = [b for s, b in self.rss if s >= self.warmup]
        return {
            "steps": self.steps,
            "seed": self.seed,
            "requests": self.requests,
            "replies": self.replies,
            "streamed_steps": self.streamed,
            "tool_calls": self.tool_calls,
            "recoveries": dict(sorted(self.recoveries.items())),
            "retries": self.retries,
            "step_retries_after_cut_stream": self.step_retries,
            "faults_injected": dict(sorted(self.faults.items())),
            "switches": dict(sorted(self.switches.items())),
            "edits": dict(sorted(self.edits.items())),
            "steps_by_provider": dict(sorted(self.by_provider.items())),
            "seals_issued": self.seals_issued,
            "seals_replayed": self.seals_replayed,
            "max_messages": self.max_messages,
            "memory": {
                "warmup_steps": self.warmup,
                "traced_first": self.traced[0][1] if self.traced else None,
                "traced_final": self.traced[-1][1] if self.traced else None,
                "traced_peak": self.traced_peak,
                "traced_growth": self.growth(),
                "rss_after_warmup": rss_after[0] if rss_after else None,
                "rss_final": self.rss[-1][1] if self.rss else None,
                "rss_peak": max((b for _, b in self.rss), default=None),
                "checkpoints": len(self.traced),
            },
            "seconds": round(self.seconds, 1),
        }


def _rss() -> int:
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    return pages * 4096


# -- the loop -----------------------------------------------------------------------------------


@dataclass
class Schedule:
    """Probabilities of the random schedule, per step."""

    final_answer: float = 0.3
    stream: float = 0.3
    prune: float = 0.08
    summarise: float = 0.04
    model_switch: float = 0.06
    provider_switch: float = 0.06
    rotate: float = 0.04  # only where the provider's rejection of stale seals is documented
    overloaded: float = 0.03  # 529
    unavailable: float = 0.03  # 503
    cut_stream: float = 0.15  # of streamed steps


class Soak:
    def __init__(
        self,
        host: EmulatorHost,
        *,
        seed: int = 0,
        schedule: Schedule | None = None,
        warmup: int = 100,
        checkpoint_every: int = 50,
        providers: tuple[str, ...] = PROVIDER_IDS,
    ) -> None:
        self.host = host
        self.rng = random.Random(seed)
        self.schedule = schedule or Schedule()
        self.warmup = warmup
        self.checkpoint_every = checkpoint_every
        self.providers = providers
        self.recoverable = tuple(p for p in providers if thinkseal.provider(p).connection.rejections)
        self.clients = {
            p: thinkseal.Client(
                p,
                base_url=host.base_url[p],
                api_key="test-key",
                max_retries=2,
                on_replay_error=ON_REPLAY_ERROR.get(p, "drop_block"),
            )
            for p in providers
        }
        self.figures = Figures(seed=seed, warmup=warmup)
        self.provider = providers[0]
        self.model = MODELS[self.provider][0]
        self.conversation = self._fresh("Task 0: work out q.")
        self.tasks = 0
        # seal -> the origins that issued it; and the seals issued in each recent step
        self.issued: dict[str, set[tuple[str, str]]] = {}
        self.issued_at: dict[str, int] = {}  # seal -> the step that issued it
        self.rotated: dict[str, int] = {}  # provider -> the step its keys were last rotated at
        self.recent: deque[list[str]] = deque(maxlen=SEAL_WINDOW)

    def close(self) -> None:
        for client in self.clients.values():
            client.close()

    def _fresh(self, text: str) -> Conversation:
        return Conversation([SYSTEM, UserMessage(text)], tools=TOOLS)

    def _fail(self, step: int, what: str) -> SoakFailure:
        where = f"step {step} ({self.provider}, {self.model}, {len(self.conversation)} messages)"
        return SoakFailure(f"{where}: {what}")

    # -- edits ----------------------------------------------------------------------------------

    def _prune(self) -> None:
        """Drop an earlier exchange (from a user message to the next), or one
        message anywhere in the middle (which may break tool pairing)."""
        messages = list(self.conversation)
        last = len(messages) - 1  # the message the next request answers stays
        middle = list(range(2, last))
        if not middle:
            return
        if self.rng.random() < 0.5:
            starts = [i for i in middle if isinstance(messages[i], UserMessage)]
            if not starts:
                return
            start = self.rng.choice(starts)
            end = start + 1
            while end < last and not isinstance(messages[end], UserMessage):
                end += 1
            del messages[start:end]
            self.figures.edits["prune-exchange"] += 1
        else:
            if not ADJACENT_ASSISTANT_TURNS:
                middle = [
                    i
                    for i in middle
                    if not (
                        isinstance(messages[i - 1], AssistantMessage) and isinstance(messages[i + 1], AssistantMessage)
                    )
                ]
                if not middle:
                    return
            del messages[self.rng.choice(middle)]
            self.figures.edits["prune-message"] += 1
        self.conversation = self.conversation.with_messages(messages)

    def _summarise(self, keep: int = 6) -> None:
        """Replace the messages after the system prompt, up to an assistant
        turn that leaves about ``keep`` messages, by one user message."""
        messages = list(self.conversation)
        cuts = [i for i in range(2, len(messages) - 1) if isinstance(messages[i], AssistantMessage)]
        if not cuts:
            return
        cut = min(cuts, key=lambda i: abs(len(messages) - i - keep))
        summary = UserMessage(f"Summary of {cut - 1} earlier messages: the agent looked things up.")
        self.conversation = self.conversation.with_messages([messages[0], summary, *messages[cut:]])
        self.figures.edits["summarise"] += 1

    def _checkpoint(self, step: int) -> None:
        """Summarise everything, collect garbage and sample memory."""
        self.tasks += 1
        self.conversation = self._fresh(f"Summary of everything so far. Task {self.tasks}: go on.")
        self.figures.edits["checkpoint"] += 1
        gc.collect()
        if step >= self.warmup:
            if not tracemalloc.is_tracing():
                tracemalloc.start()
            current, peak = tracemalloc.get_traced_memory()
            self.figures.traced.append((step, current))
            self.figures.traced_peak = max(self.figures.traced_peak, peak)
        self.figures.rss.append((step, _rss()))

    def _switch_model(self) -> None:
        first, second = MODELS[self.provider]
        self.model = second if self.model == first else first
        self.figures.switches["model"] += 1

    def _switch_provider(self) -> None:
        self.provider = self.rng.choice([p for p in self.providers if p != self.provider])
        self.model = self.rng.choice(MODELS[self.provider])
        self.figures.switches["provider"] += 1

    # -- one step -------------------------------------------------------------------------------

    def step(self, step: int) -> None:
        rng, schedule = self.rng, self.schedule
        if step % self.checkpoint_every == 0:
            self._checkpoint(step)
        elif len(self.conversation) > MAX_MESSAGES or rng.random() < schedule.summarise:
            self._summarise()
        elif rng.random() < schedule.prune:
            self._prune()
        if rng.random() < schedule.model_switch:
            self._switch_model()
        tour = step < 2 * len(self.providers)  # first, every provider, sent and streamed
        if tour and self.provider != self.providers[step // 2]:
            self.provider, self.model = self.providers[step // 2], MODELS[self.providers[step // 2]][0]
            self.figures.switches["provider"] += 1
        elif not tour and rng.random() < schedule.provider_switch:
            self._switch_provider()
        if isinstance(self.conversation[-1], AssistantMessage):
            self.tasks += 1
            self.conversation = self.conversation.append(UserMessage(f"Task {self.tasks}: and now?"))
        self.figures.max_messages = max(self.figures.max_messages, len(self.conversation))

        final = rng.random() < schedule.final_answer
        calls = (
            ()
            if final
            else tuple(
                (name, {"q": step} if name == "lookup" else {"a": step, "b": k})
                for k, name in enumerate(rng.choice([["lookup"], ["add"], ["lookup", "add"]]))
            )
        )
        planned = Step(
            thinking=f"Step {step}: thinking it over.", text=f"Answer {step}." if final else None, calls=calls
        )
        streamed = rng.random() < schedule.stream if not tour else step % 2 == 1
        fault = "none"
        draw = rng.random()
        if draw < schedule.rotate and self.provider in self.recoverable:
            fault = "rotate"
        elif draw < schedule.rotate + schedule.overloaded:
            fault = "529"
        elif draw < schedule.rotate + schedule.overloaded + schedule.unavailable:
            fault = "503"
        elif streamed and rng.random() < schedule.cut_stream:
            fault = "cut-stream"

        reply = self._send(step, planned, streamed, fault)
        self._check_reply(step, planned, reply)
        self.conversation = reply.conversation
        for k, call in enumerate(reply.message.tool_calls):
            self.conversation = self.conversation.append(ToolMessage(f"result {step}.{k}", call.id))
        self.figures.steps += 1

    def _send(self, step: int, planned: Step, streamed: bool, fault: str) -> Reply:
        host, provider = self.host, self.provider
        if fault == "rotate":
            host.rotate_keys(provider)
            self.rotated[provider] = step
        elif fault in ("529", "503"):
            host.fault(provider, Fault.error(int(fault), retry_after=0))
        elif fault == "cut-stream":
            host.fault(provider, Fault.truncated())
        if fault != "none":
            self.figures.faults[fault] += 1
        attempts = 0
        while True:
            host.clear_script(provider)
            host.script(provider, planned, planned)  # a refused request may have taken the first
            before = self.conversation
            reply: Reply | None = None
            try:
                reply = self._request(streamed)
            except (ResponseError, ProviderError) as error:
                received = host.take(provider)
                self._check_requests(step, received)
                self.figures.requests += len(received)
                if fault != "cut-stream" or attempts > 0:
                    raise self._fail(step, f"{type(error).__name__} after fault {fault!r}: {error}") from error
                if not str(error):
                    raise self._fail(step, "a cut stream failed without a message") from error
                if self.conversation is not before:
                    raise self._fail(step, "a failed step changed the conversation") from error
                attempts += 1
                self.figures.step_retries += 1
                continue
            break
        received = host.take(provider)
        self.figures.requests += len(received)
        self._check_requests(step, received)
        self._account(step, fault, streamed, reply, received)
        return reply

    def _account(self, step: int, fault: str, streamed: bool, reply: Reply, received: list[tuple[str, bytes]]) -> None:
        """Check and count what it took to get ``reply``."""
        provider = self.provider
        kinds = [r.kind for r in reply.recoveries]
        stale = self._stale(received[0][1]) if received else []
        for recovery in reply.recoveries:
            self.figures.recoveries[recovery.kind if recovery.way is None else f"{recovery.kind}/{recovery.way}"] += 1
        rejected = kinds.count("provider-rejected")
        if stale and provider in self.recoverable and rejected != 1:
            raise self._fail(step, f"{len(stale)} stale seals sent, recoveries {reply.recoveries!r}")
        if rejected and not stale:
            raise self._fail(step, f"a rejection though no stale seal was sent: {reply.recoveries!r}")
        if stale:
            self.figures.faults["stale-seal-sent"] += 1
        self.figures.retries += len(received) - 1 - rejected
        if fault in ("529", "503") and len(received) - 1 - rejected < 1:
            raise self._fail(step, f"the {fault} was not retried")
        self.figures.replies += 1
        self.figures.streamed += streamed
        self.figures.by_provider[provider] += 1

    def _request(self, streamed: bool) -> Reply:
        client = self.clients[self.provider]
        options = self.host.options[self.provider]
        if not streamed:
            return client.send(self.conversation, model=self.model, **options)
        with client.stream(self.conversation, model=self.model, **options) as stream:
            items = list(stream)
        if not items or not isinstance(items[-1], Reply) or stream.reply is not items[-1]:
            raise SoakFailure(f"a stream ended without its Reply: {items[-1:]!r}")
        if any(isinstance(item, Reply) for item in items[:-1]):
            raise SoakFailure("a stream yielded a Reply before its end")
        return items[-1]

    # -- checks ---------------------------------------------------------------------------------

    def _check_requests(self, step: int, received: list[tuple[str, bytes]]) -> None:
        """No request carries a seal that another origin issued."""
        target = (self.provider, self.model)
        live = {s for m in self.conversation if isinstance(m, AssistantMessage) for s in seals(m)}
        for path, raw in received:
            if not raw:
                raise self._fail(step, f"an empty request body to {path}")
            for text in _strings(json.loads(raw)):
                origins = self.issued.get(text)
                if origins is not None and target not in origins:
                    raise self._fail(step, f"a seal issued by {sorted(origins)} went to {target}: {text[:40]}...")
            for seal in live:
                origins = self.issued.get(seal, set())
                if seal.encode() in raw:
                    if target not in origins:
                        raise self._fail(step, f"a seal issued by {sorted(origins)} went to {target}: {seal[:40]}...")
                    self.figures.seals_replayed += 1

    def _stale(self, raw: bytes) -> list[str]:
        """The seals in ``raw`` that this provider issued before its keys were last rotated."""
        rotated = self.rotated.get(self.provider)
        if rotated is None:
            return []
        return [
            seal
            for seal, at in self.issued_at.items()
            if at < rotated and any(p == self.provider for p, _ in self.issued[seal]) and seal.encode() in raw
        ]

    def _check_reply(self, step: int, planned: Step, reply: Reply) -> None:
        message = reply.message
        if [c.name for c in message.tool_calls] != [name for name, _ in planned.calls]:
            raise self._fail(step, f"the reply's tool calls {message.tool_calls!r} are not the scripted ones")
        if planned.text is not None and message.content != planned.text:
            raise self._fail(step, f"the reply's text {message.content!r} is not {planned.text!r}")
        if reply.conversation[-1] is not message and reply.conversation[-1] != message:
            raise self._fail(step, "reply.conversation does not end with the reply")
        self.figures.tool_calls += len(message.tool_calls)
        issued = seals(message)
        origin = (self.provider, self.model)
        for seal in issued:
            self.issued.setdefault(seal, set()).add(origin)
            self.issued_at.setdefault(seal, step)
        self.figures.seals_issued += len(issued)
        self.recent.append(issued)
        if len(self.issued) > SEAL_WINDOW:  # forget seals gone from the conversation and the window
            keep = {s for m in reply.conversation if isinstance(m, AssistantMessage) for s in seals(m)}
            keep.update(s for batch in self.recent for s in batch)
            self.issued = {s: o for s, o in self.issued.items() if s in keep}
            self.issued_at = {s: at for s, at in self.issued_at.items() if s in keep}


# Memory: traced memory may grow, from the first checkpoint after warm-up to
# the last, by a fixed allowance (allocator pools, interned strings, httpx's
# connection state) plus 32 bytes per step measured. A leak of one message, one
# request body or one reply per step is 0.5 to 10 KiB per step, far above it.
MEMORY_ALLOWANCE = 256 * 1024
MEMORY_PER_STEP = 32


def growth_bound(figures: Figures) -> int:
    """The most traced memory may grow over the measured steps."""
    if len(figures.traced) < 2:
        return MEMORY_ALLOWANCE
    return MEMORY_ALLOWANCE + MEMORY_PER_STEP * (figures.traced[-1][0] - figures.traced[0][0])


def run(
    steps: int,
    *,
    seed: int = 0,
    warmup: int = 100,
    checkpoint_every: int = 50,
    schedule: Schedule | None = None,
    progress: Any = None,
) -> Figures:
    """Run ``steps`` steps of the soak; ``SoakFailure`` at the first step that fails."""
    started = time.perf_counter()
    with EmulatorHost() as host:
        soak = Soak(host, seed=seed, schedule=schedule, warmup=warmup, checkpoint_every=checkpoint_every)
        try:
            for step in range(steps):
                soak.step(step)
                if progress is not None and (step + 1) % 500 == 0:
                    progress(step + 1, soak.figures)
            soak._checkpoint(steps)
        finally:
            soak.close()
            if tracemalloc.is_tracing():
                soak.figures.traced_peak = max(soak.figures.traced_peak, tracemalloc.get_traced_memory()[1])
                tracemalloc.stop()
    soak.figures.seconds = time.perf_counter() - started
    return soak.figures
