"""thinkseal side by side with its peers, at n = 100, 1,000 and 15,000 messages
(Anthropic tool loop, ~1.7 KB per message, one process, min of several rounds):

- stateless: stored JSON -> loaded, checked, body bytes (thinkseal, pydantic-ai, LiteLLM),
  and the full request path: on through thinkseal's ``Client`` and pydantic-ai's
  ``AnthropicModel.request`` to an in-process transport that answers;
- steady state: append a step, then the body ready to send (its shared chunks
  and length, ``req.content_length``), per unchanged message; and the same with
  the body joined into one ``bytes`` (``req.content``);
- forks: two siblings of one prepared conversation, per sibling (body ready);
- cold all-prefix fingerprint of non-ASCII text against a pure-Python chain;
- memory: what a replay decision keeps per message, and the wire caches per wire byte.

Prints the markdown table of docs/performance.md and writes docs/performance-peers.png.
Run: python -m benches.compare   (pip install -e '.[bench]' for the peers and matplotlib)
"""

from __future__ import annotations

import gc
import pickle
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from thinkseal import (
    AssistantMessage,
    Conversation,
    Message,
    Origin,
    ThinkingBlock,
    Tool,
    ToolCall,
    ToolMessage,
    UserMessage,
    _core,
    provider,
)
from thinkseal.providers import PROVIDER_IDS
from thinkseal.testing import emulator, respond

from . import _peers
from ._workload import PAD, bound_history, fresh_copies, history, message, python_chain

SIZES = (100, 1_000, 15_000)
STEP_ROUNDS = 21
DOCS = Path(__file__).resolve().parent.parent / "docs"
T = TypeVar("T")


def best(run: Callable[[], Any], rounds: int, setup: Callable[[], None] | None = None) -> float:
    times = []
    for _ in range(rounds):
        if setup is not None:
            setup()
        gc.collect()
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return min(times)


def rounds_for(n: int) -> int:
    return 21 if n <= 1_000 else 5


def stateless(n: int) -> dict[str, float]:
    """us per message, stored JSON -> body bytes (and, for the ``full`` paths,
    on through each library's client to an in-process transport)."""
    conv = Conversation(bound_history(n, _peers.ORIGIN))
    received = _peers.Received()
    paths = {
        "thinkseal": _peers.thinkseal_stateless(conv.to_json()),
        "thinkseal full": _peers.thinkseal_full(conv.to_json(), received),
    }
    have = _peers.available()
    if have["pydantic-ai"]:
        stored = _peers.pydantic_ai_stored(conv)
        paths["pydantic-ai"] = _peers.pydantic_ai_stateless(stored)
        paths["pydantic-ai full"] = _peers.pydantic_ai_full(stored, received)
    if have["litellm"]:
        paths["litellm"] = _peers.litellm_stateless(_peers.litellm_stored(conv))
    out = {name: best(run, rounds_for(n)) / n * 1e6 for name, run in paths.items()}
    # Every full path sent the whole history: each body at least ~1 KB a message.
    assert received.sizes
    assert min(received.sizes) > n * 1_000, received.sizes
    return out


def steady_and_forks(n: int) -> tuple[float, float, float, float]:
    """(us per unchanged message for one appended step + the body ready to send,
    us for that step, us for it with the body joined, us per fork sibling)."""
    adapter = provider("anthropic")
    state = {"conv": Conversation(bound_history(n, _peers.ORIGIN))}
    _ = adapter.prepare(state["conv"], model=_peers.ORIGIN.model, max_tokens=1024).content  # warm
    counter = iter(range(10**9))

    def step(joined: bool) -> None:
        i = next(counter)
        conv = respond(
            state["conv"].append(UserMessage(f"next {i}")),
            _peers.ORIGIN,
            AssistantMessage(f"ok {i}", [], [ThinkingBlock.Text(f"t {i}", f"s{i}")]),
        )
        state["conv"] = conv
        req = adapter.prepare(conv, model=_peers.ORIGIN.model, max_tokens=1024)
        _ = req.content if joined else req.content_length

    for _ in range(3):  # the first steps after loading still extend the wire caches
        step(False)
    # Steps are cheap at every n: 21 rounds each, so the minimum is not one noisy step.
    one = best(lambda: step(False), STEP_ROUNDS)
    one_joined = best(lambda: step(True), STEP_ROUNDS)
    base = state["conv"]

    def forks() -> None:
        for k in range(2):
            sibling = base.append(UserMessage(f"sibling {k} {next(counter)}"))
            _ = adapter.prepare(sibling, model=_peers.ORIGIN.model, max_tokens=1024).content_length

    fork = best(forks, STEP_ROUNDS) / 2
    return one / n * 1e6, one * 1e6, one_joined * 1e6, fork * 1e6


NON_ASCII = "lörem ipsüm dolor sit ämet — 東京の天気 " * 14


def non_ascii(i: int) -> Message:
    kind = i % 3
    if kind == 0:
        return UserMessage(f"demande {i}: {NON_ASCII * 3}")
    if kind == 1:
        return AssistantMessage(
            f"réponse {i}: {NON_ASCII}",
            [ToolCall(f"call_{i}", "search", {"query": NON_ASCII[:200], "page": i})],
            [ThinkingBlock.Text(NON_ASCII + NON_ASCII[:200], "sig" * 40)],
        )
    return ToolMessage(f"résultat {i}: {NON_ASCII * 3}", f"call_{i - 1}")


def cold_fingerprint(n: int = 2_100) -> dict[str, float]:
    """us per message, all-prefix chain of fresh non-ASCII messages."""
    msgs = [non_ascii(i) for i in range(n)]
    out: dict[str, float] = {}
    chains: dict[str, Callable[[list[Message]], bytes]] = {
        "python": python_chain,
        "thinkseal-1": lambda m: _core.chain(_core.CHAIN_START, b"".join(_core.message_digests(m, 1))),
        "thinkseal-2": lambda m: _core.chain(_core.CHAIN_START, b"".join(_core.message_digests(m, 2))),
    }
    box: dict[str, Any] = {}

    def fresh() -> None:
        box["m"] = fresh_copies(msgs)

    for name, chain in chains.items():

        def run(chain: Callable[[list[Message]], bytes] = chain) -> bytes:
            return chain(box["m"])

        out[name] = best(run, 9, setup=fresh) / n * 1e6
    return out


def kept(step: Callable[[], T]) -> tuple[int, T]:
    """Bytes still allocated after ``step()`` (tracemalloc, after a gc), and its result."""
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        result = step()
        gc.collect()
        return tracemalloc.get_traced_memory()[0] - before, result
    finally:
        tracemalloc.stop()


def decided(messages: list[Message], origin: Origin) -> Conversation:
    conv = Conversation(messages)
    _ = conv.replay(origin).report
    return conv


def memory(n: int = 2_100) -> tuple[float, float]:
    """(B per decided message beyond each message's own cached digest,
    wire-cache bytes per wire byte after the first prepare)."""
    msgs: list[Message] = pickle.loads(pickle.dumps(bound_history(n, _peers.ORIGIN)))
    adapter = provider("anthropic")  # its modules imported now: code is not a wire cache
    decision, conv = kept(lambda: decided(msgs, _peers.ORIGIN))
    cached, size = kept(lambda: len(adapter.prepare(conv, model=_peers.ORIGIN.model, max_tokens=1024).content))
    return (decision - n * sys.getsizeof(bytes(32))) / n, cached / size


def shape(name: str, n: int) -> list[Message]:
    """``n`` ~1.6 KB messages of one tool-loop shape: ``joined`` (a user message
    after each tool result, the workload above), ``alone`` (each result goes
    back on its own), ``parallel`` (three calls per turn, three results)."""
    if name == "joined":
        return history(n)
    out: list[Message] = [message(0)]
    i = 1
    while len(out) < n:
        width = 3 if name == "parallel" else 1
        calls = [ToolCall(f"call_{i}_{k}", "search", {"query": PAD[:200], "page": i}) for k in range(width)]
        turn = message(1 + 3 * i)
        assert isinstance(turn, AssistantMessage)
        out.append(AssistantMessage(turn.content, calls, turn.thinking))
        out.extend(ToolMessage(f"result {i}.{k}: {PAD * 3}", c.id) for k, c in enumerate(calls))
        i += 1
    return out[:n]


def wire_cache_ratio(provider_id: str, messages: list[Message]) -> float:
    """Bytes the wire caches keep after one ``prepare`` of ``messages`` for
    ``provider_id``, per byte of the request body (tracemalloc)."""
    adapter = provider(provider_id)
    options = emulator(provider_id).options
    conv = Conversation(pickle.loads(pickle.dumps(messages)), [Tool("search")])
    _ = conv.replay(Origin(provider_id, "m")).report
    cached, size = kept(lambda: len(adapter.prepare(conv, model="m", **options).content))
    return cached / size


def wire_cache_shapes(n: int = 300) -> dict[str, dict[str, float]]:
    """``wire_cache_ratio`` for every adapter and shape."""
    return {
        pid: {name: wire_cache_ratio(pid, shape(name, n)) for name in ("joined", "alone", "parallel")}
        for pid in PROVIDER_IDS
    }


def plot(results: dict[int, dict[str, float]]) -> Path:
    import matplotlib  # noqa: PLC0415 (optional bench dependency)

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt  # noqa: PLC0415 (optional bench dependency)

    fig, ax = plt.subplots(figsize=(6.4, 4))
    names = sorted({name for row in results.values() for name in row})
    for name in names:
        xs = [n for n in SIZES if name in results[n]]
        ax.plot(xs, [results[n][name] for n in xs], marker="o", label=name)
    ax.set_xscale("log")
    top = max(v for row in results.values() for v in row.values())
    ax.set_ylim(0, top * 1.4)  # a linear axis from zero (heights read as ratios), room for the legend
    ax.set_xlabel("messages in the stored conversation (n)")
    ax.set_ylabel("µs per message")
    ax.set_title("Stored JSON → body bytes (full: → sent, reply read)\nAnthropic tool loop, 1.7 KB/message")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(loc="upper center", ncols=3, fontsize="small")
    path = DOCS / "performance-peers.png"
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    return path


def main() -> None:
    have = _peers.available()
    for name, ok in have.items():
        if not ok:
            print(f"({name} is not installed: its column is left out; pip install -e '.[bench]')")
    results = {n: stateless(n) for n in SIZES}
    print("\n| n | thinkseal µs/msg | pydantic-ai µs/msg | LiteLLM µs/msg | vs pydantic-ai | vs LiteLLM |")
    print("|---|---|---|---|---|---|")
    for n, row in results.items():
        t = row["thinkseal"]
        pa, ll = row.get("pydantic-ai"), row.get("litellm")
        print(
            f"| {n:,} | {t:.2f} | {pa or float('nan'):.2f} | {ll or float('nan'):.2f} "
            f"| {(pa or 0) / t:.2f}x | {(ll or 0) / t:.2f}x |"
        )
    print("\n| n | thinkseal full path µs/msg | pydantic-ai full path µs/msg | vs pydantic-ai |")
    print("|---|---|---|---|")
    for n, row in results.items():
        t, pa = row["thinkseal full"], row.get("pydantic-ai full")
        print(f"| {n:,} | {t:.2f} | {pa or float('nan'):.2f} | {(pa or 0) / t:.2f}x |")
    print("\n| n | steady state µs per unchanged msg | one step µs | one step, body joined µs | one fork sibling µs |")
    print("|---|---|---|---|---|")
    for n in SIZES:
        per, one, joined, fork = steady_and_forks(n)
        print(f"| {n:,} | {per:.4f} | {one:.0f} | {joined:.0f} | {fork:.0f} |")
    cold = cold_fingerprint()
    py = cold["python"]
    print("\ncold all-prefix fingerprint, non-ASCII, 2,100 fresh messages (µs/msg):")
    print(
        f"python {py:.2f}; thinkseal 1 thread {cold['thinkseal-1']:.2f} ({py / cold['thinkseal-1']:.2f}x), "
        f"2 threads {cold['thinkseal-2']:.2f} ({py / cold['thinkseal-2']:.2f}x)"
    )
    per_message, ratio = memory()
    print(f"\nmemory: {per_message:.0f} B per decided message beyond its digest; wire caches {ratio:.2f}x wire bytes")
    print("\n| wire caches / wire bytes, 300 messages | joined | alone | parallel |")
    print("|---|---|---|---|")
    for pid, row in wire_cache_shapes().items():
        print(f"| {pid} | {row['joined']:.2f}x | {row['alone']:.2f}x | {row['parallel']:.2f}x |")
    try:
        print(f"\nplot: {plot(results)}")
    except ImportError:
        print("\n(matplotlib is not installed: no plot)")


if __name__ == "__main__":
    main()
