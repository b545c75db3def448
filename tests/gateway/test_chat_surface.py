"""The gateway's chat-completions surface, driven by the official ``openai``
client with only its base URL changed, against thinkseal's emulators.

Each scenario runs twice on fresh emulators: once with the client pointed at
the emulator itself (the control: what a client without thinkseal gets) and
once through the gateway. The emulators refuse what the providers refuse
(signed reasoning sent to another model or after another prefix); the
gateway must leave no refusal."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from thinkseal import ValidationError
from thinkseal.gateway._chat_surface import ChatCompletions
from thinkseal.providers import provider
from thinkseal.testing import Step, emulate

from ._openai_support import CHAT_TOOLS, SDK_SUFFIX, Answer, Client, ask, host_route, route, thinking
from .conftest import serve, sqlite_url

QUESTION = {"role": "user", "content": "What is q?"}
AGAIN = {"role": "user", "content": "And once more?"}
LOOKUP = [("lookup", {"q": 1})]


def loop(client: Client, emu: Any, model: str, messages: list[Any], **extra: Any) -> list[Answer]:
    """One question's tool loop: each reply's message goes back as the client
    got it (the SDK's own object), each call answered, until the model answers."""
    answers = []
    while True:
        answer = ask(
            client.sdk.chat.completions.with_raw_response.create,
            model=model,
            messages=messages,
            tools=CHAT_TOOLS,
            extra_body=thinking(emu),
            **extra,
        )
        answers.append(answer)
        if answer.reply is None:
            return answers
        message = answer.reply.choices[0].message
        messages.append(message)
        if not message.tool_calls:
            return answers
        messages.extend({"role": "tool", "tool_call_id": c.id, "content": "1"} for c in message.tool_calls)


def switched(first: str, second: str) -> Callable[[Client, Any], list[Answer]]:
    """A tool loop on model ``first``, then the next question to ``second`` with the same history."""

    def scenario(client: Client, emu: Any) -> list[Answer]:
        emu.script(Step(thinking="Look it up.", calls=LOOKUP), Step(thinking="It is one.", text="One."))
        messages: list[Any] = [QUESTION]
        answers = loop(client, emu, first, messages)
        messages.append(AGAIN)
        return answers + loop(client, emu, second, messages)

    return scenario


def pruned(model: str) -> Callable[[Client, Any], list[Answer]]:
    """Two questions with tool loops, then the first exchange pruned from the history."""

    def scenario(client: Client, emu: Any) -> list[Answer]:
        emu.script(
            Step(thinking="Look it up.", calls=LOOKUP),
            Step(thinking="It is one.", text="One."),
            Step(thinking="Again.", calls=LOOKUP),
            Step(thinking="Still one.", text="One again."),
        )
        messages: list[Any] = [QUESTION]
        answers = loop(client, emu, model, messages)
        messages.append(AGAIN)
        answers += loop(client, emu, model, messages)
        kept = messages[4:]  # the second question on
        kept.append({"role": "user", "content": "Thanks. Anything else?"})
        return answers + loop(client, emu, model, kept)

    return scenario


def tool_loop(model: str) -> Callable[[Client, Any], list[Answer]]:
    """One tool loop, its reasoning sent back as the client got it."""

    def scenario(client: Client, emu: Any) -> list[Answer]:
        emu.script(Step(thinking="Look it up.", calls=LOOKUP), Step(thinking="It is one.", text="One."))
        return loop(client, emu, model, [QUESTION])

    return scenario


# provider, scenario name, scenario, whether the control (no gateway) is refused
SCENARIOS: list[tuple[str, str, Callable[[Client, Any], list[Answer]], bool]] = [
    ("openrouter", "claude-to-gemini", switched("anthropic/claude-sonnet-4.5", "google/gemini-3-pro-preview"), True),
    ("openrouter", "claude-model-switch", switched("anthropic/claude-sonnet-4.5", "anthropic/claude-opus-4.1"), True),
    ("openrouter", "pruned", pruned("anthropic/claude-sonnet-4.5"), True),
    ("gemini-openai", "model-switch", switched("gemini-3-pro-preview", "gemini-3-flash-preview"), True),
    ("mistral", "model-switch", switched("magistral-medium-latest", "magistral-small-latest"), True),
    ("deepseek", "tool-loop", tool_loop("deepseek-chat"), False),
    ("zai", "tool-loop", tool_loop("glm-4.6"), False),
    ("openai", "tool-loop", tool_loop("gpt-5"), False),
]
# The openai SDK's models type an assistant's content as a string; Mistral's thinking chunks are a list.
pytestmark = pytest.mark.filterwarnings("ignore:Pydantic serializer warnings:UserWarning")


def run(
    provider: str, scenario: Callable[[Client, Any], list[Answer]], gateway: bool, host_upstream: bool = False
) -> tuple[int, list[Answer]]:
    """The scenario on a fresh emulator, with or without the gateway in front;
    the emulator's refusals and the answers. ``host_upstream``: the route's
    upstream is the provider's host, and the client's base URL the route's
    prefix plus the provider's own base path (``/openrouter/api/v1``), rather
    than the upstream the provider's base URL and the client's the prefix."""
    with emulate(provider) as emu:
        if not gateway:
            answers = scenario(Client(emu.base_url + SDK_SUFFIX.get(provider, "")), emu)
            return len(emu.rejections), answers
        config, base_path = host_route(emu, provider) if host_upstream else (route(emu, provider), "")
        with serve({"routes": [config]}) as served:
            client = Client(f"{served.url}/{provider}{base_path}" + SDK_SUFFIX.get(provider, ""))
            answers = scenario(client, emu)
            client.close()
            return len(emu.rejections), answers


@pytest.mark.parametrize(
    ("provider", "name", "scenario", "refused"), SCENARIOS, ids=[f"{p}-{n}" for p, n, _, _ in SCENARIOS]
)
def test_scenario_with_and_without_the_gateway(
    provider: str, name: str, scenario: Callable[[Client, Any], list[Answer]], refused: bool
) -> None:
    without, _ = run(provider, scenario, gateway=False)
    with_gateway, answers = run(provider, scenario, gateway=True)
    print(f"{provider}/{name}: refused without the gateway {without}, with it {with_gateway}")
    assert (without >= 1) is refused
    assert with_gateway == 0
    assert all(a.status == 200 for a in answers)
    # Every answer says what the gateway did; what it had to unseal, it did.
    assert all(a.kept is not None and a.unsealed is not None for a in answers)
    assert (sum(a.unsealed or 0 for a in answers) >= 1) is refused


@pytest.mark.parametrize(
    ("provider", "name", "scenario", "refused"), SCENARIOS, ids=[f"{p}-{n}" for p, n, _, _ in SCENARIOS]
)
def test_an_upstream_named_by_its_host_is_decided_alike(
    provider: str, name: str, scenario: Callable[[Client, Any], list[Answer]], refused: bool
) -> None:
    """docs/gateway.md's other form of a route: upstream ``https://openrouter.ai``,
    client base URL the prefix plus the provider's path (``/openrouter/api/v1``)."""
    with_gateway, answers = run(provider, scenario, gateway=True, host_upstream=True)
    assert with_gateway == 0
    assert all(a.status == 200 for a in answers)
    assert all(a.kept is not None and a.unsealed is not None for a in answers)
    assert (sum(a.unsealed or 0 for a in answers) >= 1) is refused


def test_a_kept_history_goes_upstream_byte_for_byte() -> None:
    with emulate("openrouter") as emu, serve({"routes": [route(emu, "openrouter")]}) as served:
        client = Client(f"{served.url}/openrouter")
        answers = tool_loop("anthropic/claude-sonnet-4.5")(client, emu)
        assert [a.kept for a in answers] == [0, 1]
        assert [a.unsealed for a in answers] == [0, 0]
        assert [r.raw for r in emu.requests] == client.sent


def test_the_unsealed_turn_goes_out_in_the_adapters_own_form() -> None:
    with emulate("gemini-openai") as emu, serve({"routes": [route(emu, "gemini-openai")]}) as served:
        client = Client(f"{served.url}/gemini-openai")
        answers = switched("gemini-3-pro-preview", "gemini-3-flash-preview")(client, emu)
        assert answers[-1].unsealed == 2  # the call turn and the answer, each signed
        turn = emu.requests[-1].body["messages"][1]
        # Its own signature off; Gemini 3's placeholder on the first call, as the gemini-openai adapter sends it.
        signature = turn["tool_calls"][0]["extra_content"]["google"]["thought_signature"]
        assert signature == "skip_thought_signature_validator"
        assert (
            json.loads(client.sent[-1])["messages"][1]["tool_calls"][0]["extra_content"]
            != turn["tool_calls"][0]["extra_content"]
        )


def collect(stream: Iterator[Any]) -> dict[str, Any]:
    """A streamed reply's message, put together as a client does from the chunks."""
    content: list[str] = []
    reasoning: list[str] = []
    calls: dict[int, dict[str, Any]] = {}
    for chunk in stream:
        if not chunk.choices:
            continue
        delta = chunk.choices[0].delta.model_dump(exclude_none=True)
        content.append(delta.get("content") or "")
        reasoning.append(delta.get("reasoning_content") or "")
        for fragment in delta.get("tool_calls") or ():
            call = calls.setdefault(
                fragment.get("index", len(calls)),
                {"id": None, "type": "function", "function": {"name": None, "arguments": ""}},
            )
            call["id"] = call["id"] or fragment.get("id")
            function = fragment.get("function") or {}
            call["function"]["name"] = call["function"]["name"] or function.get("name")
            call["function"]["arguments"] += function.get("arguments") or ""
            if "extra_content" in fragment:
                call["extra_content"] = fragment["extra_content"]
    message: dict[str, Any] = {"role": "assistant", "content": "".join(content) or None}
    if "".join(reasoning):
        message["reasoning_content"] = "".join(reasoning)
    if calls:
        message["tool_calls"] = [calls[k] for k in sorted(calls)]
    return message


@pytest.mark.parametrize(
    ("provider", "model"), [("gemini-openai", "gemini-3-pro-preview"), ("deepseek", "deepseek-chat")]
)
def test_a_streamed_reply_is_relayed_and_recorded(provider: str, model: str) -> None:
    config = {"gateway": {"unknown_seals": "unseal"}, "routes": []}
    with emulate(provider) as emu:
        config["routes"] = [route(emu, provider)]
        with serve(config) as served:
            client = Client(f"{served.url}/{provider}")
            emu.script(Step(thinking="Look it up.", calls=LOOKUP), Step(thinking="It is one.", text="One."))
            messages: list[Any] = [QUESTION]
            raw = client.sdk.chat.completions.with_raw_response.create(
                model=model, messages=messages, tools=CHAT_TOOLS, stream=True, extra_body=thinking(emu)
            )
            assert raw.headers["thinkseal-kept"] == "0"
            message = collect(raw.parse())
            assert message["tool_calls"][0]["function"]["name"] == "lookup"
            messages += [message, {"role": "tool", "tool_call_id": message["tool_calls"][0]["id"], "content": "1"}]
            answer = loop(client, emu, model, messages)[-1]
            assert answer.status == 200
            assert answer.reply.choices[0].message.content == "One."
            # Recorded from the stream: recognised (the policy would unseal an unknown seal).
            sealed = provider == "gemini-openai"
            assert (answer.kept, answer.unsealed) == ((1, 0) if sealed else (0, 0))
            assert len(emu.rejections) == 0


def test_a_fresh_gateway_on_the_same_ledger_honours_recorded_replies(tmp_path: Path) -> None:
    model = "anthropic/claude-sonnet-4.5"
    ledger = {"ledger": sqlite_url(tmp_path), "unknown_seals": "unseal"}
    with emulate("openrouter") as emu:
        emu.script(Step(thinking="Look it up.", calls=LOOKUP))
        with serve({"gateway": ledger, "routes": [route(emu, "openrouter")]}) as first:
            client = Client(f"{first.url}/openrouter")
            create = client.sdk.chat.completions.with_raw_response.create
            answer = ask(create, model=model, messages=[QUESTION], tools=CHAT_TOOLS, extra_body=thinking(emu))
        reply = answer.reply.choices[0].message
        history = [QUESTION, reply, {"role": "tool", "tool_call_id": reply.tool_calls[0].id, "content": "1"}]

        def second_turn(config: dict[str, Any]) -> Answer:
            emu.script(Step(thinking="It is one.", text="One."))
            with serve({"gateway": config, "routes": [route(emu, "openrouter")]}) as again:
                create = Client(f"{again.url}/openrouter").sdk.chat.completions.with_raw_response.create
                return ask(create, model=model, messages=history, tools=CHAT_TOOLS, extra_body=thinking(emu))

        restarted = second_turn(ledger)
        assert (restarted.status, restarted.kept, restarted.unsealed) == (200, 1, 0)
        # The same history to a gateway whose ledger never saw the reply: unsealed under this policy.
        stranger = second_turn({"ledger": "memory", "unknown_seals": "unseal"})
        assert (stranger.status, stranger.kept, stranger.unsealed) == (200, 0, 1)
        assert len(emu.rejections) == 0


def test_a_gemini_thought_summary_sent_back_is_recovered_from() -> None:
    # With include_thoughts, the reply's content starts with <thought>…</thought>; a client that sends
    # the message back as it got it changes what Gemini signed, and is refused ("Corrupted thought
    # signature."). The gateway keeps what the client sent, and on that refusal retries once with the
    # turn unsealed (Gemini 3's placeholder signature on its first call), and says so.
    def with_summaries(client: Client, emu: Any) -> list[Answer]:
        emu.script(Step(thinking="Look it up.", calls=LOOKUP), Step(thinking="It is one.", text="One."))
        messages: list[Any] = [QUESTION]
        answers = []
        while True:
            create = client.sdk.chat.completions.with_raw_response.create
            options = emu.thinking_options  # include_thoughts on
            answer = ask(create, model="gemini-3-pro-preview", messages=messages, tools=CHAT_TOOLS, extra_body=options)
            answers.append(answer)
            if answer.reply is None or not answer.reply.choices[0].message.tool_calls:
                return answers
            message = answer.reply.choices[0].message
            assert message.content.startswith("<thought>")
            messages += [message, {"role": "tool", "tool_call_id": message.tool_calls[0].id, "content": "1"}]

    without, refused = run("gemini-openai", with_summaries, gateway=False)
    assert without == 1
    assert refused[-1].status == 400
    upstream_refusals, answers = run("gemini-openai", with_summaries, gateway=True)
    assert [a.status for a in answers] == [200, 200]
    assert answers[-1].headers is not None
    assert answers[-1].headers["thinkseal-recovered"] == "1"
    assert upstream_refusals == 1  # the provider's refusal the gateway recovered from


def test_a_message_the_adapter_cannot_read_is_named_and_the_body_forwarded_as_it_came() -> None:
    body = {"model": "m", "messages": [QUESTION, {"role": "assistant", "content": 5}]}
    with pytest.raises(ValidationError) as caught:
        ChatCompletions(provider("deepseek")).read(body, "/chat/completions")
    assert caught.value.path == "messages[1].content"
    with emulate("deepseek") as emu, serve({"routes": [route(emu, "deepseek")]}) as served:
        raw = json.dumps(body).encode()
        answer = httpx.post(
            f"{served.url}/deepseek/chat/completions", content=raw, headers={"authorization": "Bearer k"}
        )
        assert answer.status_code == 400  # the provider's own refusal, relayed
        assert emu.requests[-1].raw == raw
