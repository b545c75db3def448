"""openai-responses with ``store=True``: a kept turn goes back with the ids of
the items that follow its reasoning items (``msg_…``, ``fc_…``), as OpenAI
requires of stored reasoning; stateless replay sends none of them.

The fixtures are OpenAI's own answers, recorded by pydantic-ai
(``recorded_*.json``: the first response of a cassette, the follow-up request
it sent and what OpenAI answered to it):

- ``recorded_phase_live.json``, from
  https://github.com/pydantic/pydantic-ai/blob/main/tests/models/cassettes/test_openai_responses/test_openai_responses_phase_live.yaml:
  a stored reasoning item, a ``commentary`` message and a function call; the
  follow-up (HTTP 200) sends the message and the call with their ids;
- ``recorded_modified_history.json``, from
  https://github.com/pydantic/pydantic-ai/blob/main/tests/models/cassettes/test_openai_responses/test_openai_responses_thinking_with_modified_history.yaml:
  a stored reasoning item and a message; the follow-up that sends the
  reasoning item and an edited message without its id is refused (HTTP 400,
  the error copied here).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import openai
import pytest

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Native,
    Origin,
    PreparedRequest,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.providers.openai_responses import FOLLOWING
from thinkseal.testing import respond
from thinkseal.testing.openai_responses import REASONING_WITHOUT_FOLLOWING, ResponsesEmulator, Turn, sdk_request_errors

from .support import responses_create as sdk_create

FIXTURES = Path(__file__).parent / "fixtures" / "openai-responses"
ID = "openai-responses"
MODEL = "gpt-5.5"
CAPITAL = Tool(
    "get_capital",
    "",
    {
        "type": "object",
        "properties": {"country": {"type": "string"}},
        "required": ["country"],
        "additionalProperties": False,
    },
)


def recorded(name: str) -> Any:
    return json.loads((FIXTURES / name).read_text(encoding="utf-8"))


def checked(req: PreparedRequest) -> dict[str, Any]:
    errors = sdk_request_errors(req.body)
    assert errors is None, errors
    assert json.loads(req.content) == req.body
    return dict(req.body)


def prepare(conv: Conversation, **options: Any) -> PreparedRequest:
    return thinkseal.provider(ID, "org-a").prepare(conv, model=MODEL, **options)


# -- the recorded exchanges ----------------------------------------------------------------------


def phase_live() -> tuple[Any, Conversation]:
    data = recorded("recorded_phase_live.json")
    conv = Conversation([UserMessage("What is the capital of PotatoLand?")], tools=[CAPITAL])
    reply = prepare(conv).receive(data["response"])
    call = data["response"]["output"][2]
    return data, conv.append(reply, ToolMessage("Potato City", call["call_id"]))


def test_the_recorded_stored_follow_up_is_what_thinkseal_sends() -> None:
    """OpenAI accepted this follow-up (HTTP 200): the reasoning item, then the
    commentary message and the function call with their ids. thinkseal sends
    the same items (the recording's system prompt is its ``instructions``,
    which thinkseal sends as a system message instead; this history has none)."""
    data, conv = phase_live()
    assert data["follow_up"]["status"] == 200
    body = checked(prepare(conv, store=True))
    assert body["input"] == data["follow_up"]["input"]
    reasoning, message, call = data["follow_up"]["input"][1:4]
    assert (reasoning["id"][:3], message["id"][:4], call["id"][:3]) == ("rs_", "msg_", "fc_")


def test_stateless_replay_of_the_same_turn_is_unchanged() -> None:
    """Under ``store: false`` the ids name nothing stored: the message and the
    call go back in their input forms, as before."""
    data, conv = phase_live()
    body = checked(prepare(conv))
    reasoning, message, call = data["response"]["output"]
    assert body["input"][1:4] == [
        reasoning,
        {"role": "assistant", "content": message["content"][0]["text"], "phase": "commentary"},
        {"type": "function_call", "call_id": call["call_id"], "name": "get_capital", "arguments": call["arguments"]},
    ]
    assert body["store"] is False


def test_the_ids_are_sealed_data_of_the_reasoning_item() -> None:
    """The ids live in the reasoning item's Opaque block (never sent), so they
    go out only while the turn is kept; the Native message keeps its own copy
    of its id, which never goes out."""
    data, conv = phase_live()
    turn = conv[1]
    assert isinstance(turn, AssistantMessage)
    opaque, message, call = turn.parts
    assert isinstance(opaque, ThinkingBlock.Opaque)
    assert isinstance(message, Native)
    assert isinstance(call, ToolCall)
    output = data["response"]["output"]
    assert json.loads(opaque.data)[FOLLOWING] == [output[1]["id"], output[2]["id"]]
    for reason, edited in (
        ("prefix-changed", conv.with_messages([UserMessage("And Atlantis?"), *conv.messages[1:]])),
        ("origin-mismatch", conv.rebind(Origin(ID, "gpt-5", "org-a"))),
    ):
        req = prepare(edited, store=True)
        assert req.report[0].reason == reason
        assert not any(item.get("id") for item in checked(req)["input"]), reason
        for secret in (output[1]["id"], output[2]["id"], FOLLOWING):
            assert secret.encode() not in req.content


def test_the_recorded_refusal_is_never_sent() -> None:
    """The recorded 400: a stored reasoning item, then the edited message
    without its id. Unchanged, thinkseal sends the message with its id; edited,
    the turn is unsealed and goes without the reasoning item."""
    data = recorded("recorded_modified_history.json")
    assert data["follow_up"]["status"] == 400
    reasoning, message = data["response"]["output"]
    assert data["follow_up"]["error"]["error"]["message"] == REASONING_WITHOUT_FOLLOWING.format(id=reasoning["id"])
    conv = Conversation([UserMessage("What is the meaning of life?")])
    reply = prepare(conv).receive(data["response"])
    kept = checked(prepare(conv.append(reply, UserMessage("Anything to add?")), store=True))
    assert kept["input"][1:3] == [
        reasoning,
        {
            "type": "message",
            "role": "assistant",
            "id": message["id"],
            "status": "completed",
            "content": [{"type": "output_text", "text": message["content"][0]["text"], "annotations": []}],
        },
    ]
    edited = reply.with_content("The meaning of life is 42")
    body = checked(prepare(conv.append(edited, UserMessage("Anything to add?")), store=True))
    assert body["input"] == [
        {"role": "user", "content": "What is the meaning of life?"},
        {"role": "assistant", "content": "The meaning of life is 42"},
        {"role": "user", "content": "Anything to add?"},
    ]
    assert body["input"] != data["follow_up"]["input"]


# -- through the emulator, which refuses what OpenAI refused -------------------------------------------


@pytest.fixture
def emu() -> Iterator[ResponsesEmulator]:
    with ResponsesEmulator() as server:
        yield server


def test_a_stored_tool_loop_goes_through(emu: ResponsesEmulator) -> None:
    """Every request stored, the whole history each time: each kept turn
    carries the ids OpenAI needs after its reasoning items."""
    emu.reply(Turn(reasoning=["**Look it up**"], content="Checking.", phase="commentary", tool_calls=[
        ("call_1", "get_capital", {"country": "PotatoLand"}),
    ]))  # fmt: skip
    emu.reply(Turn(reasoning=["**Answer**"], content="Potato City."))
    client = emu.client("org-a")
    conv = Conversation([UserMessage("What is the capital of PotatoLand?")], tools=[CAPITAL])
    reply = prepare(conv, store=True).parse(sdk_create(client, checked(prepare(conv, store=True))).model_dump())
    conv = conv.append(reply.message, ToolMessage("Potato City", "call_1"))
    req = prepare(conv, store=True)
    assert [e.reason for e in req.report] == ["kept"]
    kinds = [(item.get("type") or "message", bool(item.get("id"))) for item in checked(req)["input"]]
    assert kinds == [("message", False), ("reasoning", True), ("message", True), ("function_call", True),
                     ("function_call_output", False)]  # fmt: skip
    reply = req.parse(sdk_create(client, req.body).model_dump())
    conv = conv.append(reply.message, UserMessage("Thanks!"))
    final = prepare(conv, store=True)
    assert [e.reason for e in final.report] == ["kept", "kept"]
    sdk_create(client, checked(final))


def test_the_emulator_answers_a_stored_reasoning_item_without_its_follower_as_openai_did(
    emu: ResponsesEmulator,
) -> None:
    emu.reply(Turn(reasoning=["**Think**"], content="Forty-two."))
    client = emu.client("org-a")
    conv = Conversation([UserMessage("What is the meaning of life?")])
    reply = prepare(conv, store=True).receive(sdk_create(client, checked(prepare(conv, store=True))).model_dump())
    body = checked(prepare(conv.append(reply, UserMessage("Anything to add?")), store=True))
    # The message in the input form, without its id: what the recorded refused request sent.
    text = reply.content
    plain = [
        {"role": "assistant", "content": text} if item.get("type") == "message" else item for item in body["input"]
    ]
    without = {**body, "input": plain}
    rid = body["input"][1]["id"]
    with pytest.raises(openai.BadRequestError) as bad:
        sdk_create(client, without)
    recorded_error = recorded("recorded_modified_history.json")["follow_up"]["error"]["error"]
    assert bad.value.body == {**recorded_error, "message": REASONING_WITHOUT_FOLLOWING.format(id=rid)}
    sdk_create(client, body)  # with the id, it goes through
    # Stateless, the same items without ids are what OpenAI takes.
    stateless = checked(prepare(conv.append(reply, UserMessage("Anything to add?"))))
    assert not [item for item in stateless["input"] if item.get("type") == "message"]


# -- older blocks, hand-made blocks -----------------------------------------------------------------------


def kept(*parts: Any) -> Conversation:
    conv = Conversation([UserMessage("Hi")])
    return respond(conv, Origin(ID, MODEL, "org-a"), AssistantMessage.from_parts(list(parts))).append(
        UserMessage("Next?")
    )


REASONING = {"id": "rs_1", "summary": [], "type": "reasoning", "encrypted_content": "ENC"}


def opaque(item: dict[str, Any]) -> ThinkingBlock.Opaque:
    return ThinkingBlock.Opaque(ID, json.dumps(item, separators=(",", ":"), sort_keys=True))


def test_a_block_stored_before_the_ids_replays_as_before() -> None:
    conv = kept(opaque(REASONING), "Answer.", ToolCall("call_1", "f", {}))
    stored = checked(prepare(conv.with_messages([*conv.messages[:2], ToolMessage("ok", "call_1")]), store=True))
    assert stored["input"][1:4] == [
        REASONING,
        {"role": "assistant", "content": "Answer."},
        {"type": "function_call", "call_id": "call_1", "name": "f", "arguments": "{}"},
    ]


def test_two_text_parts_of_one_message_go_back_as_that_message() -> None:
    item = {**REASONING, FOLLOWING: ["msg_1", "msg_1"]}
    body = checked(prepare(kept(opaque(item), "One. ", "Two."), store=True))
    assert body["input"][1:3] == [
        REASONING,
        {
            "type": "message",
            "role": "assistant",
            "id": "msg_1",
            "status": "completed",
            "content": [
                {"type": "output_text", "text": "One. ", "annotations": []},
                {"type": "output_text", "text": "Two.", "annotations": []},
            ],
        },
    ]


@pytest.mark.parametrize("following", ["msg_1", [1], {"a": "b"}, ["msg_1", ""]])
def test_a_hand_made_block_with_bad_ids_is_refused(following: Any) -> None:
    conv = kept(opaque({**REASONING, FOLLOWING: following}), "Answer.")
    with pytest.raises(ValidationError) as err:
        prepare(conv, store=True)
    assert err.value.path == "AssistantMessage.parts[0].data"
    assert FOLLOWING in str(err.value)


def test_an_exported_history_holds_no_recorded_ids() -> None:
    """``thinkseal.interop.openai.export_responses`` writes the reasoning item as
    OpenAI sent it: the ids thinkseal keeps beside it are its own."""
    from thinkseal.interop.openai import export_responses  # noqa: PLC0415 (interop is imported on use)

    data, conv = phase_live()
    exported = export_responses(conv)["input"]
    assert exported[1] == data["response"]["output"][0]
    assert FOLLOWING not in json.dumps(exported)


def test_a_stored_reply_exports_to_pydantic_ai() -> None:
    """pydantic-ai's form of a reasoning item holds its id, summary and
    encrypted content only; the recorded ids do not stop the export."""
    from thinkseal.interop.pydantic_ai import export_messages  # noqa: PLC0415 (interop is imported on use)

    data = recorded("recorded_modified_history.json")
    conv = Conversation([UserMessage("What is the meaning of life?")])
    conv = conv.append(prepare(conv).receive(data["response"]))
    assert FOLLOWING in conv[1].thinking[-1].data  # type: ignore[union-attr]
    response = export_messages(conv)[1]
    reasoning = data["response"]["output"][0]
    assert response.parts[0].id == reasoning["id"]
    assert response.parts[0].signature == reasoning["encrypted_content"]
