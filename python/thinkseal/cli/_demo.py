"""``thinkseal demo``: a tool-using agent loop through ``thinkseal.Client``
against the Anthropic emulator (no network, no keys), step by step with the
replay report of every request:

1. a three-step tool loop whose signed thinking is kept and replayed;
2. the history pruned (earlier turns dropped): the turns after the cut go out
   unsealed and the request is accepted;
3. the model switched: the other model's turns go out unsealed, accepted;
4. the emulator's signing keys rotated (``emu.rotate_keys()``): the replayed
   signature is rejected, and the client's one retry, with that turn
   unsealed, is accepted.

Every step is checked, not just printed: the exit status is 1 if one did not
behave as described.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from .._binding import Origin
from .._blocks import ThinkingBlock
from .._conversation import Conversation
from .._errors import ProviderError, ThinksealError
from .._messages import AssistantMessage, SystemMessage, ToolMessage, UserMessage
from .._replay import ReplayReport
from .._reply import Reply
from .._tool import Tool
from ._input import InputError
from ._output import Out
from ._report import REPORT_HEADERS, report_rows

if TYPE_CHECKING:
    from ..client import Client
    from ..testing import Emulator, Step

__all__ = ["run"]

PROVIDER = "anthropic"
MODEL = "claude-sonnet-4-5"
OTHER_MODEL = "claude-opus-4-1"
WEATHER = Tool(
    "get_weather",
    "The current weather in a city",
    {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]},
)
FORECASTS = {"Paris": "18°C, light rain", "Oslo": "-3°C, snow"}


@dataclass
class Exchange:
    """One ``client.send``: the model asked, the replay report of the request
    as first prepared, the reply, and how many HTTP requests it took."""

    model: str
    conversation: Conversation
    report: ReplayReport
    reply: Reply
    http_requests: int


@dataclass
class DemoStep:
    number: int
    name: str
    title: str
    exchanges: list[Exchange] = field(default_factory=list)
    checks: list[tuple[str, bool]] = field(default_factory=list)
    error: str | None = None

    def check(self, description: str, ok: bool) -> None:
        self.checks.append((description, bool(ok)))

    @property
    def ok(self) -> bool:
        return self.error is None and bool(self.checks) and all(ok for _, ok in self.checks)


def signatures(message: AssistantMessage) -> list[str]:
    """The signatures and redacted data of the message's thinking (what a request replays sealed)."""
    found = []
    for block in message.thinking:
        if isinstance(block, ThinkingBlock.Text) and block.signature:
            found.append(block.signature)
        elif isinstance(block, ThinkingBlock.Redacted):
            found.append(block.data)
    return found


class Demo:
    def __init__(self, emu: Emulator, client: Client) -> None:
        self.emu = emu
        self.client = client
        self.steps: list[DemoStep] = []

    def send(self, step: DemoStep, conversation: Conversation, model: str) -> Reply:
        report = conversation.replay_report(Origin(PROVIDER, model))
        before = len(self.emu.requests)
        reply = self.client.send(conversation, model=model, **self.emu.thinking_options)
        step.exchanges.append(Exchange(model, conversation, report, reply, len(self.emu.requests) - before))
        return reply

    def sent(self) -> str:
        """The raw body of the last HTTP request, as the emulator received it."""
        return self.emu.requests[-1].raw.decode()

    # -- the steps ------------------------------------------------------------------------

    def tool_loop(self, step: DemoStep) -> Conversation:
        self.emu.script(
            _step("Clothing advice for two cities: I need both forecasts. Paris first.", city="Paris"),
            _step("Paris is mild and wet. Now Oslo.", city="Oslo"),
            _step(
                "Paris is mild and wet, Oslo is freezing.",
                text="Paris: a light waterproof jacket. Oslo: a warm coat, hat and boots.",
            ),
        )
        conversation = Conversation(
            [
                SystemMessage("You are a concise travel assistant."),
                UserMessage("What should I wear in Paris and Oslo?"),
            ],
            tools=[WEATHER],
        )
        bodies = []
        for _ in range(3):
            reply = self.send(step, conversation, MODEL)
            bodies.append(self.sent())
            conversation = reply.conversation
            for call in reply.message.tool_calls:
                city = str(call.arguments.get("city", ""))
                conversation = conversation.append(ToolMessage(FORECASTS.get(city, "unknown"), call.id))
            if not reply.message.tool_calls:
                break
        ex = step.exchanges
        replies = [e.reply.message for e in ex]
        step.check(
            "three requests, each accepted as first sent", len(ex) == 3 and all(e.http_requests == 1 for e in ex)
        )
        step.check(
            "the model called get_weather twice, then answered",
            [len(m.tool_calls) for m in replies] == [1, 1, 0] and bool(replies[-1].content),
        )
        step.check("every reply came back with signed thinking", all(m.has_sealed_thinking for m in replies))
        step.check(
            "request 2 replayed the first turn sealed, request 3 the first two",
            len(ex) == 3
            and [len(e.report) for e in ex] == [0, 1, 2]
            and all(entry.kept for e in ex for entry in e.report),
        )
        step.check(
            "the signatures went out as received in the later requests",
            len(bodies) == 3
            and all(s in bodies[1] and s in bodies[2] for s in signatures(replies[0]))
            and all(s in bodies[2] for s in signatures(replies[1]))
            and bool(signatures(replies[0])),
        )
        return conversation

    def pruned(self, step: DemoStep, history: Conversation) -> Conversation:
        # Drop the first tool round (its call and its result): everything after the cut changed prefix.
        first_call = next(i for i, m in enumerate(history) if isinstance(m, AssistantMessage))
        dropped = history[first_call : first_call + 2]
        messages = [*history[:first_call], *history[first_call + 2 :], UserMessage("Do I need an umbrella in Oslo?")]
        self.emu.script(_step("Oslo has snow, not rain.", text="No umbrella: it is snowing. Boots matter more."))
        reply = self.send(step, history.with_messages(messages), MODEL)
        (ex,) = step.exchanges
        dropped_seals = [s for m in dropped if isinstance(m, AssistantMessage) for s in signatures(m)]
        body = self.sent()
        step.check(
            "the turns after the cut go out unsealed (prefix-changed)",
            len(ex.report) == 2 and all(not e.kept and e.reason == "prefix-changed" for e in ex.report),
        )
        step.check("accepted as first sent, no recovery needed", ex.http_requests == 1 and reply.recoveries == ())
        step.check(
            "no signature of the pruned history was sent",
            bool(dropped_seals) and not any(s in body for s in dropped_seals),
        )
        step.check("the reply came back with signed thinking", reply.message.has_sealed_thinking)
        return reply.conversation

    def switched(self, step: DemoStep, history: Conversation) -> Conversation:
        self.emu.script(_step("One line, then.", text="Paris: rain jacket; Oslo: coat, hat, boots."))
        reply = self.send(step, history.append(UserMessage("Summarise it in one line.")), OTHER_MODEL)
        (ex,) = step.exchanges
        last = ex.report[len(ex.report) - 1] if len(ex.report) else None
        step.check(
            f"no turn goes out sealed to {OTHER_MODEL}", len(ex.report) > 0 and not any(e.kept for e in ex.report)
        )
        step.check(
            f"the turn {MODEL} signed last is origin-mismatch", last is not None and last.reason == "origin-mismatch"
        )
        step.check("accepted as first sent, no recovery needed", ex.http_requests == 1 and reply.recoveries == ())
        step.check(
            f"the reply is bound to {OTHER_MODEL}",
            reply.message.thinking_binding is not None and reply.message.thinking_binding.origin.model == OTHER_MODEL,
        )
        return reply.conversation

    def rotated(self, step: DemoStep, history: Conversation) -> Conversation:
        self.emu.rotate_keys()  # every signature issued so far stops verifying
        self.emu.script(
            _step("Same as before.", text="Same advice: jacket for Paris, warm layers for Oslo."),
            _step("Nothing new.", text="You're welcome!"),
        )
        reply = self.send(step, history.append(UserMessage("And tomorrow?")), OTHER_MODEL)
        ex = step.exchanges[0]
        kept = [e.index for e in ex.report if e.kept]
        step.check(f"the request replayed the turn {OTHER_MODEL} signed", len(kept) == 1)
        recovery = reply.recoveries[0] if len(reply.recoveries) == 1 else None
        error = recovery.error if recovery is not None else None
        step.check(
            "the emulator rejected the stale signature (HTTP 400) and the client sent the request once more",
            ex.http_requests == 2
            and recovery is not None
            and recovery.kind == "provider-rejected"
            and isinstance(error, ProviderError)
            and error.status == 400,
        )
        step.check(
            "the retry unsealed that turn, and reply.conversation keeps it unsealed",
            recovery is not None
            and list(recovery.unsealed) == kept
            and not any(_sealed(reply.conversation[i]) for i in kept),
        )
        follow = self.send(step, reply.conversation.append(UserMessage("Thanks.")), OTHER_MODEL)
        step.check(
            "the next request from reply.conversation is accepted at once",
            step.exchanges[1].http_requests == 1 and follow.recoveries == (),
        )
        return follow.conversation


def _step(thinking: str, *, text: str | None = None, city: str | None = None) -> Step:
    """The emulator's scripted reply: signed ``thinking``, then ``text`` or a get_weather call for ``city``."""
    from ..testing import Step  # noqa: PLC0415

    return Step(thinking=thinking, text=text, calls=[("get_weather", {"city": city})] if city else [])


STEPS: list[tuple[str, str, Callable[[Demo, DemoStep, Conversation], Conversation]]] = [
    ("tool-loop", "A three-step tool loop: signed thinking kept and replayed", lambda d, s, c: d.tool_loop(s)),
    ("pruned", "History pruned: the first tool round dropped", Demo.pruned),
    ("model-switch", f"Model switched to {OTHER_MODEL}", Demo.switched),
    ("rejected", "Signing keys rotated: a signature rejection, survived by one retry", Demo.rotated),
]


@contextmanager
def _running() -> Iterator[tuple[Emulator, Client]]:
    try:
        import httpx  # noqa: F401, PLC0415 - the client's transport

        from ..client import Client  # noqa: PLC0415
        from ..testing import emulate  # noqa: PLC0415
    except ImportError as err:
        raise InputError(f"thinkseal demo needs httpx ({err}); pip install 'httpx>=0.27'") from None
    with emulate(PROVIDER) as emu, Client(PROVIDER, base_url=emu.base_url, api_key="demo-key", max_retries=0) as client:
        yield emu, client


def run(args: argparse.Namespace) -> int:
    out = Out()
    with _running() as (emu, client):
        demo = Demo(emu, client)
        conversation = Conversation([])
        for number, (name, title, body) in enumerate(STEPS, 1):
            step = DemoStep(number, name, title)
            demo.steps.append(step)
            try:
                conversation = body(demo, step, conversation)
            except (ThinksealError, ValueError, IndexError, KeyError) as err:
                step.error = f"{type(err).__name__}: {err}"
            if not args.json:
                _print_step(out, step)
            if step.error is not None:
                break
    ok = len(demo.steps) == len(STEPS) and all(s.ok for s in demo.steps)
    if args.json:
        out.json({"ok": ok, "provider": PROVIDER, "steps": [_step_json(s) for s in demo.steps]})
    else:
        verdict = out.paint("every step behaved as described", "green") if ok else out.paint("FAILED", "red", "bold")
        out.line(f"demo: {verdict}")
    return 0 if ok else 1


# -- rendering ---------------------------------------------------------------------------


def _sealed(message: object) -> bool:
    return isinstance(message, AssistantMessage) and message.has_sealed_thinking


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}" if n == 1 else f"{n} {noun}s"


def _reply_text(out: Out, message: AssistantMessage) -> str:
    parts = []
    for block in message.thinking:
        if isinstance(block, ThinkingBlock.Text):
            seal = out.paint(" (signed)", "dim") if block.signature else ""
            parts.append(f"thinks {out.paint(json.dumps(block.text, ensure_ascii=False), 'magenta')}{seal}")
    for call in message.tool_calls:
        parts.append(f"calls {out.paint(call.name, 'cyan')}({json.dumps(dict(call.arguments), ensure_ascii=False)})")
    if message.content:
        parts.append(f"says {json.dumps(message.content, ensure_ascii=False)}")
    return "; ".join(parts)


def _print_step(out: Out, step: DemoStep) -> None:
    out.line(out.paint(f"Step {step.number}. {step.title}", "bold"))
    for ex in step.exchanges:
        sealed = sum(1 for e in ex.report if e.kept)
        out.line(
            f"  request to {out.paint(ex.model, 'cyan')}: {len(ex.conversation)} messages, "
            f"{_count(len(ex.report), 'assistant turn')}, {sealed} replayed sealed"
        )
        if len(ex.report):
            out.table(REPORT_HEADERS, report_rows(out, ex.conversation, ex.report), indent=4)
        for recovery in ex.reply.recoveries:
            status = getattr(recovery.error, "status", None)
            message = getattr(recovery.error, "message", str(recovery.error))
            out.line(
                f"    {out.paint('recovered', 'yellow')}: {recovery.kind} (HTTP {status}: {message}); "
                f"turn {', '.join(map(str, recovery.unsealed))} unsealed and the request sent once more"
            )
        out.line(f"    HTTP requests: {ex.http_requests}")
        out.line(f"    reply: {_reply_text(out, ex.reply.message)}")
    for description, ok in step.checks:
        mark = out.paint("ok    ", "green") if ok else out.paint("FAILED", "red", "bold")
        out.line(f"  {mark} {description}")
    if step.error is not None:
        out.line(f"  {out.paint('FAILED', 'red', 'bold')} the step raised {step.error}")
    out.line()


def _step_json(step: DemoStep) -> dict[str, Any]:
    return {
        "step": step.number,
        "name": step.name,
        "title": step.title,
        "ok": step.ok,
        "error": step.error,
        "checks": [{"check": description, "ok": ok} for description, ok in step.checks],
        "requests": [_exchange_json(ex) for ex in step.exchanges],
    }


def _exchange_json(ex: Exchange) -> dict[str, Any]:
    message = ex.reply.message
    return {
        "model": ex.model,
        "messages": len(ex.conversation),
        "report": [{"index": e.index, "kept": e.kept, "reason": e.reason} for e in ex.report],
        "http_requests": ex.http_requests,
        "reply": {
            "thinking": [b.text for b in message.thinking if isinstance(b, ThinkingBlock.Text)],
            "signed": message.has_sealed_thinking,
            "tool_calls": [{"name": c.name, "arguments": dict(c.arguments)} for c in message.tool_calls],
            "text": message.content,
        },
        "recoveries": [
            {
                "kind": r.kind,
                "unsealed": list(r.unsealed),
                "status": getattr(r.error, "status", None),
                "error": getattr(r.error, "message", str(r.error)),
            }
            for r in ex.reply.recoveries
        ],
    }
