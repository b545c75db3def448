"""``thinkseal import --ledger`` and ``thinkseal report --ledger``: a history
stored by another library, whose replies a ledger recorded, is recognised and
decided as bound; without the ledger it is unbound."""

from __future__ import annotations

import json
from pathlib import Path

import thinkseal
from thinkseal import Conversation, Origin
from thinkseal.interop import anthropic as ts_anthropic
from thinkseal.ledger import Ledger
from thinkseal.testing import respond

from .test_import import ANTHROPIC_REQUEST

CLAUDE = Origin("anthropic", "claude-sonnet-4-5")


def recorded(tmp_path: Path) -> str:
    """A SQLite ledger that recorded the reply of ANTHROPIC_REQUEST's history, as a client would have."""
    imported = ts_anthropic.import_messages(
        ANTHROPIC_REQUEST["messages"][:1], system=ANTHROPIC_REQUEST["system"], tools=ANTHROPIC_REQUEST["tools"]
    )
    turn = ts_anthropic.import_messages(ANTHROPIC_REQUEST["messages"][:2])[1]
    conversation = respond(imported, CLAUDE, turn)  # type: ignore[arg-type]
    path = tmp_path / "ledger.db"
    with Ledger.sqlite(str(path)) as ledger:
        assert ledger.record(conversation[-1]) == 1  # type: ignore[arg-type]
    return f"sqlite://{path}"


def test_import_and_report_attach_to_a_ledger(cli, tmp_path: Path) -> None:
    url = recorded(tmp_path)
    source = tmp_path / "claude.json"
    source.write_text(json.dumps(ANTHROPIC_REQUEST), encoding="utf-8")
    plain, attached = tmp_path / "plain.json", tmp_path / "attached.json"
    assert cli("import", "--from", "anthropic", str(source), "-o", str(plain)).code == 0
    ran = cli("import", "--from", "anthropic", str(source), "-o", str(attached), "--ledger", url)
    assert ran.code == 0, ran.err
    assert "1 bound; ledger: 1 recognised, 0 changed, 0 unknown" in ran.err
    conversation = Conversation.from_json(attached.read_text(encoding="utf-8"))
    assert conversation[2].thinking_binding is not None  # type: ignore[union-attr]
    target = "anthropic:claude-sonnet-4-5"
    report = json.loads(cli("report", str(attached), "--target", target, "--json").out)
    assert [(t["index"], t["reason"]) for t in report["turns"]] == [(2, "kept")]
    # The plain import, attached only when reported:
    report = json.loads(cli("report", str(plain), "--target", target, "--json", "--ledger", url).out)
    assert [(t["index"], t["reason"]) for t in report["turns"]] == [(2, "kept")]
    assert report["ledger"] == "1 recognised, 0 changed, 0 unknown"
    report = json.loads(cli("report", str(plain), "--target", target, "--json").out)
    assert [(t["index"], t["reason"]) for t in report["turns"]] == [(2, "unbound")]


def test_a_ledger_of_another_account_recognises_nothing(cli, tmp_path: Path) -> None:
    url = recorded(tmp_path)
    source = tmp_path / "claude.json"
    source.write_text(json.dumps(ANTHROPIC_REQUEST), encoding="utf-8")
    ran = cli("import", "--from", "anthropic", str(source), "--ledger", url, "--account", "team-b")
    assert ran.code == 0, ran.err
    assert Conversation.from_json(ran.out)[2].thinking_binding is None  # type: ignore[union-attr]


def test_bad_ledger_arguments(cli, tmp_path: Path) -> None:
    source = tmp_path / "claude.json"
    source.write_text(json.dumps(ANTHROPIC_REQUEST), encoding="utf-8")
    ran = cli("import", "--from", "anthropic", str(source), "--ledger", "ftp://nowhere")
    assert ran.code == 2
    assert "not a ledger backend" in ran.err
    ran = cli("import", "--from", "anthropic", str(source), "--account", "a")
    assert ran.code == 2
    assert "--account goes with --ledger" in ran.err
    assert isinstance(thinkseal.ledger.open_ledger("memory"), Ledger)
