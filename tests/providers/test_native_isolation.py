"""Native blocks across every registered adapter.

In user content and tool results (the caller's own blocks), a provider's
block (``Native(provider, data, text)``) reaches that provider verbatim and
no other; every other provider gets its ``text`` when it has one, and nothing
of its data.

In an assistant turn a native block is the provider's own data, sealed like
its thinking (a Responses compaction item's ``encrypted_content``, a server
tool's encrypted results, a Gemini part's ``thoughtSignature``): it goes out
verbatim only with a turn kept for that very origin (provider, model and
account, unchanged prefix), and otherwise as its ``text`` or not at all.
Random histories put native blocks of every provider in user content, tool
results and assistant turns, bound to a random origin or unbound, then
sometimes edit an earlier message, and send to every adapter and model.
"""

from __future__ import annotations

from typing import Any

from hypothesis import given
from hypothesis import strategies as st

import thinkseal
from thinkseal import (
    AssistantMessage,
    Conversation,
    Message,
    Native,
    Origin,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    ValidationError,
)
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import respond

from .sealed import OPTIONS

TOOL = Tool("lookup", "Look something up", {"type": "object", "properties": {"q": {"type": "string"}}})
MODELS = ("model-a", "model-b")


def native(provider: str, k: int, with_text: bool) -> Native:
    return Native.of(provider, {"type": "kept_block", "marker": f"NAT{k}X"}, text=f"shown{k}z" if with_text else None)


natives = st.tuples(st.sampled_from(PROVIDER_IDS), st.booleans())
# Where a block goes, and for an assistant turn the model it is bound under (None: unbound).
places = st.one_of(
    st.tuples(st.sampled_from(["user", "tool"]), st.none()),
    st.tuples(st.just("assistant"), st.sampled_from([None, *MODELS])),
)
steps = st.lists(st.tuples(places, natives), min_size=1, max_size=6)


def history(plan: list[Any], edit: int | None) -> tuple[Conversation, list[tuple[Native, int, str, int]]]:
    """The conversation, and each block placed with its number, where it is and
    the index of its message."""
    conv = Conversation([UserMessage("start")], [TOOL])
    placed: list[tuple[Native, int, str, int]] = []
    for k, ((where, model), (provider, with_text)) in enumerate(plan):
        block = native(provider, k, with_text)
        if where == "user":
            placed.append((block, k, where, len(conv)))
            conv = conv.append(UserMessage([f"question {k}", block]))
        elif where == "assistant":
            placed.append((block, k, where, len(conv)))
            turn = AssistantMessage.from_parts([f"answer {k} ", block])
            conv = conv.append(turn) if model is None else respond(conv, Origin(provider, model), turn)
            conv = conv.append(UserMessage(f"next {k}"))
        else:
            conv = conv.append(AssistantMessage(None, [ToolCall(f"call{k}", "lookup", {"q": "x"})]))
            placed.append((block, k, where, len(conv)))
            conv = conv.append(ToolMessage([f"result {k}", block], f"call{k}"), UserMessage(f"after {k}"))
    if edit is not None:
        messages: list[Message] = list(conv)
        users = [i for i, m in enumerate(messages) if isinstance(m, UserMessage) and isinstance(m.content, str)]
        messages[users[edit % len(users)]] = UserMessage(f"edited {edit}")
        conv = conv.with_messages(messages)
    return conv, placed


@given(steps, st.one_of(st.none(), st.integers(0, 50)))
def test_native_blocks_reach_their_own_provider_only(plan: list[Any], edit: int | None) -> None:
    conv, placed = history(plan, edit)
    for provider_id in PROVIDER_IDS:
        for model in MODELS:
            check_request(conv, placed, provider_id, model)


def check_request(conv: Conversation, placed: list[tuple[Native, int, str, int]], provider_id: str, model: str) -> None:
    adapter = thinkseal.provider(provider_id)
    own = any(block.provider == provider_id for block, *_ in placed)
    try:
        req = adapter.prepare(conv, model=model, **OPTIONS[provider_id])
    except ValidationError as err:
        refused: ValidationError | None = err
    else:
        refused = None
    if refused is not None:
        # Only a block of this provider's own may be one it cannot place, and it says where.
        assert own, (provider_id, refused)
        assert refused.path
        return
    body = req.content.decode()
    kept = {entry.index for entry in req.report if entry.kept}
    for block, k, where, index in placed:
        verbatim = block.provider == provider_id and (where != "assistant" or index in kept)
        if verbatim:
            assert f"NAT{k}X" in body, (provider_id, model, k, where)
        else:
            assert f"NAT{k}X" not in body, (provider_id, model, block.provider, k, where)
            if block.text is not None:
                assert block.text in body, (provider_id, k)


def test_an_assistant_native_block_goes_out_only_with_its_kept_turn() -> None:
    """The failure of a Responses compaction item replayed after a model switch:
    the turn's native block is withheld exactly when its thinking would be."""
    block = Native.of("openai-responses", {"type": "compaction", "id": "cmp_1", "encrypted_content": "SECRETX"})
    turn = AssistantMessage.from_parts([block, "Summary so far."])
    origin = Origin("openai-responses", "gpt-5")
    conv = respond(Conversation([UserMessage("long task")]), origin, turn).append(UserMessage("go on"))
    adapter = thinkseal.provider("openai-responses")
    assert "SECRETX" in adapter.prepare(conv, model="gpt-5").content.decode()
    for other in (
        adapter.prepare(conv, model="gpt-5-mini"),
        thinkseal.provider("openai-responses", "acct2").prepare(conv, model="gpt-5"),
    ):
        assert [e.reason for e in other.report] == ["origin-mismatch"]
        assert "SECRETX" not in other.content.decode()
        assert "Summary so far." in other.content.decode()
    pruned = conv.with_messages([UserMessage("long task, restated"), *list(conv)[1:]])
    req = adapter.prepare(pruned, model="gpt-5")
    assert [e.reason for e in req.report] == ["prefix-changed"]
    assert "SECRETX" not in req.content.decode()
