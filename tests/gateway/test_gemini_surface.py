"""The gateway's Gemini surface (``generateContent``, ``streamGenerateContent``)
driven by the official google-genai SDK, only its base URL pointed at the
gateway (and the API version the emulator serves, ``v1beta``: this SDK
release defaults to ``v1``), with thinkseal's Gemini emulator as the upstream.

Each failure scenario runs twice, straight to the emulator and through the
gateway, and the emulator's own 400s are counted: without the gateway at
least one scenario is refused, with it none is."""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
from google import genai
from google.genai import errors, types
from google.oauth2.credentials import Credentials

from thinkseal import AssistantMessage, SystemMessage, ToolMessage, UserMessage, ValidationError
from thinkseal._content import Native
from thinkseal.gateway._gemini_surface import import_contents
from thinkseal.testing import Step
from thinkseal.testing._server import Request, RequestRejected, Response
from thinkseal.testing.gemini import VERTEX_INVALID, GeminiEmulator, Reply

from .conftest import serve


@contextmanager
def serving(config: dict[str, Any]) -> Iterator[str]:
    """The gateway for ``config`` on a free loopback port; its base URL."""
    with serve(config) as served:
        yield served.url


KEY = "gemini-test-key"
PRO_25 = "gemini-2.5-pro"
FLASH_25 = "gemini-2.5-flash"
PRO_3 = "gemini-3-pro-preview"
FLASH_3 = "gemini-3-flash-preview"
DUMMY = "skip_thought_signature_validator"
CORRUPTED = "Corrupted thought signature."

WEATHER = types.Tool(
    function_declarations=[
        types.FunctionDeclaration(
            name="get_weather",
            description="The weather in a city.",
            parameters_json_schema={"type": "object", "properties": {"city": {"type": "string"}}},
        )
    ]
)
CONFIG = types.GenerateContentConfig(
    system_instruction="Be brief.",
    tools=[WEATHER],
    thinking_config=types.ThinkingConfig(include_thoughts=True),
    automatic_function_calling=types.AutomaticFunctionCallingConfig(disable=True),
)


class CountingEmulator(GeminiEmulator):
    """The Gemini emulator, counting the requests it refuses with a 400."""

    def __init__(self, provider: str = "gemini") -> None:
        super().__init__(provider, require_auth=True)
        self.refused: list[str] = []

    def _answer(self, request: Request) -> Response:
        try:
            return super()._answer(request)
        except RequestRejected as err:
            if err.status == 400:
                self.refused.append(err.body["error"]["message"])
            raise


@pytest.fixture
def emu() -> Iterator[CountingEmulator]:
    with CountingEmulator() as emulator:
        yield emulator


def route(emu: GeminiEmulator, prefix: str = "/gemini", **extra: Any) -> dict[str, Any]:
    return {"prefix": prefix, "provider": "gemini", "upstream": emu.base_url, **extra}


def merged(chunks: list[types.GenerateContentResponse]) -> types.Content:
    """A streamed reply as one content, as a client sends it back: text
    fragments of one kind joined, a signature that ends the stream on an empty
    text put on the part before it (Google's thought-signature FAQ)."""
    parts: list[types.Part] = []
    for chunk in chunks:
        assert chunk.candidates
        content = chunk.candidates[0].content
        for part in (content.parts if content else None) or []:
            last = parts[-1] if parts else None
            if last is not None and part.text is not None and last.text is not None and not last.thought_signature:
                if not part.text and part.thought_signature:
                    last.thought_signature = part.thought_signature
                    continue
                if bool(part.thought) == bool(last.thought):
                    last.text += part.text
                    last.thought_signature = part.thought_signature
                    continue
            parts.append(part.model_copy())
    return types.Content(role="model", parts=parts)


class Session:
    """A conversation an application keeps in google-genai's own types."""

    def __init__(self, base: str) -> None:
        options = types.HttpOptions(base_url=base, api_version="v1beta")
        self.client = genai.Client(api_key=KEY, http_options=options)
        self.contents: list[types.Content] = []
        self.headers: dict[str, str] = {}
        self.refused = 0

    def ask(self, model: str, text: str | None = None, *, stream: bool = False) -> bool:
        """One request (``text``: a new user message first); False when refused."""
        if text is not None:
            self.contents.append(types.Content(role="user", parts=[types.Part(text=text)]))
        models = self.client.models
        try:
            if stream:
                chunks = list(models.generate_content_stream(model=model, contents=self.contents, config=CONFIG))
                content = merged(chunks)
                http = chunks[0].sdk_http_response
            else:
                response = models.generate_content(model=model, contents=self.contents, config=CONFIG)
                assert response.candidates
                content = response.candidates[0].content
                http = response.sdk_http_response
        except errors.ClientError as err:
            if err.code != 400:
                raise
            self.refused += 1
            return False
        assert content is not None
        assert http is not None
        self.headers = dict(http.headers or {})
        self.contents.append(content)
        return True

    def results(self) -> None:
        """The function responses to the calls of the last model content."""
        calls = [p.function_call for p in self.contents[-1].parts or [] if p.function_call]
        assert calls
        parts = [types.Part.from_function_response(name=c.name or "", response={"output": "rain"}) for c in calls]
        self.contents.append(types.Content(role="user", parts=parts))

    def counts(self) -> tuple[int, int]:
        return int(self.headers["thinkseal-kept"]), int(self.headers["thinkseal-unsealed"])


def call_step() -> Step:
    return Step(thinking="The tool knows.", calls=[("get_weather", {"city": "Paris"})])


def script(emu: GeminiEmulator, *steps: Step) -> None:
    """Queue ``steps`` in place of what a refused request left queued."""
    emu.clear_script()
    emu.script(*steps)


# -- the scenarios, each straight to the emulator (via=False) and through the gateway ------------


def tool_loop(base: str, emu: GeminiEmulator, via: bool, *, stream: bool = False) -> Session:
    """Gemini 3's function-calling loop: the signed call goes back with its result."""
    script(emu, call_step(), Step(text="It rains."))
    session = Session(base)
    assert session.ask(PRO_3, "Weather in Paris?", stream=stream)
    session.results()
    assert session.ask(PRO_3, stream=stream)
    if via:
        assert session.counts() == (1, 0)  # the signed call replayed as it came
    return session


def model_switch(base: str, emu: GeminiEmulator, via: bool) -> Session:
    """A tool loop started on Gemini 2.5 Pro and continued on Gemini 3 Flash."""
    script(emu, call_step(), Step(text="It rains."))
    session = Session(base)
    assert session.ask(PRO_25, "Weather in Paris?")
    session.results()
    if session.ask(FLASH_3) and via:
        assert session.counts() == (0, 1)
        assert session.headers["thinkseal-reasons"] == "origin-mismatch=1"
        # The turn as the adapter sends it to Gemini 3: no thought text, the call with Google's dummy signature.
        sent = emu.requests[-1].body["contents"][1]
        assert sent == {
            "role": "model",
            "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}, "thoughtSignature": DUMMY}],
        }
    return session


def pruning(base: str, emu: GeminiEmulator, via: bool) -> Session:
    """Two tool loops; the application drops the first before the second's result goes back."""
    script(emu, call_step(), Step(text="It rains."), call_step(), Step(text="Still rain."))
    session = Session(base)
    assert session.ask(FLASH_3, "Weather in Paris?")
    session.results()
    assert session.ask(FLASH_3)
    assert session.ask(FLASH_3, "And tomorrow?")
    session.results()
    del session.contents[:4]
    if session.ask(FLASH_3) and via:
        assert session.counts() == (0, 1)
        assert emu.requests[-1].body["contents"][1]["parts"][0]["thoughtSignature"] == DUMMY
    return session


def test_without_the_gateway_gemini_refuses_and_through_it_nothing_is(emu: CountingEmulator) -> None:
    failing = (model_switch, pruning)
    without: dict[str, int] = {}
    for scenario in failing:
        emu.refused.clear()
        scenario(emu.base_url, emu, False)
        without[scenario.__name__] = len(emu.refused)
    assert without == {"model_switch": 1, "pruning": 1}
    assert set(emu.refused) == {CORRUPTED}  # Gemini's own error for a signature that no longer holds
    emu.refused.clear()
    with serving({"routes": [route(emu)]}) as url:
        for scenario in failing:
            session = scenario(url + "/gemini", emu, True)
            assert session.refused == 0
    assert emu.refused == []


def test_a_tool_loop_goes_through_byte_for_byte(emu: CountingEmulator) -> None:
    tool_loop(emu.base_url, emu, False)
    direct = [r.raw for r in emu.requests]
    emu.clear_requests()
    with serving({"routes": [route(emu)]}) as url:
        tool_loop(url + "/gemini", emu, True)
    assert [r.raw for r in emu.requests] == direct
    assert emu.requests[-1].path == f"/v1beta/models/{PRO_3}:generateContent"
    assert emu.refused == []


def test_a_streamed_tool_loop_is_recorded_from_the_stream(emu: CountingEmulator) -> None:
    tool_loop(emu.base_url, emu, False, stream=True)
    direct = [r.raw for r in emu.requests]
    emu.clear_requests()
    with serving({"routes": [route(emu)], "gateway": {"unknown_seals": "unseal"}}) as url:
        # Kept (not unsealed as unknown): the first answer was recorded from the relayed stream.
        tool_loop(url + "/gemini", emu, True, stream=True)
    assert [r.raw for r in emu.requests] == direct
    assert emu.requests[-1].path == f"/v1beta/models/{PRO_3}:streamGenerateContent?alt=sse"
    assert emu.refused == []


def test_the_model_map_rewrites_the_path(emu: CountingEmulator) -> None:
    mapped = route(emu, "/mapped", models={PRO_25: FLASH_25})
    crossing = route(emu, "/to-gemini-3", models={PRO_25: PRO_3})
    with serving({"routes": [route(emu), mapped, crossing]}) as url:
        script(emu, call_step(), Step(text="It rains."))
        session = Session(url + "/mapped")
        assert session.ask(PRO_25, "Weather in Paris?")
        session.results()
        assert session.ask(PRO_25)
        assert session.counts() == (1, 0)  # bound to the model it went to, and sent there again
        assert [r.path for r in emu.requests] == [f"/v1beta/models/{FLASH_25}:generateContent"] * 2

        # A 2.5 turn mapped to Gemini 3 goes out as the adapter sends it there: with the dummy signature.
        script(emu, call_step(), Step(text="It rains."))
        session = Session(url + "/gemini")
        assert session.ask(PRO_25, "Weather in Paris?")
        session.results()
        session.client = Session(url + "/to-gemini-3").client
        assert session.ask(PRO_25)
        assert session.counts() == (0, 1)
        assert emu.requests[-1].path == f"/v1beta/models/{PRO_3}:generateContent"
        assert emu.requests[-1].body["contents"][1]["parts"][-1]["thoughtSignature"] == DUMMY
    assert emu.refused == []


def test_a_fresh_gateway_on_the_same_sqlite_ledger_recognises_the_turns(emu: CountingEmulator, tmp_path: Path) -> None:
    ledger = f"sqlite:///{tmp_path / 'ledger.db'}"
    config = {"gateway": {"ledger": ledger, "unknown_seals": "unseal"}, "routes": [route(emu)]}
    script(emu, call_step(), Step(text="It rains."), Step(text="Still rain."))
    with serving(config) as url:
        session = Session(url + "/gemini")
        assert session.ask(PRO_3, "Weather in Paris?")
    session.results()
    with serving(config) as url:
        session.client = Session(url + "/gemini").client
        assert session.ask(PRO_3)
        assert session.counts() == (1, 0)
    session.contents.pop()
    # A gateway that never saw the turn unseals it (the policy here), with the dummy Gemini 3 needs.
    with serving({"gateway": {"unknown_seals": "unseal"}, "routes": [route(emu)]}) as url:
        session.client = Session(url + "/gemini").client
        assert session.ask(PRO_3)
        assert session.counts() == (0, 1)
        assert emu.requests[-1].body["contents"][1]["parts"][-1]["thoughtSignature"] == DUMMY
    assert emu.refused == []


def test_a_stale_signature_is_retried_once_unsealed(emu: CountingEmulator) -> None:
    script(emu, call_step(), Step(text="It rains."))
    with serving({"routes": [route(emu)]}) as url:
        session = Session(url + "/gemini")
        assert session.ask(PRO_3, "Weather in Paris?")
        session.results()
        emu.rotate_keys()  # every signature issued so far stops verifying
        assert session.ask(PRO_3)
    assert emu.refused == [CORRUPTED]  # refused once upstream, answered to the client
    assert session.headers["thinkseal-recovered"] == "2"  # the turn unsealed: after the system prompt and question
    assert session.counts() == (0, 1)
    assert emu.requests[-1].body["contents"][1]["parts"][-1]["thoughtSignature"] == DUMMY


def test_a_body_thinkseal_cannot_read_passes_through_untouched(emu: CountingEmulator) -> None:
    body = {"contents": [{"role": "user", "parts": [{"text": "Hi"}]}, {"role": "model", "parts": []}], "x": 1}
    raw = json.dumps(body).encode()
    with serving({"routes": [route(emu)]}) as url:
        import httpx  # noqa: PLC0415

        answer = httpx.post(
            f"{url}/gemini/v1beta/models/{PRO_3}:generateContent", content=raw, headers={"x-goog-api-key": KEY}
        )
    assert answer.status_code == 400  # the emulator's own refusal, relayed
    assert emu.requests[-1].raw == raw


def test_vertex_a_switch_to_gemini_2_5_goes_out_as_the_adapter_sends_it_there() -> None:
    def switch(base: str, emu: CountingEmulator) -> Session:
        script(emu, call_step(), Step(text="It rains."))
        session = Session(base)
        options = types.HttpOptions(base_url=base, api_version="v1")
        session.client = genai.Client(
            vertexai=True,
            project="test-project",
            location="us-central1",
            credentials=Credentials("token"),
            http_options=options,
        )
        assert session.ask(PRO_3, "Weather in Paris?")
        session.results()
        session.ask(PRO_25)
        return session

    with CountingEmulator("vertex-gemini") as emu:
        switch(emu.base_url, emu)
        assert emu.refused == [VERTEX_INVALID]
        emu.refused.clear()
        with serving({"routes": [{"prefix": "/vertex", "provider": "vertex-gemini", "upstream": emu.base_url}]}) as url:
            session = switch(url + "/vertex", emu)
        assert emu.refused == []
        assert session.counts() == (0, 1)
        assert emu.requests[-1].path.startswith("/v1/projects/test-project/locations/us-central1/publishers/google/")
        # Gemini 2.5 takes a call without a signature: the adapter sends no dummy there.
        assert emu.requests[-1].body["contents"][1] == {
            "role": "model",
            "parts": [{"functionCall": {"name": "get_weather", "args": {"city": "Paris"}}}],
        }


def test_parallel_calls_with_ids_pair_with_their_responses(emu: CountingEmulator) -> None:
    emu.clear_script()
    emu.queue(
        Reply(
            thought="Both cities.",
            calls=[("get_weather", {"city": "Paris"}), ("get_weather", {"city": "Rome"})],
            ids=True,
        )
    )
    with serving({"routes": [route(emu)]}) as url:
        session = Session(url + "/gemini")
        assert session.ask(PRO_3, "Weather in Paris and Rome?")
        calls = [p.function_call for p in session.contents[-1].parts or [] if p.function_call]
        parts = [
            types.Part(function_response=types.FunctionResponse(id=c.id, name=c.name, response={"output": "rain"}))
            for c in calls
        ]
        session.contents.append(types.Content(role="user", parts=parts))
        assert session.ask(PRO_3)
    assert session.counts() == (1, 0)
    assert emu.refused == []


# -- reading bodies ------------------------------------------------------------------------------


def test_function_responses_answer_the_calls_the_adapter_pairs_them_with() -> None:
    model = {
        "role": "model",
        "parts": [
            {"functionCall": {"name": "f", "args": {"n": 1}}, "thoughtSignature": "c2ln"},
            {"functionCall": {"name": "f", "args": {"n": 2}}},
            {"functionCall": {"id": "given", "name": "g", "args": {}}},
        ],
    }
    answers = {
        "role": "user",
        "parts": [
            {"functionResponse": {"id": "given", "name": "g", "response": {"error": "no"}}},
            {"functionResponse": {"name": "f", "response": {"output": "one"}}},
            {"functionResponse": {"name": "f", "response": {"value": 2}}},
            {"inline_data": {"mime_type": "image/png", "data": "iVBO"}},
        ],
    }
    body = {
        "system_instruction": {"parts": [{"text": "Be brief."}]},
        "contents": [{"parts": [{"text": "Go"}]}, model, answers],
    }
    conversation, turns = import_contents(body, "gemini")
    assert turns == {2: 1}
    call = conversation[2]
    assert isinstance(call, AssistantMessage)
    ids = [c.id for c in call.tool_calls]
    assert ids[2] == "given"
    assert all(i.startswith("gemini_") for i in ids[:2])  # made as the adapter makes them for a reply
    results = conversation.messages[3:6]
    assert [(r.tool_call_id, r.text, r.is_error) for r in results if isinstance(r, ToolMessage)] == [
        ("given", "no", True),
        (ids[0], "one", False),
        (ids[1], '{"value":2}', False),
    ]
    user = conversation[6]
    assert isinstance(user, UserMessage)
    assert isinstance(user.parts[0], Native)
    assert isinstance(conversation[0], SystemMessage)


@pytest.mark.parametrize(
    ("body", "path"),
    [
        ({"contents": {"role": "user"}}, "contents"),
        ({"contents": [{"role": "tool", "parts": [{"text": "x"}]}]}, "contents[0].role"),
        ({"contents": [{"role": "user", "parts": []}]}, "contents[0].parts"),
        (
            {"contents": [{"role": "user", "parts": [{"functionResponse": {"name": "f", "response": {}}}]}]},
            "contents[0].parts[0].functionResponse",
        ),
        (
            {"contents": [{"role": "model", "parts": [{"functionCall": {"name": 3}}]}]},
            "contents[0].parts[0].functionCall.name",
        ),
        (
            {"contents": [], "tools": [{"functionDeclarations": [{"name": "f", "parameters": []}]}]},
            "tools[0].functionDeclarations[0]",
        ),
    ],
)
def test_bad_bodies_raise_validation_errors_naming_the_field(body: dict[str, Any], path: str) -> None:
    with pytest.raises(ValidationError) as caught:
        import_contents(body, "gemini")
    assert caught.value.path == path
