"""The Python examples of README.md, docs/api.md and docs/ledger.md run as written (so they stay true)."""

from __future__ import annotations

import re
from pathlib import Path

import thinkseal


def test_readme_tour_runs(capsys) -> None:
    text = (Path(__file__).parents[1] / "README.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 2
    namespace: dict[str, object] = {}
    exec(compile("\n".join(blocks), "README.md", "exec"), namespace)
    out = capsys.readouterr().out
    assert "reason='kept'" in out
    assert "origin-mismatch" in out
    assert "prefix-changed" in out
    assert isinstance(namespace["reply"], thinkseal.AssistantMessage)
    assert namespace["reply"].thinking_binding is not None


def test_api_page_examples_run(capsys) -> None:
    """docs/api.md's examples, run in order as one script: their own asserts
    (27 of them) check each documented behaviour, so the page stays true."""
    text = (Path(__file__).parents[1] / "docs" / "api.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert len(blocks) >= 5
    namespace: dict[str, object] = {}
    exec(compile("\n".join(blocks), "docs/api.md", "exec"), namespace)
    assert isinstance(namespace["history"], thinkseal.Conversation)


def test_ledger_page_example_runs() -> None:
    """docs/ledger.md's example: its asserts check that an imported history is
    recognised and replayed sealed."""
    text = (Path(__file__).parents[1] / "docs" / "ledger.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert blocks
    namespace: dict[str, object] = {}
    exec(compile("\n".join(blocks), "docs/ledger.md", "exec"), namespace)
    assert namespace["attached"].recognised == 1  # type: ignore[attr-defined]
