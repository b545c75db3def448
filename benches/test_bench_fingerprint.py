"""Benchmarks (pytest-benchmark): the cold fingerprint of every prefix against a
pure-Python chain, and the cost of append + replay decision after one new turn
as the history grows. `python benches/report.py` prints the table in docs/performance.md.

Run: pytest benches --benchmark-only   (CI runs them once each with --benchmark-disable)
"""

from __future__ import annotations

from typing import Any

import pytest

import thinkseal
from thinkseal import AssistantMessage, Conversation, Origin, Tool, UserMessage, _core

from ._workload import bound_history, fresh_copies, history, python_chain

ORIGIN = Origin("anthropic", "claude-sonnet-4-5")
COLD_N = 2_100  # ends with a tool result, so every call is answered


def _native_chain(messages: list[Any], threads: int) -> bytes:
    digests = _core.message_digests(messages, threads)
    return _core.chain(_core.CHAIN_START, b"".join(digests))[-32:]


@pytest.mark.benchmark(group="cold-prefix-fingerprint")
def test_cold_python_baseline(benchmark: Any) -> None:
    msgs = history(COLD_N)
    benchmark.extra_info["messages"] = COLD_N
    result = benchmark.pedantic(python_chain, setup=lambda: ((fresh_copies(msgs),), {}), rounds=5)
    assert len(result) == 32


@pytest.mark.benchmark(group="cold-prefix-fingerprint")
@pytest.mark.parametrize("threads", [1, 2])
def test_cold_thinkseal_core(benchmark: Any, threads: int) -> None:
    msgs = history(COLD_N)
    benchmark.extra_info["messages"] = COLD_N
    result = benchmark.pedantic(
        lambda m: _native_chain(m, threads), setup=lambda: ((fresh_copies(msgs),), {}), rounds=5
    )
    assert len(result) == 32


@pytest.mark.benchmark(group="cold-prefix-fingerprint")
@pytest.mark.parametrize("bound", ["unbound", "bound"])
def test_cold_conversation_replay(benchmark: Any, bound: str) -> None:
    """The whole decision for a history seen for the first time (fresh objects)."""
    msgs = bound_history(COLD_N, ORIGIN) if bound == "bound" else history(COLD_N)
    benchmark.extra_info["messages"] = COLD_N
    report = benchmark.pedantic(
        lambda m: Conversation(m).replay(ORIGIN).report, setup=lambda: ((fresh_copies(msgs),), {}), rounds=5
    )
    turns = list(report)
    assert len(turns) == sum(1 for m in msgs if m.role == "assistant")
    assert all(e.kept for e in turns) == (bound == "bound")


@pytest.mark.benchmark(group="append-then-replay")
@pytest.mark.parametrize("n", [100, 1_000, 10_000, 100_000])
def test_append_then_replay(benchmark: Any, n: int) -> None:
    """One new turn appended to a history of n messages, then the replay decision."""
    state = {"conv": Conversation(history(n))}
    state["conv"].replay(ORIGIN)  # warm: the history was decided once before
    counter = iter(range(10**9))

    def step() -> int:
        conv = state["conv"].append(UserMessage(f"next {next(counter)}"))
        state["conv"] = conv
        return len(conv.replay(ORIGIN).report)

    assert benchmark(step) >= n // 3


@pytest.mark.benchmark(group="append-then-prepare")
@pytest.mark.parametrize("n", [100, 1_000, 10_000, 100_000])
def test_append_then_prepare(benchmark: Any, n: int) -> None:
    """A reply and a new user turn appended, then the whole Anthropic request built (body and bytes)."""
    adapter = thinkseal.provider("anthropic")
    state = {"conv": Conversation(history(n), [Tool("search")])}
    adapter.prepare(state["conv"], model=ORIGIN.model, max_tokens=1024)  # warm, as on a server
    counter = iter(range(10**9))
    benchmark.extra_info["messages"] = n

    def step() -> int:
        k = next(counter)
        conv = state["conv"].append(AssistantMessage(f"reply {k}"), UserMessage(f"next {k}"))
        state["conv"] = conv
        return len(adapter.prepare(conv, model=ORIGIN.model, max_tokens=1024).content)

    assert benchmark(step) > n * 1000
