"""Long histories whose prefix checks flip between holding and failing, more
than once: decided cold (from stored JSON), grown one message at a time, and by
the reference model of the test suite, they must all agree."""

from __future__ import annotations

from thinkseal import AssistantMessage, Conversation, Message, Origin, Reason, ThinkingBlock, UserMessage
from thinkseal.testing import respond

from .test_properties import reference_replay

CLAUDE = Origin("anthropic", "claude")


def sealed(k: int) -> AssistantMessage:
    return AssistantMessage(f"answer {k}", thinking=[ThinkingBlock.Text(f"t{k}", f"s{k}")])


def edit_first_user(conv: Conversation, k: int) -> Conversation:
    messages: list[Message] = list(conv)
    messages[0] = UserMessage(f"edited {k}")
    return conv.with_messages(messages)


def test_alternating_breaks_and_rebinds() -> None:
    conv = Conversation([UserMessage("q")])
    expected: list[str] = []
    for k in range(12):
        conv = respond(conv, CLAUDE, sealed(k)).append(UserMessage(f"u{k}"))
        if k % 3 == 2:
            # An edit before every earlier turn: they all stop holding, but the
            # turns produced after it were bound to the edited history.
            conv = edit_first_user(conv, k)
    # Fresh objects, so nothing cached helps: the walk decides everything cold.
    fresh = Conversation.from_json(conv.to_json())
    reasons = [e.reason for e in fresh.replay_report(CLAUDE)]
    # Turns bound before the last edit (k = 0..11 with edits after 2, 5, 8, 11)
    # all fail their prefix: the last edit came after every turn.
    assert reasons == [Reason.PREFIX_CHANGED] * 12
    # Now continue after the last edit: new turns hold again, the old ones do not.
    for k in range(12, 16):
        fresh = respond(fresh, CLAUDE, sealed(k)).append(UserMessage(f"u{k}"))
        expected = [Reason.PREFIX_CHANGED] * 12 + [Reason.KEPT] * (k - 11)
        assert [e.reason for e in Conversation.from_json(fresh.to_json()).replay_report(CLAUDE)] == expected


def test_turn_bound_after_an_unsealed_turn_is_kept_and_chain_matches_step_by_step() -> None:
    conv = Conversation([UserMessage("q")])
    conv = conv.append(sealed(0))  # hand-built: unbound, goes out unsealed
    for k in range(1, 30):
        conv = respond(conv, CLAUDE, sealed(k)).append(UserMessage(f"u{k}"))
        if k % 7 == 0:
            conv = edit_first_user(conv, k)
    cold = Conversation.from_json(conv.to_json()).replay(CLAUDE)
    # The step-by-step reference: each conversation decided as it grew.
    grown = Conversation([conv[0]])
    for message in conv.messages[1:]:
        grown = grown.append(message)
        grown.replay(CLAUDE)
    warm = grown.replay(CLAUDE)
    assert [e.reason for e in cold.report] == [e.reason for e in warm.report]
    assert cold.chain_end == warm.chain_end
    # And the turn-by-turn reference model of the test suite agrees.
    ref_report, _, ref_chain = reference_replay(Conversation.from_json(conv.to_json()), CLAUDE)
    assert [(e.index, e.reason) for e in cold.report] == ref_report
    assert cold.chain_end == ref_chain
    reasons = [e.reason for e in cold.report]
    assert reasons[0] == Reason.UNBOUND
    assert Reason.KEPT in reasons
    assert Reason.PREFIX_CHANGED in reasons
