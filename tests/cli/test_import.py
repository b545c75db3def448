"""``thinkseal import``: other libraries' stored histories as thinkseal
conversations, through ``thinkseal.interop``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from thinkseal import AssistantMessage, Conversation, SystemMessage, ThinkingBlock, ToolMessage, UserMessage

ANTHROPIC_REQUEST = {
    "model": "claude-sonnet-4-5",
    "max_tokens": 1024,
    "system": "Be brief.",
    "tools": [{"name": "get_weather", "description": "The weather", "input_schema": {"type": "object"}}],
    "messages": [
        {"role": "user", "content": "Weather in Paris?"},
        {
            "role": "assistant",
            "content": [
                {"type": "thinking", "thinking": "Look it up.", "signature": "SignedByClaude=="},
                {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Paris"}},
            ],
        },
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": "rain"}]},
    ],
}


def _write(tmp_path: Path, name: str, value: Any) -> Path:
    path = tmp_path / name
    path.write_text(json.dumps(value), encoding="utf-8")
    return path


def test_anthropic_request_to_a_file_then_report(cli, tmp_path: Path) -> None:
    source = _write(tmp_path, "claude.json", ANTHROPIC_REQUEST)
    out = tmp_path / "conversation.json"
    ran = cli("import", "--from", "anthropic", str(source), "-o", str(out))
    assert ran.code == 0, ran.err
    assert ran.out == ""
    assert ran.err.startswith(f"thinkseal: wrote {out}: 4 messages, 1 assistant turn(s) (1 with sealed thinking")
    conversation = Conversation.from_json(out.read_text(encoding="utf-8"))
    assert [type(m) for m in conversation] == [SystemMessage, UserMessage, AssistantMessage, ToolMessage]
    assert [t.name for t in conversation.tools] == ["get_weather"]
    turn = conversation[2]
    assert isinstance(turn, AssistantMessage)
    assert turn.thinking == (ThinkingBlock.Text("Look it up.", signature="SignedByClaude=="),)
    assert turn.thinking_binding is None  # imported thinking is unbound
    report = json.loads(cli("report", str(out), "--target", "anthropic:claude-sonnet-4-5", "--json").out)
    assert [(t["index"], t["kept"], t["reason"]) for t in report["turns"]] == [(2, False, "unbound")]


def test_a_bare_list_to_stdout(cli, tmp_path: Path) -> None:
    source = _write(tmp_path, "messages.json", ANTHROPIC_REQUEST["messages"])
    ran = cli("import", "--from", "anthropic", str(source))
    assert ran.code == 0, ran.err
    conversation = Conversation.from_json(ran.out)
    assert len(conversation) == 3  # no system prompt in a bare list
    assert conversation.tools == ()


def test_openai_chat(cli, tmp_path: Path) -> None:
    chat = {
        "messages": [
            {"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"},
            {
                "role": "assistant",
                "content": None,
                "tool_calls": [
                    {
                        "id": "call_1",
                        "type": "function",
                        "function": {"name": "get_weather", "arguments": '{"city": "Paris"}'},
                    }
                ],
            },
            {"role": "tool", "tool_call_id": "call_1", "content": "rain"},
        ],
        "tools": [{"type": "function", "function": {"name": "get_weather", "parameters": {"type": "object"}}}],
    }
    ran = cli("import", "--from", "openai", str(_write(tmp_path, "chat.json", chat)))
    assert ran.code == 0, ran.err
    conversation = Conversation.from_json(ran.out)
    assert [type(m) for m in conversation] == [SystemMessage, UserMessage, AssistantMessage, ToolMessage]
    turn = conversation[2]
    assert isinstance(turn, AssistantMessage)
    assert [(c.id, c.name, dict(c.arguments)) for c in turn.tool_calls] == [
        ("call_1", "get_weather", {"city": "Paris"})
    ]
    assert [t.name for t in conversation.tools] == ["get_weather"]


def test_openai_responses(cli, tmp_path: Path) -> None:
    request = {
        "model": "gpt-5",
        "instructions": "Be brief.",
        "input": [
            {"role": "user", "content": "Weather in Paris?"},
            {"type": "function_call", "call_id": "call_1", "name": "get_weather", "arguments": '{"city": "Paris"}'},
            {"type": "function_call_output", "call_id": "call_1", "output": "rain"},
        ],
    }
    ran = cli("import", "--from", "openai-responses", str(_write(tmp_path, "responses.json", request)))
    assert ran.code == 0, ran.err
    conversation = Conversation.from_json(ran.out)
    assert [type(m) for m in conversation] == [SystemMessage, UserMessage, AssistantMessage, ToolMessage]
    prompt = cli("import", "--from", "openai-responses", str(_write(tmp_path, "prompt.json", {"input": "Hi"})))
    assert prompt.code == 0, prompt.err
    assert Conversation.from_json(prompt.out).messages == (UserMessage("Hi"),)


def test_pydantic_ai(cli, tmp_path: Path) -> None:
    pm = pytest.importorskip("pydantic_ai.messages")
    messages = [
        pm.ModelRequest(parts=[pm.SystemPromptPart("Be brief."), pm.UserPromptPart("Weather in Paris?")]),
        pm.ModelResponse(
            parts=[
                pm.ThinkingPart("Look it up.", signature="SignedByClaude==", provider_name="anthropic"),
                pm.ToolCallPart("get_weather", {"city": "Paris"}, tool_call_id="toolu_1"),
            ]
        ),
        pm.ModelRequest(parts=[pm.ToolReturnPart("get_weather", "rain", tool_call_id="toolu_1")]),
    ]
    source = tmp_path / "pydantic.json"
    source.write_bytes(pm.ModelMessagesTypeAdapter.dump_json(messages))
    ran = cli("import", "--from", "pydantic-ai", str(source))
    assert ran.code == 0, ran.err
    conversation = Conversation.from_json(ran.out)
    assert [type(m) for m in conversation] == [SystemMessage, UserMessage, AssistantMessage, ToolMessage]
    turn = conversation[2]
    assert isinstance(turn, AssistantMessage)
    assert turn.thinking == (ThinkingBlock.Text("Look it up.", signature="SignedByClaude=="),)
    bad = cli("import", "--from", "pydantic-ai", str(_write(tmp_path, "bad.json", [{"kind": "nonsense"}])))
    assert bad.code == 2
    assert bad.err.startswith(f"thinkseal: {tmp_path / 'bad.json'}: not pydantic-ai messages (")
    assert bad.err.count("\n") == 1


def test_bad_input_exits_2(cli, tmp_path: Path, latin1_file: Path, not_json_file: Path) -> None:
    shape = cli("import", "--from", "openai-responses", str(_write(tmp_path, "x.json", {"messages": []})))
    assert (shape.code, shape.err) == (
        2,
        f'thinkseal: {tmp_path / "x.json"}: expected a JSON list of messages or an object with "input"\n',
    )
    wrong = _write(tmp_path, "wrong.json", [{"role": "user", "content": [{"type": "image"}]}])
    converted = cli("import", "--from", "anthropic", str(wrong))
    assert converted.code == 2
    assert converted.err.startswith(f"thinkseal: {wrong}: messages[0].content[0]")
    assert converted.err.count("\n") == 1
    for path in (latin1_file, not_json_file):
        ran = cli("import", "--from", "openai", str(path))
        assert ran.code == 2
        assert ran.err.startswith(f"thinkseal: {path}: not ")
    assert cli("import", "--from", "langchain", str(wrong)).code == 2
    assert cli("import", str(wrong)).code == 2  # --from is required
