"""Running the ``thinkseal`` command in tests: in-process through
``thinkseal.cli.main`` (output captured), or as the installed console script."""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from thinkseal import (
    AssistantMessage,
    Conversation,
    Origin,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from thinkseal.cli import main
from thinkseal.testing import respond

CLAUDE = Origin("anthropic", "claude-sonnet-4-5")
THINKING = 'thinking={"type": "enabled", "budget_tokens": 1024}'


@dataclass
class Ran:
    code: int
    out: str
    err: str


@pytest.fixture
def cli(capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """``cli(*args)``: ``thinkseal.cli.main(args)`` with stdout and stderr captured."""

    def run(*args: str) -> Ran:
        code = main(list(args))
        captured = capsys.readouterr()
        return Ran(code, captured.out, captured.err)

    return run


def script_path() -> str:
    """The installed ``thinkseal`` console script (next to this Python, else on PATH)."""
    beside = Path(sys.executable).with_name("thinkseal")
    found = str(beside) if beside.exists() else shutil.which("thinkseal")
    assert found, "the thinkseal console script is not installed (pip install -e .)"
    return found


def script(*args: str, timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """The installed console script run with ``args`` (stdout is a pipe: no colour)."""
    return subprocess.run([script_path(), *args], capture_output=True, text=True, check=False, timeout=timeout)


def tool_loop() -> Conversation:
    """A Claude tool loop with signed thinking, waiting for the model after a tool result."""
    start = Conversation(
        [SystemMessage("Be brief."), UserMessage("Weather in Paris?")],
        tools=[Tool("get_weather", "The weather", {"type": "object", "properties": {"city": {"type": "string"}}})],
    )
    call = AssistantMessage(
        thinking=[ThinkingBlock.Text("Look it up.", signature="SignatureOfTheToolTurn==")],
        tool_calls=[ToolCall("toolu_1", "get_weather", {"city": "Paris"})],
    )
    return respond(start, CLAUDE, call).append(ToolMessage("rain", "toolu_1"))


@pytest.fixture
def loop_file(tmp_path: Path) -> Path:
    """The tool loop as stored: its next request is accepted."""
    path = tmp_path / "loop.json"
    path.write_text(tool_loop().to_json(), encoding="utf-8")
    return path


@pytest.fixture
def rejected_file(tmp_path: Path) -> Path:
    """The tool loop with an earlier message edited: the signed tool-use turn is
    unsealed (prefix-changed), and with thinking on Claude rejects the next request."""
    conversation = tool_loop()
    edited = conversation.with_messages([conversation[0], UserMessage("Weather in Oslo?"), *conversation[2:]])
    path = tmp_path / "rejected.json"
    path.write_text(edited.to_json(), encoding="utf-8")
    return path


@pytest.fixture
def latin1_file(tmp_path: Path) -> Path:
    path = tmp_path / "latin1.json"
    path.write_bytes('{"format": "thinkseal.conversation", "x": "caf\xe9"}'.encode("latin-1"))
    return path


@pytest.fixture
def not_json_file(tmp_path: Path) -> Path:
    path = tmp_path / "notes.json"
    path.write_text("format: thinkseal\n", encoding="utf-8")
    return path
