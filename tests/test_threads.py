"""Conversations shared between threads: deriving one while another thread
decides a replay for a new origin must neither fail nor change a decision."""

from __future__ import annotations

import threading

from thinkseal import AssistantMessage, Conversation, Origin, ThinkingBlock, UserMessage
from thinkseal.testing import respond

CLAUDE = Origin("anthropic", "claude")


def test_with_messages_while_other_threads_add_origins() -> None:
    conv = Conversation([UserMessage("q")])
    for k in range(20):
        turn = AssistantMessage(f"a{k}", thinking=[ThinkingBlock.Text(f"t{k}", f"s{k}")])
        conv = respond(conv, CLAUDE, turn).append(UserMessage(f"u{k}"))
    expected = [e.reason for e in conv.replay_report(CLAUDE)]
    errors: list[BaseException] = []
    start = threading.Barrier(8)

    def add_origins(worker: int) -> None:
        start.wait()
        try:
            for i in range(300):
                conv.replay(Origin("anthropic", f"model-{worker}-{i}"))
        except BaseException as err:  # reported by the main thread
            errors.append(err)

    def derive() -> None:
        start.wait()
        try:
            for _ in range(300):
                child = conv.with_messages(list(conv))
                assert [e.reason for e in child.replay_report(CLAUDE)] == expected
        except BaseException as err:  # reported by the main thread
            errors.append(err)

    threads = [threading.Thread(target=add_origins, args=(w,)) for w in range(6)]
    threads += [threading.Thread(target=derive) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
