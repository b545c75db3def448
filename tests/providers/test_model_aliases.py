"""Model aliases: ``thinkseal.provider(id, aliases={model id: name it is bound under})``
declares two model ids one model for binding purposes. Off by default: without
it, a turn bound under one id is ``origin-mismatch`` for the other."""

from __future__ import annotations

from typing import Any

import pytest

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Origin,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import respond

from .sealed import OPTIONS

ALIAS = "claude-sonnet-4-5"
DATED = "claude-sonnet-4-5-20250929"
ALIASES = {DATED: ALIAS}
TOOL = Tool("lookup", "Look something up", {"type": "object", "properties": {"q": {"type": "string"}}})


def history(provider_id: str, model: str, account: str | None = None) -> Conversation:
    """A signed tool-call turn bound under ``model``, its result, and a question
    (the replay decision is the same for every provider, whether or not it signs)."""
    turn = AssistantMessage(None, [ToolCall("call00001x", "lookup", {"q": "x"})], [ThinkingBlock.Text("t", "SIG~")])
    conv = respond(Conversation([UserMessage("start")], [TOOL]), Origin(provider_id, model, account), turn)
    return conv.append(ToolMessage("found", "call00001x"), UserMessage("next"))


@pytest.mark.parametrize("provider_id", PROVIDER_IDS)
def test_an_alias_keeps_a_turn_bound_under_the_other_id(provider_id: str) -> None:
    options = OPTIONS[provider_id]
    conv = history(provider_id, ALIAS)
    # Off by default: the dated id is another model.
    plain = thinkseal.provider(provider_id).prepare(conv, model=DATED, **options)
    assert plain.origin == Origin(provider_id, DATED)
    assert [e.reason for e in plain.report] == ["origin-mismatch"]
    # With the alias, the dated id is bound under the alias name: kept, and the body still names the dated id.
    aliased = thinkseal.provider(provider_id, aliases=ALIASES).prepare(conv, model=DATED, **options)
    assert aliased.origin == Origin(provider_id, ALIAS)
    assert [e.reason for e in aliased.report] == ["kept"]
    assert DATED in aliased.path + aliased.content.decode()
    assert f'"{ALIAS}"' not in aliased.content.decode()
    # An id the mapping does not name is bound as it is.
    other = thinkseal.provider(provider_id, aliases=ALIASES).prepare(conv, model="claude-opus-4-1", **options)
    assert other.origin == Origin(provider_id, "claude-opus-4-1")
    assert [e.reason for e in other.report] == ["origin-mismatch"]


def test_a_reply_to_the_dated_id_is_kept_for_the_alias_and_back() -> None:
    aliased = thinkseal.provider("anthropic", aliases=ALIASES)
    conv = Conversation([UserMessage("Hi")])
    req = aliased.prepare(conv, model=DATED, max_tokens=1024)
    assert req.body["model"] == DATED
    reply = req.receive(
        {
            "id": "msg_1",
            "type": "message",
            "role": "assistant",
            "model": DATED,
            "content": [
                {"type": "thinking", "thinking": "Greet.", "signature": "SIG-1"},
                {"type": "text", "text": "Hello."},
            ],
            "stop_reason": "end_turn",
            "usage": {"input_tokens": 1, "output_tokens": 1},
        }
    )
    assert reply.thinking_binding is not None
    assert reply.thinking_binding.origin == Origin("anthropic", ALIAS)
    conv = conv.append(reply, UserMessage("And?"))
    # The alias name itself, with or without the mapping, and the dated id with it: kept.
    for adapter, model in ((thinkseal.provider("anthropic"), ALIAS), (aliased, ALIAS), (aliased, DATED)):
        req = adapter.prepare(conv, model=model, max_tokens=1024)
        assert [e.reason for e in req.report] == ["kept"]
        assert "SIG-1" in req.content.decode()
    # The dated id without the mapping: another model.
    req = thinkseal.provider("anthropic").prepare(conv, model=DATED, max_tokens=1024)
    assert [e.reason for e in req.report] == ["origin-mismatch"]
    assert "SIG-1" not in req.content.decode()


def test_aliases_do_not_cross_accounts_or_providers() -> None:
    conv = history("anthropic", ALIAS, account="team-a")
    req = thinkseal.provider("anthropic", "team-b", aliases=ALIASES).prepare(conv, model=DATED, max_tokens=1024)
    assert req.origin == Origin("anthropic", ALIAS, "team-b")
    assert [e.reason for e in req.report] == ["origin-mismatch"]
    req = thinkseal.provider("anthropic", "team-a", aliases=ALIASES).prepare(conv, model=DATED, max_tokens=1024)
    assert [e.reason for e in req.report] == ["kept"]
    options = OPTIONS["vertex-anthropic"]
    req = thinkseal.provider("vertex-anthropic", "team-a", aliases=ALIASES).prepare(conv, model=DATED, **options)
    assert [e.reason for e in req.report] == ["origin-mismatch"]


def test_the_mapping_is_a_read_only_copy() -> None:
    mine = dict(ALIASES)
    adapter = thinkseal.provider("anthropic", aliases=mine)
    mine[DATED] = "something-else"
    assert dict(adapter.aliases) == ALIASES
    with pytest.raises(TypeError):
        adapter.aliases[DATED] = "x"  # type: ignore[index]
    assert thinkseal.provider("anthropic").aliases == {}
    assert repr(adapter) == f"thinkseal.provider('anthropic', aliases={ALIASES!r})"
    assert thinkseal.provider("anthropic", aliases={ALIAS: ALIAS}).aliases == {ALIAS: ALIAS}  # harmless


@pytest.mark.parametrize(
    ("aliases", "path", "words"),
    [
        ([(DATED, ALIAS)], "aliases", "expected a mapping"),
        ("claude", "aliases", "expected a mapping"),
        ({1: ALIAS}, "aliases", "expected str"),
        ({" ": ALIAS}, "aliases", "must not be blank"),
        ({DATED: None}, f"aliases[{DATED!r}]", "expected str"),
        ({DATED: ""}, f"aliases[{DATED!r}]", "must not be blank"),
        ({DATED: "claude\ud800"}, f"aliases[{DATED!r}]", "lone surrogate"),
        ({DATED: ALIAS, ALIAS: "claude-sonnet"}, f"aliases[{DATED!r}]", "no chains"),
    ],
)
def test_bad_aliases_are_refused(aliases: Any, path: str, words: str) -> None:
    with pytest.raises(ValidationError) as err:
        thinkseal.provider("anthropic", aliases=aliases)
    assert err.value.path == path
    assert words in str(err.value)
