"""Memory checks: a replay decision (and a prepared request) leaves no UTF-8
copies inside the messages' strings, and what a decision keeps per message is
bounded. Counted with ``sys.getsizeof`` and tracemalloc, not timed."""

from __future__ import annotations

import gc
import pickle
import sys
import tracemalloc
from collections.abc import Iterator

from thinkseal import (
    AssistantMessage,
    Conversation,
    Message,
    Origin,
    SystemMessage,
    ThinkingBlock,
    ToolCall,
    ToolMessage,
    UserMessage,
    provider,
)
from thinkseal.testing import respond

CLAUDE = Origin("anthropic", "claude-sonnet-4-5")
# Latin-1, BMP and astral text: each of CPython's three string storage kinds.
TEXT = "lörem ipsüm — 東京の天気 🌧️ dolor sit ämet " * 12


def history(turns: int) -> list[Message]:
    """A bound Anthropic tool loop whose every string is non-ASCII."""
    conv = Conversation([SystemMessage(f"système {TEXT}"), UserMessage(f"demande {TEXT}")])
    for i in range(turns):
        reply = AssistantMessage(
            f"réponse {i} {TEXT}",
            [ToolCall(f"appel_{i}_é", "suche", {"requête": TEXT[:80], "seite": i})],
            [ThinkingBlock.Text(f"pensée {i} {TEXT}", f"sïg{i}")],
        )
        conv = respond(conv, CLAUDE, reply).append(ToolMessage(f"résultat {i} {TEXT}", f"appel_{i}_é"))
    return list(conv)


def strings(value: object) -> Iterator[str]:
    """Every str reachable from a message's slots (texts, ids, names, JSON keys and values)."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield from strings(k)
            yield from strings(v)
    elif isinstance(value, (list, tuple)):
        for v in value:
            yield from strings(v)
    elif hasattr(type(value), "__slots__"):
        for cls in type(value).__mro__:
            for name in getattr(cls, "__slots__", ()):
                if not name.startswith("_") and hasattr(value, name):
                    yield from strings(getattr(value, name))


def test_decision_and_prepare_leave_no_utf8_copies_in_strings() -> None:
    messages: list[Message] = pickle.loads(pickle.dumps(history(6)))  # fresh: nothing cached
    texts = [s for m in messages for s in strings(m)]
    assert any(not s.isascii() for s in texts)
    sizes = [sys.getsizeof(s) for s in texts]
    conv = Conversation(messages)
    assert all(e.kept for e in conv.replay(CLAUDE).report)
    req = provider("anthropic").prepare(conv, model=CLAUDE.model, max_tokens=1024)
    assert req.content
    assert [sys.getsizeof(s) for s in texts] == sizes


def test_memory_per_decided_message_is_bounded() -> None:
    turns = 300
    messages: list[Message] = pickle.loads(pickle.dumps(history(turns)))
    n = len(messages)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        conv = Conversation(messages)
        assert all(e.kept for e in conv.replay(CLAUDE).report)
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    # Per message: its digest, cached on the message (a 32-byte bytes object,
    # 65 B), plus the 32-byte chain value of its prefix and the decision's own
    # small per-turn records. Beyond the digest each message carries, at most
    # 64 B; a UTF-8 copy left in a string would cost more than 1 KB here.
    digest_on_message = sys.getsizeof(bytes(32))
    assert (kept - n * digest_on_message) / n <= 64, kept / n


PAD = "lorem ipsum dolor sit amet " * 20  # 540 characters


def agent_loop(turns: int) -> list[Message]:
    """A bound Anthropic tool loop of ~1.6 KB messages: a user request, a
    signed turn with a tool call, its result, and the next request, which goes
    out in the same user turn as the result."""
    conv = Conversation([UserMessage(f"request: {PAD * 3}")])
    for i in range(turns):
        reply = AssistantMessage(
            f"answer {i}: {PAD}",
            [ToolCall(f"call_{i}", "search", {"query": PAD[:200], "page": i})],
            [ThinkingBlock.Text(PAD + PAD[:200], "sig" * 40)],
        )
        conv = respond(conv, CLAUDE, reply).append(
            ToolMessage(f"result {i}: {PAD * 3}", f"call_{i}"), UserMessage(f"request {i}: {PAD * 3}")
        )
    return list(conv)


def test_wire_caches_keep_about_the_wire_bytes() -> None:
    """What a prepared request leaves cached for later ones (the fragments on
    the messages and the shared wire cache) is its encoded bytes, not a
    decoded copy beside them: at most 1.1x the body's size."""
    adapter = provider("anthropic")
    assert adapter.prepare(Conversation(agent_loop(2)), model=CLAUDE.model, max_tokens=1024).body  # imports done
    messages: list[Message] = pickle.loads(pickle.dumps(agent_loop(100)))  # fresh: nothing cached
    conv = Conversation(messages)
    assert all(e.kept for e in conv.replay(CLAUDE).report)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        req = adapter.prepare(conv, model=CLAUDE.model, max_tokens=1024)
        size = len(req.content)
        del req
        gc.collect()
        kept = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert size / len(messages) > 1_500
    assert kept <= 1.1 * size, kept / size
