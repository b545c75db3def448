"""Replay decisions: which sealed turns go out sealed, and why (docs/api.md "Providers,
requests and replay", "Origin and binding"). Histories are bound the way a
provider's ``receive`` binds them, through ``thinkseal.testing.respond``."""

from __future__ import annotations

import json
import threading
import typing
from collections.abc import Sequence

import pytest

from thinkseal import (
    FINGERPRINT_VERSION,
    AssistantMessage,
    Binding,
    Conversation,
    Origin,
    Reason,
    ReasonName,
    ReplayEntry,
    ReplayReport,
    SystemMessage,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.testing import bind_reply, respond

Text = ThinkingBlock.Text
Redacted = ThinkingBlock.Redacted
Opaque = ThinkingBlock.Opaque

ORIGIN = Origin("anthropic", "claude-test")
WEATHER = Tool("get_weather", "Weather", {"type": "object", "properties": {"city": {"type": "string"}}})
CLOCK = Tool("get_time", "Time", {"type": "object", "properties": {}})
# The documented reason strings, spelled out once: the contract users compare with.
REASONS = {
    "kept",
    "no-sealed-thinking",
    "unbound",
    "origin-mismatch",
    "turn-changed",
    "prefix-changed",
    "version-mismatch",
    "unpaired-tool-call",
}


def test_reason_enum_is_the_documented_strings():
    assert {str(r) for r in Reason} == REASONS
    assert set(typing.get_args(ReasonName)) == REASONS
    entry = ReplayEntry(0, "kept")
    assert entry.reason == "kept"
    assert entry.reason is Reason.KEPT
    assert repr(entry) == "ReplayEntry(index=0, reason='kept')"
    with pytest.raises(ValidationError, match=r"ReplayEntry\.reason"):
        ReplayEntry(0, "kept-ish")  # type: ignore[arg-type]


def sealed(content: str | None, calls: Sequence[ToolCall] = ()) -> AssistantMessage:
    return AssistantMessage(
        content,
        calls,
        [Text(f"thinking about {content}", f"sig-{content}"), Redacted(f"red-{content}"), Text("", "sig-empty")],
    )


def grow(turns: int, origin: Origin = ORIGIN, **context) -> Conversation:
    """system, user, then ``turns`` x (sealed reply bound to ``origin``, user)."""
    c = Conversation([SystemMessage("You are terse."), UserMessage("q0")], **context)
    for i in range(turns):
        c = respond(c, origin, sealed(f"a{i}")).append(UserMessage(f"q{i + 1}"))
    return c


def reasons(c: Conversation, origin: Origin = ORIGIN) -> list[str]:
    return [e.reason for e in c.replay_report(origin)]


def turn_indices(c: Conversation) -> list[int]:
    return [i for i, m in enumerate(c) if isinstance(m, AssistantMessage)]


def check_consistent(c: Conversation, origin: Origin = ORIGIN) -> None:
    """Report, per-index sent form and the one-pass sent list agree, and the
    report matches what goes out."""
    replay = c.replay(origin)
    report = replay.report
    assert [e.index for e in report] == turn_indices(c)
    sent = replay.sent_messages()
    assert len(sent) == len(c)
    for i in range(len(c)):
        assert replay.sent(i) == sent[i]
    for entry in report:
        assert entry.reason in REASONS
        assert entry.kept == (entry.reason == Reason.KEPT)
        assert replay.kept(entry.index) == entry.kept
        out = sent[entry.index]
        if entry.kept:
            assert out is c[entry.index]
            assert out.has_sealed_thinking
        else:
            assert not out.has_sealed_thinking
            assert out.thinking_binding is None


# -- appending keeps turns sealed ------------------------------------------------------


def test_appending_keeps_every_turn_sealed():
    c = Conversation([SystemMessage("sys"), UserMessage("q0")], [WEATHER], {"type": "json_object"})
    for i in range(6):
        c = respond(c, ORIGIN, sealed(f"a{i}"))
        assert reasons(c) == [Reason.KEPT] * (i + 1)
        c = c.append(UserMessage(f"q{i + 1}"))
        assert reasons(c) == [Reason.KEPT] * (i + 1)
    check_consistent(c)


def test_kept_turn_goes_out_as_the_very_same_object():
    c = grow(3)
    replay = c.replay(ORIGIN)
    for i in turn_indices(c):
        assert replay.sent(i) is c[i]
        assert replay.sent(i).thinking_binding is not None


def test_replaying_twice_gives_the_same_answer():
    c = grow(4)
    first = c.replay(ORIGIN)
    second = c.replay(ORIGIN)
    assert list(first.report) == list(second.report)
    assert first.chain_end == second.chain_end
    assert first.sent_messages() == second.sent_messages()


def test_messages_after_a_turn_do_not_matter_to_it():
    c = respond(Conversation([UserMessage("q")]), ORIGIN, sealed("a"))
    longer = c.append(UserMessage("x"), AssistantMessage("plain"), UserMessage("y"))
    assert reasons(longer) == [Reason.KEPT, Reason.NO_SEALED_THINKING]
    inserted = longer.with_messages([*longer.messages[:2], UserMessage("inserted"), *longer.messages[2:]])
    assert reasons(inserted) == [Reason.KEPT, Reason.NO_SEALED_THINKING]


# -- what unseals, and why ---------------------------------------------------------------


def test_no_sealed_thinking():
    c = Conversation(
        [UserMessage("q"), AssistantMessage("plain"), UserMessage("q2"), AssistantMessage("t", (), [Text("unsigned")])]
    )
    assert reasons(c) == [Reason.NO_SEALED_THINKING, Reason.NO_SEALED_THINKING]
    bound = respond(Conversation([UserMessage("q")]), ORIGIN, AssistantMessage("a", (), [Text("unsigned")]))
    assert bound[-1].thinking_binding is None  # nothing sealed: nothing to bind
    assert reasons(bound) == [Reason.NO_SEALED_THINKING]


@pytest.mark.parametrize("index", [1, 3, 5])
def test_pruning_an_earlier_message(index):
    c = grow(4)  # turns at 2, 4, 6, 8
    ms = list(c)
    del ms[index]
    pruned = c.with_messages(ms)
    turns_before = sum(1 for t in turn_indices(c) if t < index)
    assert reasons(pruned) == [Reason.KEPT] * turns_before + [Reason.PREFIX_CHANGED] * (4 - turns_before)
    check_consistent(pruned)


@pytest.mark.parametrize("index", [0, 1, 3, 7])
def test_editing_an_earlier_message(index):
    c = grow(4)
    ms = list(c)
    old = ms[index]
    ms[index] = type(old)(old.content + " (edited)")  # type: ignore[call-arg,attr-defined]
    edited = c.with_messages(ms)
    if isinstance(old, SystemMessage):
        expected = [Reason.PREFIX_CHANGED] * 4
    else:
        turns_before = sum(1 for t in turn_indices(c) if t < index)
        expected = [Reason.KEPT] * turns_before + [Reason.PREFIX_CHANGED] * (4 - turns_before)
    assert reasons(edited) == expected
    check_consistent(edited)


@pytest.mark.parametrize("index", [1, 2, 3, 5, 8])
def test_inserting_an_earlier_message(index):
    c = grow(4)
    ms = list(c)
    ms.insert(index, UserMessage("inserted"))
    inserted = c.with_messages(ms)
    turns_before = sum(1 for t in turn_indices(c) if t < index)
    assert reasons(inserted) == [Reason.KEPT] * turns_before + [Reason.PREFIX_CHANGED] * (4 - turns_before)
    check_consistent(inserted)


def test_editing_an_earlier_turn_unseals_it_and_every_later_turn():
    c = grow(4)
    ms = list(c)
    ms[4] = ms[4].with_content("rewritten")
    edited = c.with_messages(ms)
    assert reasons(edited) == [Reason.KEPT, Reason.NO_SEALED_THINKING, Reason.PREFIX_CHANGED, Reason.PREFIX_CHANGED]
    check_consistent(edited)


def test_replacing_a_turn_thinking_unbinds_it():
    c = grow(3)
    ms = list(c)
    ms[4] = ms[4].with_thinking(ms[4].thinking)
    edited = c.with_messages(ms)
    assert reasons(edited) == [Reason.KEPT, Reason.UNBOUND, Reason.PREFIX_CHANGED]


@pytest.mark.parametrize("where", ["start", "middle", "after-last-turn", "end"])
def test_adding_a_system_message_anywhere_unseals_everything(where):
    c = grow(3)
    ms = list(c)
    position = {"start": 0, "middle": 3, "after-last-turn": 7, "end": len(ms)}[where]
    ms.insert(position, SystemMessage("new rule"))
    changed = c.with_messages(ms)
    assert reasons(changed) == [Reason.PREFIX_CHANGED] * 3
    check_consistent(changed)


def test_appending_a_system_message_unseals_everything():
    c = grow(3)
    appended = c.append(SystemMessage("one more rule"))
    assert reasons(appended) == [Reason.PREFIX_CHANGED] * 3
    assert reasons(c) == [Reason.KEPT] * 3  # the original is unaffected


def test_changing_the_system_message_unseals_everything():
    c = grow(3)
    changed = c.with_messages([SystemMessage("You are verbose."), *c.messages[1:]])
    assert reasons(changed) == [Reason.PREFIX_CHANGED] * 3


def test_changing_tools_unseals_everything():
    c = grow(3, tools=[WEATHER])
    assert reasons(c) == [Reason.KEPT] * 3
    assert reasons(c.with_tools([WEATHER, CLOCK])) == [Reason.PREFIX_CHANGED] * 3
    assert reasons(c.with_tools([])) == [Reason.PREFIX_CHANGED] * 3
    assert reasons(c.with_tools([Tool("get_weather", "Weather!", WEATHER.parameters)])) == [Reason.PREFIX_CHANGED] * 3
    assert reasons(c.with_tools([WEATHER])) == [Reason.KEPT] * 3


def test_tool_order_is_part_of_the_context():
    c = grow(2, tools=[WEATHER, CLOCK])
    assert reasons(c.with_tools([CLOCK, WEATHER])) == [Reason.PREFIX_CHANGED] * 2


def test_tool_schema_key_order_and_number_spelling_do_not_matter():
    schema = {"type": "object", "properties": {"n": {"type": "number", "minimum": 1, "maximum": 1e2}}}
    respelled = {"properties": {"n": {"maximum": 100, "minimum": 1.0, "type": "number"}}, "type": "object"}
    c = grow(2, tools=[Tool("t", "d", schema)])
    assert reasons(c.with_tools([Tool("t", "d", respelled)])) == [Reason.KEPT] * 2
    assert reasons(c.with_tools([Tool("t", "d", {**schema, "required": []})])) == [Reason.PREFIX_CHANGED] * 2


def test_changing_response_format_unseals_everything():
    fmt = {"type": "json_schema", "json_schema": {"name": "r", "schema": {"type": "object"}, "strict": True}}
    c = grow(2, response_format=fmt)
    assert reasons(c) == [Reason.KEPT] * 2
    assert reasons(c.with_response_format({"type": "json_object"})) == [Reason.PREFIX_CHANGED] * 2
    assert reasons(c.with_response_format(None)) == [Reason.PREFIX_CHANGED] * 2
    same = {"json_schema": {"strict": True, "schema": {"type": "object"}, "name": "r"}, "type": "json_schema"}
    assert reasons(c.with_response_format(same)) == [Reason.KEPT] * 2


def test_adding_a_response_format_unseals_everything():
    c = grow(2)
    assert reasons(c.with_response_format({"type": "json_object"})) == [Reason.PREFIX_CHANGED] * 2


@pytest.mark.parametrize(
    "target",
    [
        Origin("bedrock", "claude-test"),
        Origin("anthropic", "claude-other"),
        Origin("anthropic", "claude-test", "another-account"),
    ],
    ids=["provider", "model", "account"],
)
def test_another_provider_model_or_account(target):
    c = grow(3)
    assert reasons(c, target) == [Reason.ORIGIN_MISMATCH] * 3
    check_consistent(c, target)
    assert reasons(c) == [Reason.KEPT] * 3


def test_account_distinguishes_in_both_directions():
    with_account = Origin("anthropic", "claude-test", "team")
    c = grow(2, origin=with_account)
    assert reasons(c, with_account) == [Reason.KEPT] * 2
    assert reasons(c, ORIGIN) == [Reason.ORIGIN_MISMATCH] * 2
    assert reasons(c, Origin("anthropic", "claude-test", "")) == [Reason.ORIGIN_MISMATCH] * 2
    d = grow(2)
    assert reasons(d, Origin("anthropic", "claude-test", "")) == [Reason.KEPT] * 2


def test_hand_built_sealed_turn_is_unbound():
    c = Conversation([UserMessage("q")]).append(sealed("imported"), UserMessage("q2"))
    assert reasons(c) == [Reason.UNBOUND]
    check_consistent(c)


def test_unbound_turn_replacing_a_bound_one_unseals_later_turns():
    c = grow(3)
    ms = list(c)
    ms[2] = sealed("a0")  # same content, no binding
    assert ms[2] != c[2]
    replaced = c.with_messages(ms)
    assert reasons(replaced) == [Reason.UNBOUND, Reason.PREFIX_CHANGED, Reason.PREFIX_CHANGED]


def test_turns_produced_after_an_unbound_turn_stay_sealed():
    # The unbound turn went out unsealed when the later turns were produced.
    c = Conversation([UserMessage("q")]).append(sealed("imported"), UserMessage("q2"))
    c = respond(c, ORIGIN, sealed("fresh")).append(UserMessage("q3"))
    assert reasons(c) == [Reason.UNBOUND, Reason.KEPT]


def test_turn_edited_in_a_stored_file_is_turn_changed():
    c = grow(3)
    doc = json.loads(c.to_json())
    turn = doc["messages"][4]
    assert turn["role"] == "assistant"
    for part in turn["parts"]:
        if part["type"] == "text":
            part["text"] = "a1 (edited on disk)"
    edited = Conversation.from_json(json.dumps(doc))
    assert edited[4].thinking_binding == c[4].thinking_binding  # the stale binding is kept
    assert reasons(edited) == [Reason.KEPT, Reason.TURN_CHANGED, Reason.PREFIX_CHANGED]
    check_consistent(edited)


@pytest.mark.parametrize(
    "edit",
    [
        lambda parts: parts[0].update(signature="sig-forged"),
        lambda parts: parts[0].update(text="other thinking"),
        lambda parts: parts.pop(1),
        lambda parts: parts.reverse(),
        lambda parts: parts.append({"type": "text", "text": " more"}),
        lambda parts: parts.append({"type": "tool_call", "id": "c9", "name": "f", "arguments": {}}),
    ],
)
def test_any_edit_of_the_stored_turn_is_turn_changed(edit):
    c = grow(1)
    doc = json.loads(c.to_json())
    edit(doc["messages"][2]["parts"])
    assert reasons(Conversation.from_json(json.dumps(doc))) == [Reason.TURN_CHANGED]


def test_binding_copied_onto_another_turn_never_holds():
    c = grow(2)
    doc = json.loads(c.to_json())
    doc["messages"][4]["binding"] = doc["messages"][2]["binding"]
    assert reasons(Conversation.from_json(json.dumps(doc))) == [Reason.KEPT, Reason.TURN_CHANGED]


def test_older_fingerprint_version_is_version_mismatch():
    c = grow(3)
    ms = list(c)
    b = ms[4].thinking_binding
    old = Binding(b.origin, 0, b.prefix, b.turn)
    ms[4] = ms[4]._bound(old)
    changed = c.with_messages(ms)
    assert reasons(changed) == [Reason.KEPT, Reason.VERSION_MISMATCH, Reason.PREFIX_CHANGED]
    check_consistent(changed)


def test_older_version_in_a_stored_file_is_version_mismatch():
    c = grow(2)
    doc = json.loads(c.to_json())
    for m in doc["messages"]:
        if m["role"] == "assistant":
            m["binding"] = m["binding"].replace(f"thinkseal-binding/{FINGERPRINT_VERSION};", "thinkseal-binding/0;")
    loaded = Conversation.from_json(json.dumps(doc))
    assert reasons(loaded) == [Reason.VERSION_MISMATCH, Reason.VERSION_MISMATCH]
    assert reasons(loaded.rebind(ORIGIN)) == [Reason.KEPT, Reason.KEPT]


def test_prefix_half_of_binding_names_prefix_changed():
    c = grow(1)
    b = c[2].thinking_binding
    ms = list(c)
    ms[2] = ms[2]._bound(Binding(b.origin, b.version, bytes(32), b.turn))
    assert reasons(c.with_messages(ms)) == [Reason.PREFIX_CHANGED]
    ms[2] = ms[2]._bound(Binding(b.origin, b.version, b.prefix, bytes(32)))
    assert reasons(c.with_messages(ms)) == [Reason.TURN_CHANGED]


# -- no gaps ----------------------------------------------------------------------------


@pytest.mark.parametrize("position", range(0, 22))
def test_no_gaps_after_a_change(position):
    c = grow(10)  # 22 messages, turns at 2, 4, ..., 20
    ms = list(c)
    ms.insert(position, UserMessage("inserted"))
    rs = reasons(c.with_messages(ms))
    turns_before = sum(1 for t in turn_indices(c) if t < position)
    assert rs[:turns_before] == [Reason.KEPT] * turns_before
    assert Reason.KEPT not in rs[turns_before:]
    kept = [r == Reason.KEPT for r in rs]
    assert kept == sorted(kept, reverse=True)  # one origin, one edit: an unbroken leading run


def test_mixed_origin_history_keeps_each_origins_own_turns():
    a, b = ORIGIN, Origin("bedrock", "claude-test")
    c = Conversation([UserMessage("q")])
    producers = [a, a, b, a, b, b, a]
    for i, o in enumerate(producers):
        c = respond(c, o, sealed(f"r{i}")).append(UserMessage(f"u{i}"))
    assert reasons(c, a) == [Reason.KEPT if p == a else Reason.ORIGIN_MISMATCH for p in producers]
    assert reasons(c, b) == [Reason.KEPT if p == b else Reason.ORIGIN_MISMATCH for p in producers]
    check_consistent(c, a)
    check_consistent(c, b)
    # Editing the first message now unseals everything, for either target.
    edited = c.with_messages([UserMessage("q edited"), *c.messages[1:]])
    assert Reason.KEPT not in reasons(edited, a)
    assert Reason.KEPT not in reasons(edited, b)


# -- tool pairing -------------------------------------------------------------------------


C1 = ToolCall("c1", "get_weather", {"city": "Paris"})
C2 = ToolCall("c2", "get_weather", {"city": "Lyon"})


def tool_turn(calls: Sequence[ToolCall] = (C1, C2)) -> Conversation:
    return respond(Conversation([UserMessage("weather in Paris and Lyon?")], [WEATHER]), ORIGIN, sealed(None, calls))


def test_fully_answered_tool_turn_is_kept():
    c = tool_turn().append(ToolMessage("sunny", "c1"), ToolMessage("rain", "c2"))
    assert reasons(c) == [Reason.KEPT]
    replay = c.replay(ORIGIN)
    assert replay.sent(1) is c[1]
    assert replay.sent(2) is c[2]
    assert replay.sent(3) is c[3]
    check_consistent(c)


def test_answers_in_any_order_pair():
    c = tool_turn().append(ToolMessage("rain", "c2"), ToolMessage("sunny", "c1"))
    assert reasons(c) == [Reason.KEPT]


def test_unanswered_call_unseals_its_turn_and_is_not_sent():
    c = tool_turn().append(ToolMessage("sunny", "c1"), UserMessage("and?"))
    assert reasons(c) == [Reason.UNPAIRED_TOOL_CALL]
    replay = c.replay(ORIGIN)
    sent = replay.sent(1)
    assert isinstance(sent, AssistantMessage)
    assert [call.id for call in sent.tool_calls] == ["c1"]
    assert not sent.has_sealed_thinking
    assert sent.thinking_binding is None
    assert replay.sent_messages()[1] == sent
    assert replay.sent(2) is c[2]
    check_consistent(c)


def test_turn_with_no_answered_call_goes_out_without_calls():
    c = tool_turn().append(UserMessage("never mind"))
    assert reasons(c) == [Reason.UNPAIRED_TOOL_CALL]
    sent = c.replay(ORIGIN).sent(1)
    assert sent.tool_calls == ()
    assert not sent.has_sealed_thinking


def test_last_turn_awaiting_results_is_unpaired():
    c = tool_turn()
    assert reasons(c) == [Reason.UNPAIRED_TOOL_CALL]
    assert c.replay(ORIGIN).sent(1).tool_calls == ()
    answered = c.append(ToolMessage("sunny", "c1"), ToolMessage("rain", "c2"))
    assert reasons(answered) == [Reason.KEPT]


def test_system_messages_in_the_tool_run_are_skipped():
    ms = [
        UserMessage("q"),
        sealed(None, (C1, C2)),
        ToolMessage("sunny", "c1"),
        SystemMessage("note"),
        ToolMessage("rain", "c2"),
        UserMessage("thanks"),
    ]
    c = Conversation(ms, [WEATHER]).rebind(ORIGIN)
    assert reasons(c) == [Reason.KEPT]
    assert c.replay(ORIGIN).sent(4) is c[4]


def test_user_message_ends_the_tool_run():
    ms = [
        UserMessage("q"),
        sealed(None, (C1, C2)),
        ToolMessage("sunny", "c1"),
        UserMessage("x"),
        ToolMessage("rain", "c2"),
    ]
    c = Conversation(ms, [WEATHER]).rebind(ORIGIN)
    assert reasons(c) == [Reason.UNPAIRED_TOOL_CALL]
    stray = c.replay(ORIGIN).sent(4)
    assert isinstance(stray, UserMessage)
    assert "c2" in stray.content
    assert "rain" in stray.content


def test_stray_tool_message_goes_out_as_user_text_naming_the_call():
    c = tool_turn((C1,)).append(ToolMessage("sunny", "c1"), ToolMessage("orphan result", "call_zz9", is_error=True))
    assert reasons(c) == [Reason.KEPT]
    replay = c.replay(ORIGIN)
    stray = replay.sent(3)
    assert isinstance(stray, UserMessage)
    assert "call_zz9" in stray.content
    assert "orphan result" in stray.content
    assert replay.sent_messages()[3] == stray
    assert replay.sent(2) is c[2]
    check_consistent(c)


def test_tool_message_with_no_turn_before_is_stray():
    c = Conversation([UserMessage("q"), ToolMessage("result", "c7")])
    stray = c.replay(ORIGIN).sent(1)
    assert isinstance(stray, UserMessage)
    assert "c7" in stray.content


def test_duplicate_answer_is_stray():
    c = tool_turn((C1,)).append(ToolMessage("sunny", "c1"), ToolMessage("sunny again", "c1"))
    replay = c.replay(ORIGIN)
    assert replay.sent(2) is c[2]
    assert isinstance(replay.sent(3), UserMessage)
    assert "c1" in replay.sent(3).content


def test_answer_to_an_older_turn_is_stray():
    c = tool_turn((C1,)).append(ToolMessage("sunny", "c1"))
    c = respond(c, ORIGIN, sealed(None, (C2,))).append(ToolMessage("late", "c1"), ToolMessage("rain", "c2"))
    replay = c.replay(ORIGIN)
    assert isinstance(replay.sent(4), UserMessage)
    assert "c1" in replay.sent(4).content
    assert replay.sent(5) is c[5]
    assert reasons(c) == [Reason.KEPT, Reason.KEPT]


def test_unpaired_turn_at_request_time_keeps_later_turns_sealed():
    # A turn whose call went unanswered went out unsealed when the next turn
    # was produced, so the next turn's binding already accounts for that.
    c = tool_turn().append(ToolMessage("sunny", "c1"), UserMessage("skip Lyon"))
    c = respond(c, ORIGIN, sealed("Paris is sunny.")).append(UserMessage("ok"))
    assert reasons(c) == [Reason.UNPAIRED_TOOL_CALL, Reason.KEPT]
    check_consistent(c)


def test_answering_later_unseals_nothing_retroactively():
    c = tool_turn((C1,)).append(ToolMessage("sunny", "c1"))
    c = respond(c, ORIGIN, sealed("Sunny."))
    assert reasons(c) == [Reason.KEPT, Reason.KEPT]
    check_consistent(c)


def test_removing_a_tool_result_unpairs_the_turn_and_unseals_later_turns():
    c = tool_turn((C1,)).append(ToolMessage("sunny", "c1"))
    c = respond(c, ORIGIN, sealed("Sunny.")).append(UserMessage("thanks"))
    assert reasons(c) == [Reason.KEPT, Reason.KEPT]
    pruned = Conversation([m for m in c if not isinstance(m, ToolMessage)], c.tools)
    assert reasons(pruned) == [Reason.UNPAIRED_TOOL_CALL, Reason.PREFIX_CHANGED]


def test_with_messages_removing_a_tool_result_matches_a_fresh_conversation():
    # with_messages reuses replay caches for the leading identical messages; a
    # turn whose tool run is cut must not keep its cached decision.
    c = tool_turn((C1,)).append(ToolMessage("sunny", "c1"), UserMessage("u2"))
    c = respond(c, ORIGIN, sealed("done"))
    assert reasons(c) == [Reason.KEPT, Reason.KEPT]
    pruned = c.with_messages([c[0], c[1], c[3], c[4]])
    fresh = Conversation(list(pruned), pruned.tools, pruned.response_format)
    assert reasons(fresh) == [Reason.UNPAIRED_TOOL_CALL, Reason.PREFIX_CHANGED]
    assert reasons(pruned) == reasons(fresh)
    assert pruned.replay(ORIGIN).chain_end == fresh.replay(ORIGIN).chain_end


def test_with_messages_adding_a_tool_result_matches_a_fresh_conversation():
    c = tool_turn().append(ToolMessage("sunny", "c1"), UserMessage("u2"))
    assert reasons(c) == [Reason.UNPAIRED_TOOL_CALL]
    completed = c.with_messages([c[0], c[1], c[2], ToolMessage("rain", "c2"), c[3]])
    fresh = Conversation(list(completed), completed.tools, completed.response_format)
    assert reasons(fresh) == [Reason.KEPT]
    assert reasons(completed) == reasons(fresh)
    assert completed.replay(ORIGIN).chain_end == fresh.replay(ORIGIN).chain_end


def test_duplicate_call_ids_report_matches_the_sent_form():
    # Two calls share an id; one answer. Whatever the decision, a turn reported
    # Reason.KEPT must go out as received (sealed, every call).
    dup = ToolCall("c1", "get_weather", {"city": "Lyon"})
    c = tool_turn((C1, dup)).append(ToolMessage("sunny", "c1"), UserMessage("u"))
    check_consistent(c)


# -- rebind ----------------------------------------------------------------------------------


def test_rebind_restores_kept_for_unbound_history():
    ms = [SystemMessage("sys"), UserMessage("q")]
    for i in range(3):
        ms += [sealed(f"a{i}"), UserMessage(f"q{i}")]
    c = Conversation(ms, [WEATHER])
    assert reasons(c) == [Reason.UNBOUND] * 3
    rebound = c.rebind(ORIGIN)
    assert reasons(rebound) == [Reason.KEPT] * 3
    check_consistent(rebound)
    assert reasons(c) == [Reason.UNBOUND] * 3  # nothing changes implicitly


def test_rebind_after_an_edit_restores_kept():
    c = grow(3)
    edited = c.with_messages([c[0], UserMessage("edited"), *c.messages[2:]])
    assert reasons(edited) == [Reason.PREFIX_CHANGED] * 3
    assert reasons(edited.rebind(ORIGIN)) == [Reason.KEPT] * 3


def test_rebind_for_another_origin():
    c = grow(2)
    other = Origin("bedrock", "claude-test")
    r = c.rebind(other)
    assert reasons(r, other) == [Reason.KEPT] * 2
    assert reasons(r, ORIGIN) == [Reason.ORIGIN_MISMATCH] * 2


# -- the report as a sequence -----------------------------------------------------------------


def test_report_is_a_sequence():
    c = grow(5)
    ms = list(c)
    ms[5] = UserMessage("edited")
    c = c.with_messages(ms)
    report = c.replay_report(ORIGIN)
    assert isinstance(report, ReplayReport)
    assert isinstance(report, Sequence)
    assert len(report) == 5
    assert [e.index for e in report] == [2, 4, 6, 8, 10]
    assert [e.reason for e in report] == [
        Reason.KEPT,
        Reason.KEPT,
        Reason.PREFIX_CHANGED,
        Reason.PREFIX_CHANGED,
        Reason.PREFIX_CHANGED,
    ]
    assert report[0].index == 2
    assert report[-1].index == 10
    assert report[-5].index == 2
    assert report[-1] == report[4]
    with pytest.raises(IndexError):
        report[5]
    with pytest.raises(IndexError):
        report[-6]
    assert [e.index for e in report[1:3]] == [4, 6]
    assert [e.index for e in report[::-2]] == [10, 6, 2]
    assert list(report[10:]) == []
    assert [e.index for e in reversed(report)] == [10, 8, 6, 4, 2]
    assert report[0] in report
    assert report.index(report[3]) == 3
    assert report.count(report[2]) == 1


def test_report_entries():
    c = grow(2).append(SystemMessage("x"))
    entry = c.replay_report(ORIGIN)[0]
    assert entry.index == 2
    assert entry.reason == Reason.PREFIX_CHANGED
    assert entry.kept is False
    kept = grow(1).replay_report(ORIGIN)[0]
    assert kept.kept is True
    assert kept.reason == Reason.KEPT
    with pytest.raises(AttributeError):
        kept.reason = "x"  # type: ignore[misc]


def test_report_of_conversation_without_turns_is_empty():
    c = Conversation([UserMessage("q"), SystemMessage("s")])
    report = c.replay_report(ORIGIN)
    assert len(report) == 0
    assert list(report) == []
    with pytest.raises(IndexError):
        report[0]


def test_report_equals_replay_report():
    c = grow(3)
    assert c.replay(ORIGIN).report == c.replay_report(ORIGIN)
    assert list(c.replay_report(ORIGIN)) == list(c.replay(ORIGIN).report)


def test_report_covers_turns_in_the_unsettled_tail():
    # The last turn, awaiting tool results, is decided on every request.
    c = grow(3)
    c = respond(c, ORIGIN, sealed(None, (C1,)))
    report = c.replay_report(ORIGIN)
    assert len(report) == 4
    assert [e.reason for e in report] == [Reason.KEPT, Reason.KEPT, Reason.KEPT, Reason.UNPAIRED_TOOL_CALL]
    assert report[-1].index == len(c) - 1
    done = c.append(ToolMessage("sunny", "c1"))
    assert [e.reason for e in done.replay_report(ORIGIN)] == [Reason.KEPT] * 4


# -- binding a reply --------------------------------------------------------------------------


def test_reply_without_sealed_thinking_is_not_bound():
    c = Conversation([UserMessage("q")])
    for reply in (AssistantMessage("a"), AssistantMessage("a", (), [Text("plain")])):
        assert bind_reply(c, ORIGIN, reply).thinking_binding is None


def test_bound_reply_names_the_target_origin():
    c = Conversation([UserMessage("q")])
    target = Origin("openrouter", "some/model", "k")
    bound = bind_reply(c, target, sealed("x"))
    assert bound.thinking_binding.origin == target
    assert bound.thinking_binding.version == FINGERPRINT_VERSION
    assert bound.thinking_binding.turn == bound.digest
    assert bound == bind_reply(c, target, sealed("x"))


def test_reply_bound_to_one_history_does_not_hold_in_another():
    first = Conversation([UserMessage("q")])
    second = Conversation([UserMessage("q, slightly different")])
    reply = bind_reply(first, ORIGIN, sealed("a"))
    assert reasons(second.append(reply)) == [Reason.PREFIX_CHANGED]
    assert reasons(first.append(reply)) == [Reason.KEPT]


def test_reply_bound_before_context_change_does_not_hold():
    c = Conversation([UserMessage("q")], [WEATHER])
    reply = bind_reply(c, ORIGIN, sealed("a"))
    assert reasons(c.with_tools([]).append(reply)) == [Reason.PREFIX_CHANGED]
    assert reasons(c.append(reply)) == [Reason.KEPT]


def test_opaque_only_turn_is_sealed_and_kept():
    target = Origin("openrouter", "m")
    reply = AssistantMessage("a", (), [Text("reasoning"), Opaque("openrouter", '{"id":"x"}')])
    c = respond(Conversation([UserMessage("q")]), target, reply).append(UserMessage("q2"))
    assert reasons(c, target) == [Reason.KEPT]
    assert reasons(c.with_messages([UserMessage("q!"), *c.messages[1:]]), target) == [Reason.PREFIX_CHANGED]


def test_concurrent_replays_of_branches_agree_with_fresh_conversations():
    base = grow(3)
    base.replay(ORIGIN)
    results: dict[int, Conversation] = {}
    errors: list[BaseException] = []

    def work(k: int) -> None:
        try:
            c = base
            for i in range(6):
                c = c.append(UserMessage(f"{k}-{i}"))
                c.replay(ORIGIN)
                c = respond(c, ORIGIN, sealed(f"{k}-{i}"))
            results[k] = c
        except BaseException as err:  # surfaced below
            errors.append(err)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    for k, c in results.items():
        fresh = Conversation(list(c), c.tools, c.response_format)
        assert reasons(c) == reasons(fresh) == [Reason.KEPT] * 9, k
        assert c.replay(ORIGIN).chain_end == fresh.replay(ORIGIN).chain_end
        assert [m.content for m in c if isinstance(m, UserMessage)][-1] == f"{k}-5"
