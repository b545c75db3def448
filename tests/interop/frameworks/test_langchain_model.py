"""``thinkseal.interop.langchain.ChatThinkseal``, a real LangChain chat model,
against thinkseal's emulators over loopback HTTP: invoke, ainvoke, stream and
astream, a manual ``bind_tools`` loop with Claude's thinking replayed, and the
failures users report.

The control (WITHOUT thinkseal) sends the same LangChain history the way a
LangChain integration without thinkseal does (``ChatAnthropic`` and OpenRouter
integrations that keep ``reasoning_details``): every block as LangChain holds
it, written in the provider's format by thinkseal's plain converters
(``interop.anthropic.export_messages``, ``interop.openai.export_chat``), no
replay decision, posted to the same emulator. Rejections are the emulator's
4xx answers, counted both ways."""

from __future__ import annotations

import asyncio
import functools
import json
import operator
import re
import urllib.error
import urllib.request
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
from langchain_core.messages import (
    AIMessage,
    AIMessageChunk,
    BaseMessage,
    HumanMessage,
    SystemMessage,
    ToolMessage,
    messages_from_dict,
    messages_to_dict,
)
from pydantic import BaseModel

import thinkseal
from thinkseal import ThinkingBlock
from thinkseal.interop import anthropic as ts_anthropic
from thinkseal.interop import openai as ts_openai
from thinkseal.interop.langchain import ChatThinkseal, export_message, import_messages
from thinkseal.testing import Step, emulate

from .support import Refusals

SONNET, OPUS = "claude-sonnet-4-5", "claude-opus-4-1"
OR_CLAUDE, OR_GEMINI = "anthropic/claude-sonnet-4.5", "google/gemini-3-pro-preview"
DOC = Path(__file__).parents[3] / "docs" / "frameworks" / "langchain.md"
LOOKUP_SPEC = {
    "type": "function",
    "function": {
        "name": "lookup",
        "description": "Look something up.",
        "parameters": {"type": "object", "properties": {"q": {"type": "integer"}}, "required": ["q"]},
    },
}


def lookup(q: int) -> str:
    """Look something up."""
    return str(q)


def chat(emu: Any, provider: str, model: str, ledger: Any, **extra: Any) -> ChatThinkseal:
    return ChatThinkseal(
        provider=provider,
        model=model,
        ledger=ledger,
        base_url=emu.base_url,
        api_key="k",
        options={**emu.options, **emu.thinking_options},
        **extra,
    )


# -- the calls LangChain makes ------------------------------------------------------------


def test_a_bind_tools_loop_replays_claudes_signed_thinking() -> None:
    with emulate("anthropic") as emu:
        emu.script(Step(thinking="Look up q.", calls=[("lookup", {"q": 1})]), Step(thinking="So.", text="q is 1."))
        model = chat(emu, "anthropic", SONNET, thinkseal.Ledger()).bind_tools([lookup])
        messages: list[BaseMessage] = [SystemMessage("Be brief."), HumanMessage("What is q?")]
        first = model.invoke(messages)
        assert first.tool_calls[0]["name"] == "lookup"
        assert first.tool_calls[0]["args"] == {"q": 1}
        assert [b["type"] for b in first.content] == ["thinking"]  # type: ignore[index]
        assert first.usage_metadata is not None
        assert first.usage_metadata["total_tokens"] > 0
        assert first.response_metadata["model_provider"] == "anthropic"
        messages += [first, ToolMessage(lookup(**first.tool_calls[0]["args"]), tool_call_id=first.tool_calls[0]["id"])]
        second = model.invoke(messages)
        assert second.text == "q is 1."
        sent = emu.requests[-1].body
        assert sent["tools"][0]["name"] == "lookup"
        replayed = sent["messages"][1]["content"]
        assert [b["type"] for b in replayed] == ["thinking", "tool_use"]
        assert replayed[0]["signature"] == first.content[0]["signature"]  # type: ignore[index]
        assert len(emu.requests) == 2  # nothing refused, nothing retried


def test_without_a_ledger_the_loop_stops_before_sending() -> None:
    """Claude's tool loop cannot go on with its thinking unsealed; thinkseal says so instead of a 400."""
    with emulate("anthropic") as emu:
        emu.script(Step(thinking="Look up q.", calls=[("lookup", {"q": 1})]))
        model = chat(emu, "anthropic", SONNET, None).bind_tools([lookup])
        messages: list[BaseMessage] = [HumanMessage("What is q?")]
        first = model.invoke(messages)
        with pytest.raises(thinkseal.ReplayError):
            model.invoke([*messages, first, ToolMessage("1", tool_call_id=first.tool_calls[0]["id"])])
        assert len(emu.requests) == 1


@pytest.mark.parametrize(
    ("provider", "model_id"), [("anthropic", SONNET), ("openrouter", OR_CLAUDE), ("gemini", "gemini-3-pro-preview")]
)
def test_a_stream_adds_up_to_the_reply_and_the_loop_goes_on(provider: str, model_id: str) -> None:
    with emulate(provider) as emu:
        emu.script(
            Step(thinking="Look up q.", text="Let me see.", calls=[("lookup", {"q": 1})]),
            Step(thinking="So.", text="q is 1."),
        )
        ledger = thinkseal.Ledger()
        model = chat(emu, provider, model_id, ledger).bind_tools([lookup])
        messages: list[BaseMessage] = [HumanMessage("What is q?")]
        chunks = list(model.stream(messages))
        assert len(chunks) > 2
        assert all(isinstance(c, AIMessageChunk) for c in chunks)
        assert "".join(c.text for c in chunks) == "Let me see."
        whole = functools.reduce(operator.add, chunks)
        assert whole.tool_calls[0]["args"] == {"q": 1}
        messages += [whole, ToolMessage("1", tool_call_id=whole.tool_calls[0]["id"])]
        imported = import_messages(messages)
        assert imported[1].has_sealed_thinking  # type: ignore[union-attr]
        assert [t.status for t in ledger.attach(imported).turns] == ["recognised"]
        answer = model.invoke(messages)
        assert answer.text == "q is 1."
        assert len(emu.requests) == 2


def test_ainvoke_and_astream() -> None:
    async def main(emu: Any) -> None:
        model = chat(emu, "anthropic", SONNET, thinkseal.Ledger()).bind_tools([lookup])
        messages: list[BaseMessage] = [HumanMessage("What is q?")]
        chunks = [chunk async for chunk in model.astream(messages)]
        whole = functools.reduce(operator.add, chunks)
        messages += [whole, ToolMessage("1", tool_call_id=whole.tool_calls[0]["id"])]
        answer = await model.ainvoke(messages)
        assert answer.text == "q is 1."
        sent = emu.requests[-1].body["messages"][1]["content"]
        assert sent[0]["type"] == "thinking"
        assert sent[0]["thinking"] == "Look up q."

    with emulate("anthropic") as emu:
        emu.script(Step(thinking="Look up q.", calls=[("lookup", {"q": 1})]), Step(thinking="So.", text="q is 1."))
        asyncio.run(main(emu))
        assert len(emu.requests) == 2


def test_structured_output_through_bind_tools() -> None:
    class Answer(BaseModel):
        value: int

    with emulate("anthropic") as emu:
        emu.script(Step(calls=[("Answer", {"value": 4})]))
        model = ChatThinkseal(
            provider="anthropic", model=SONNET, base_url=emu.base_url, api_key="k", options=dict(emu.options)
        )
        assert model.with_structured_output(Answer).invoke("2+2?") == Answer(value=4)
        assert emu.requests[-1].body["tool_choice"] == {"type": "any"}


def test_bad_arguments_are_thinkseal_errors() -> None:
    with pytest.raises(thinkseal.ValidationError, match="unknown id"):
        ChatThinkseal(provider="nope", model=SONNET)
    with pytest.raises(thinkseal.ValidationError, match="model"):
        ChatThinkseal(provider="anthropic", model=" ")
    with pytest.raises(thinkseal.ValidationError, match=r"options\.t"):
        ChatThinkseal(provider="anthropic", model=SONNET, api_key="k", options={"t": float("nan")})
    model = ChatThinkseal(provider="anthropic", model=SONNET, api_key="k")
    with pytest.raises(thinkseal.ValidationError, match=r"messages\[0\]"):
        model.invoke([AIMessage(content=[{"type": "thinking", "thinking": "x", "signature": 5}])])
    with pytest.raises(thinkseal.ValidationError, match="tool_choice"):
        ChatThinkseal(provider="gemini", model="gemini-2.5-pro", api_key="k").bind_tools([lookup], tool_choice="any")
    with pytest.raises(thinkseal.ValidationError, match="provider: given twice"):
        ChatThinkseal("anthropic", provider="anthropic", model=SONNET)


def test_provider_and_model_may_be_positional() -> None:
    """As every framework adapter takes them (and ``thinkseal.Client``)."""
    positional = ChatThinkseal("anthropic", SONNET, api_key="k")
    assert (positional.provider, positional.model) == ("anthropic", SONNET)
    assert positional._identifying_params == ChatThinkseal(provider="anthropic", model=SONNET)._identifying_params


# -- the failures users report, without and with thinkseal ----------------------------------


class Session:
    """Sends LangChain histories one way (``"without"``: as LangChain holds them;
    ``"with"``: through ``ChatThinkseal`` and a ledger) and counts what the
    emulator refused."""

    def __init__(self, way: str, emu: Any, provider: str, ledger: Any) -> None:
        self.way, self.emu, self.provider, self.ledger = way, emu, provider, ledger
        self.failed = False

    def ask(self, model_id: str, messages: list[BaseMessage]) -> AIMessage | None:
        if self.failed:
            return None
        try:
            if self.way == "with":
                return chat(self.emu, self.provider, model_id, self.ledger).bind_tools([lookup]).invoke(messages)
            return self._as_held(model_id, messages)
        except urllib.error.HTTPError:
            self.failed = True
            return None

    def _as_held(self, model_id: str, messages: list[BaseMessage]) -> AIMessage:
        conv = import_messages(messages)
        options = {**self.emu.options, **self.emu.thinking_options}
        if self.provider == "anthropic":
            body = {"model": model_id, **options, **ts_anthropic.export_messages(conv)}
            body["tools"] = [{"name": "lookup", "input_schema": LOOKUP_SPEC["function"]["parameters"]}]  # type: ignore[index]
            headers = {"x-api-key": "k", "anthropic-version": "2023-06-01"}
        else:
            body = {"model": model_id, **options, **ts_openai.export_chat(conv, reasoning_field="reasoning")}
            body["tools"] = [LOOKUP_SPEC]
            headers = {"authorization": "Bearer k"}
        path = "/v1/messages" if self.provider == "anthropic" else "/api/v1/chat/completions"
        post = urllib.request.Request(
            self.emu.base_url + path,
            data=json.dumps(body).encode(),
            headers={**headers, "content-type": "application/json"},
        )
        with urllib.request.urlopen(post, timeout=10) as answer:
            reply = json.loads(answer.read())
        if self.provider == "anthropic":
            turn = ts_anthropic.import_messages([{"role": "assistant", "content": reply["content"]}])[0]
        else:
            turn = ts_openai.import_chat([reply["choices"][0]["message"]])[0]
        return export_message(turn)  # type: ignore[arg-type]


def loop_step(emu: Any) -> None:
    emu.script(Step(thinking="Look up q.", calls=[("lookup", {"q": 1})]), Step(thinking="So.", text="q is 1."))


def tool_loop(s: Session, model_id: str, messages: list[BaseMessage]) -> list[BaseMessage]:
    """One question answered through one tool call: the history after it."""
    first = s.ask(model_id, messages)
    if first is None:
        return messages
    messages = [*messages, first, ToolMessage("1", tool_call_id=first.tool_calls[0]["id"])]
    second = s.ask(model_id, messages)
    return messages if second is None else [*messages, second]


def model_switch(s: Session, tmp: Path) -> None:
    loop_step(s.emu)
    s.emu.script(Step(thinking="Doubled.", text="2."))
    history = tool_loop(s, SONNET, [SystemMessage("Be brief."), HumanMessage("What is q?")])
    s.ask(OPUS, [*history, HumanMessage("And doubled?")])


def pruning(s: Session, tmp: Path) -> None:
    loop_step(s.emu)
    loop_step(s.emu)
    s.emu.script(Step(thinking="Pruned.", text="Ok."))
    history = tool_loop(s, SONNET, [SystemMessage("Be brief."), HumanMessage("What is q?")])
    history = tool_loop(s, SONNET, [*history, HumanMessage("And r?")])
    # Keep the system prompt and the latest exchange only (a trimmer, a summariser, a window).
    s.ask(SONNET, [history[0], *history[5:], HumanMessage("Thanks. And s?")])


def system_preamble(s: Session, tmp: Path) -> None:
    loop_step(s.emu)
    s.emu.script(Step(thinking="Tuesday.", text="Ok."))
    history = tool_loop(s, SONNET, [SystemMessage("Today is Monday."), HumanMessage("What is q?")])
    # The app's prompt template renders the system preamble anew for every call.
    s.ask(SONNET, [SystemMessage("Today is Tuesday."), *history[1:], HumanMessage("And now?")])


def interrupted_tool_loop(s: Session, tmp: Path) -> None:
    s.emu.script(Step(thinking="Look up q.", calls=[("lookup", {"q": 1})]), Step(thinking="Sure.", text="4."))
    messages: list[BaseMessage] = [SystemMessage("Be brief."), HumanMessage("What is q?")]
    first = s.ask(SONNET, messages)
    if first is not None:  # the user interrupts: the call is never answered
        s.ask(SONNET, [*messages, first, HumanMessage("Never mind: what is 2+2?")])


def restart(s: Session, tmp: Path) -> None:
    s.emu.script(Step(thinking="Look up q.", calls=[("lookup", {"q": 1})]), Step(thinking="So.", text="q is 1."))
    messages: list[BaseMessage] = [SystemMessage("Be brief."), HumanMessage("What is q?")]
    first = s.ask(SONNET, messages)
    if first is None:
        return
    stored = json.dumps(messages_to_dict([*messages, first]))  # the process stops here
    if s.way == "with":
        s.ledger.close()
        s.ledger = thinkseal.Ledger.sqlite(str(tmp / f"ledger-{s.way}.db"))
    restored = messages_from_dict(json.loads(stored))
    s.ask(SONNET, [*restored, ToolMessage("1", tool_call_id=first.tool_calls[0]["id"])])


def claude_then_gemini(s: Session, tmp: Path) -> None:
    loop_step(s.emu)
    s.emu.script(Step(thinking="Gemini now.", text="Paris."))
    history = tool_loop(s, OR_CLAUDE, [SystemMessage("Be brief."), HumanMessage("What is q?")])
    s.ask(OR_GEMINI, [*history, HumanMessage("Capital of France?")])


SCENARIOS: dict[str, tuple[str, Callable[[Session, Path], None]]] = {
    "model switch mid-session": ("anthropic", model_switch),
    "pruned history": ("anthropic", pruning),
    "system preamble re-rendered": ("anthropic", system_preamble),
    "interrupted tool loop": ("anthropic", interrupted_tool_loop),
    "restart from messages_to_dict": ("anthropic", restart),
    "Claude -> Gemini on OpenRouter": ("openrouter", claude_then_gemini),
}
# What the runs below measure (docs/frameworks/langchain.md quotes it).
EXPECTED = {
    "model switch mid-session": (1, 0),
    "pruned history": (1, 0),
    "system preamble re-rendered": (1, 0),
    "interrupted tool loop": (1, 0),
    "restart from messages_to_dict": (0, 0),
    "Claude -> Gemini on OpenRouter": (1, 0),
}


def test_the_reported_failures_without_and_with_thinkseal(tmp_path: Path) -> None:
    counts: dict[str, tuple[int, int]] = {}
    emulators = {"anthropic": emulate("anthropic"), "openrouter": emulate("openrouter")}
    with emulators["anthropic"] as claude, emulators["openrouter"] as openrouter:
        running = {"anthropic": claude, "openrouter": openrouter}
        refused = {name: Refusals(emu) for name, emu in running.items()}
        for name, (provider, scenario) in SCENARIOS.items():
            measured = []
            for way in ("without", "with"):
                emu = running[provider]
                emu.clear_script()
                before = len(refused[provider])
                ledger = thinkseal.Ledger.sqlite(str(tmp_path / f"ledger-{way}.db")) if way == "with" else None
                session = Session(way, emu, provider, ledger)
                scenario(session, tmp_path)
                measured.append(len(refused[provider]) - before)
                if way == "with":
                    assert not session.failed, name
                    session.ledger.close()
                    (tmp_path / f"ledger-{way}.db").unlink()
            counts[name] = (measured[0], measured[1])
    assert counts == EXPECTED
    assert sum(without for without, _ in counts.values()) >= 1
    assert sum(with_ for _, with_ in counts.values()) == 0
    # The page states these very counts.
    page = DOC.read_text()
    for name, (without, with_) in counts.items():
        assert re.search(rf"\| {re.escape(name)} \| {without} \| {with_} \|", page), name


def test_the_pages_example_runs() -> None:
    code = re.search(r"```python\n(.*?)```", DOC.read_text(), re.DOTALL)
    assert code is not None
    namespace: dict[str, Any] = {}
    exec(compile(code.group(1), str(DOC), "exec"), namespace)  # the page's own example
    assert namespace["answer"].text == "q is 1."


def test_a_turn_from_another_provider_goes_unsealed_not_refused() -> None:
    """A Claude turn (signed thinking) handed to Gemini: thinkseal sends its text, never its signature."""
    with emulate("gemini") as emu:
        emu.script(Step(thinking="Fine.", text="Ok."))
        claude_turn = export_message(
            thinkseal.AssistantMessage("Paris.", thinking=[ThinkingBlock.Text("France.", "c2ln")])
        )
        model = chat(emu, "gemini", "gemini-2.5-pro", thinkseal.Ledger())
        answer = model.invoke([HumanMessage("Capital of France?"), claude_turn, HumanMessage("Sure?")])
        assert answer.text == "Ok."
        assert "c2ln" not in json.dumps(emu.requests[-1].body)
