"""thinkseal side by side with its peers, at n = 1,000, 3,000 and 15,000 messages
(Anthropic tool loop, ~1.7 KB per message, one process, min of several rounds):

- stateless: stored JSON -> loaded, checked, body bytes (thinkseal, pydantic-ai, LiteLLM),
  and the full request path: on through thinkseal's ``Client`` and pydantic-ai's
  ``AnthropicModel.request`` to an in-process transport that answers;
- stores (``benches._stateless``): ``load`` + ``prepare`` -> body bytes from
  SQLite, PostgreSQL and Redis (those whose server is reachable), and
  ``refresh`` + ``prepare`` after another writer appended 2 messages;
- steady state: append a step, then the body ready to send (its shared chunks
  and length, ``req.content_length``), per unchanged message; and the same with
  the body joined into one ``bytes`` (``req.content``);
- forks: two siblings of one prepared conversation, per sibling (body ready);
- cold all-prefix fingerprint of non-ASCII text against a pure-Python chain;
- memory: what a replay decision keeps per message, and the wire caches per wire byte;
- the issue-22 targets, each against its goal, in one table.

Prints the markdown tables of docs/performance.md and writes docs/performance-peers.png.
Each timed round starts as on a worker that serves many sessions: a full
collection (outside the timing), then the same request for another session of
the same size, then the timed one (``--cold``: the collection only, which
leaves code and data cold alike). The cold fingerprint's rounds start from
fresh objects instead.

Run: python -m benches.compare [--sizes 1000,3000] [--quick] [--cold] [--json PATH] [--no-plot]
(pip install -e '.[bench]' for the peers and matplotlib; THINKSEAL_TEST_POSTGRES /
THINKSEAL_TEST_REDIS name the PostgreSQL and Redis servers, left out when unset
or unreachable). ``--quick``: n = 1,000 and 3,000, fewer rounds.
"""

from __future__ import annotations

import argparse
import gc
import json
import math
import pickle
import sys
import tracemalloc
from collections.abc import Callable
from dataclasses import asdict, dataclass
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

from . import _peers, _stateless
from ._stateless import best
from ._workload import PAD, bound_history, fresh_copies, history, message, python_chain

SIZES = (1_000, 3_000, 15_000)
QUICK_SIZES = (1_000, 3_000)
DOCS = Path(__file__).resolve().parent.parent / "docs"
T = TypeVar("T")


@dataclass(frozen=True)
class Rounds:
    """Timed rounds (the minimum is kept): of a whole-history path at n <= 1,000
    and above, of a step (steady state, forks, refresh), of the cold fingerprint."""

    small: int = 21
    large: int = 5
    step: int = 21
    cold: int = 9

    def whole(self, n: int) -> int:
        return self.small if n <= 1_000 else self.large


FULL = Rounds()
QUICK = Rounds(small=7, large=3, step=9, cold=5)


def stateless_paths(conv: Conversation, received: _peers.Received) -> dict[str, Callable[[], Any]]:
    """Each library's path from its own stored JSON of ``conv``."""
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
    return paths


def stateless(n: int, rounds: Rounds = FULL) -> dict[str, float]:
    """us per message, stored JSON -> body bytes (and, for the ``full`` paths,
    on through each library's client to an in-process transport). Each round
    of a path serves the same path for another session first (``best``)."""
    conv = Conversation(bound_history(n, _peers.ORIGIN))
    received = _peers.Received()
    paths = stateless_paths(conv, received)
    others = stateless_paths(Conversation(fresh_copies(list(conv))), received)
    out = {name: best(run, rounds.whole(n), other=others[name]) / n * 1e6 for name, run in paths.items()}
    # Every full path sent the whole history: each body at least ~1 KB a message.
    assert received.sizes
    assert min(received.sizes) > n * 1_000, received.sizes
    return out


def steady_and_forks(n: int, rounds: Rounds = FULL) -> tuple[float, float, float, float]:
    """(us per unchanged message for one appended step + the body ready to send,
    us for that step, us for it with the body joined, us per fork sibling)."""
    adapter = provider("anthropic")
    history = bound_history(n, _peers.ORIGIN)
    # The session timed, and another one the same size whose step each round serves first.
    timed = {"conv": Conversation(history)}
    other = {"conv": Conversation(fresh_copies(history))}
    counter = iter(range(10**9))

    def step(session: dict[str, Conversation], joined: bool) -> None:
        i = next(counter)
        conv = respond(
            session["conv"].append(UserMessage(f"next {i}")),
            _peers.ORIGIN,
            AssistantMessage(f"ok {i}", [], [ThinkingBlock.Text(f"t {i}", f"s{i}")]),
        )
        session["conv"] = conv
        req = adapter.prepare(conv, model=_peers.ORIGIN.model, max_tokens=1024)
        _ = req.content if joined else req.content_length

    for session in (timed, other):
        _ = adapter.prepare(session["conv"], model=_peers.ORIGIN.model, max_tokens=1024).content  # warm
        for _ in range(3):  # the first steps after loading still extend the wire caches
            step(session, False)
    # Steps are cheap at every n: 21 rounds each, so the minimum is not one noisy step.
    one = best(lambda: step(timed, False), rounds.step, other=lambda: step(other, False))
    one_joined = best(lambda: step(timed, True), rounds.step, other=lambda: step(other, True))

    def forks(base: Conversation) -> None:
        for k in range(2):
            sibling = base.append(UserMessage(f"sibling {k} {next(counter)}"))
            _ = adapter.prepare(sibling, model=_peers.ORIGIN.model, max_tokens=1024).content_length

    timed_base, other_base = timed["conv"], other["conv"]
    fork = best(lambda: forks(timed_base), rounds.step, other=lambda: forks(other_base)) / 2
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


def cold_fingerprint(n: int = 2_100, rounds: int = 9) -> dict[str, float]:
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

        out[name] = best(run, rounds, setup=fresh) / n * 1e6
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
        xs = [n for n in results if name in results[n]]
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


def issue22(sizes: tuple[int, ...], rounds: Rounds, cold_n: int = 2_100) -> dict[str, Any]:
    """The figures issue 22's targets are read from (µs unless named otherwise),
    and the targets (``targets``)."""
    figures: dict[str, Any] = {
        "sizes": list(sizes),
        "rounds": asdict(rounds),
        "peers": _peers.available(),
        "measure": _stateless.MEASURES[_stateless.SERVED],
        "stateless_us_per_msg": {n: stateless(n, rounds) for n in sizes},
        "store": _stateless.store_rows(sizes, rounds.whole, rounds.step),
        "steady": {},
    }
    for n in sizes:
        per, one, joined, fork = steady_and_forks(n, rounds)
        figures["steady"][n] = {
            "us_per_unchanged_msg": per,
            "step_us": one,
            "step_joined_us": joined,
            "fork_sibling_us": fork,
            "fork_us_per_unchanged_msg": fork / n,
        }
    figures["cold_fingerprint_messages"] = cold_n
    figures["cold_fingerprint_us_per_msg"] = cold_fingerprint(cold_n, rounds.cold)
    figures["targets"] = issue22_targets(figures)
    return figures


def run(sizes: tuple[int, ...], rounds: Rounds) -> dict[str, Any]:
    """Every figure, in one run: issue 22's, memory and the wire caches."""
    figures = issue22(sizes, rounds)
    per_message, ratio = memory()
    figures["memory"] = {"decision_bytes_per_msg": per_message, "wire_cache_per_wire_byte": ratio}
    figures["wire_caches"] = wire_cache_shapes()
    return figures


# -- issue 22 -------------------------------------------------------------------------------


def _verdict(met: dict[int, bool]) -> str:
    """met / not met over the sizes measured (``met at ... only`` when some are)."""
    if not met:
        return "n/a"
    if all(met.values()):
        return "met"
    if any(met.values()):
        return "met at " + ", ".join(f"{n:,}" for n, ok in met.items() if ok) + " only"
    return "not met"


def issue22_targets(figures: dict[str, Any]) -> list[dict[str, Any]]:
    """Issue 22's targets: for each, the goal, the figure per size (``value``:
    the ratio, % or µs compared with the goal; ``cell``: it with what it came
    from) and whether it is met (at every size measured)."""
    sizes: list[int] = figures["sizes"]
    stateless_figures = figures["stateless_us_per_msg"]
    store = figures["store"]
    steady = figures["steady"]
    nan = float("nan")
    rows: list[dict[str, Any]] = []

    def row(path: str, goal: str, cells: dict[Any, tuple[float, str]], bound: float, verdict: str = "") -> None:
        """``bound``: the goal's figure, a floor when positive, a ceiling (its negation) when negative."""
        met = {n: (v >= bound if bound > 0 else v <= -bound) for n, (v, _) in cells.items() if not math.isnan(v)}
        rows.append(
            {
                "path": path,
                "goal": goal,
                "value": {n: v for n, (v, _) in cells.items()},
                "cell": {n: text for n, (_, text) in cells.items()},
                "met": verdict or _verdict(met),
            }
        )

    def lean(n: int) -> float:
        return float(stateless_figures[n].get("pydantic-ai", nan))

    def against_lean(t: float, n: int) -> tuple[float, str]:
        return lean(n) / t, f"{lean(n) / t:.2f}x ({t:.2f} vs {lean(n):.2f} µs/msg)"

    by_size = store["by_size"]
    for backend in store["backends"]:
        cells = {n: against_lean(by_size[n][backend]["lazy_prepare_us_per_msg"], n) for n in sizes}
        label = _stateless.LABELS[backend]
        row(
            f"store `load(lazy=True)` + `prepare`, a seen target → body bytes, {label}",
            ">= 10x pydantic-ai lean",
            cells,
            10,
        )
    for backend in store["backends"]:
        cells = {n: against_lean(by_size[n][backend]["lazy_new_turns_us_per_msg"], n) for n in sizes}
        label = _stateless.LABELS[backend]
        row(f"… after 2 new turns (mapped and written back), {label}", "(not a target)", cells, 10, "—")
    for backend in store["backends"]:
        cells = {}
        for n in sizes:
            f = by_size[n][backend]
            cells[n] = (
                f["refresh_pct"],
                f"{f['refresh_pct']:.2f} % ({f['refresh_prepare_us']:,.0f} µs vs {f['load_prepare_us'] / 1e3:,.1f} ms;"
                f" body joined {f['refresh_joined_pct']:.1f} %)",
            )
        label = _stateless.LABELS[backend]
        row(f"`refresh` + `prepare` after 2 new turns, {label}", "<= 2 % of a full load + prepare", cells, -2)
    cells = {n: against_lean(stateless_figures[n]["thinkseal"], n) for n in sizes}
    row("`from_json` + `prepare` → body bytes", ">= 5x pydantic-ai lean", cells, 5)
    cold = figures["cold_fingerprint_us_per_msg"]
    for threads, goal in ((1, 2.0), (2, 3.0)):
        t = cold[f"thinkseal-{threads}"]
        ratio = cold["python"] / t
        row(
            f"cold fingerprint, {threads} thread{'s' if threads > 1 else ''} "
            f"({figures['cold_fingerprint_messages']:,} fresh non-ASCII messages)",
            f">= {goal:.0f}x the Python chain",
            {"all": (ratio, f"{ratio:.2f}x ({t:.2f} vs {cold['python']:.2f} µs/msg)")},
            goal,
        )
    cells = {}
    for n in sizes:
        full = float(stateless_figures[n].get("pydantic-ai full", nan))
        per = steady[n]["us_per_unchanged_msg"]
        cells[n] = (full / per, f"{full / per:,.0f}x ({full:.2f} / {per:.4f} µs per msg)")
    row("steady state in process vs pydantic-ai's full request path", ">= 150x", cells, 150)
    cells = {}
    for n, f in steady.items():
        per = f["fork_us_per_unchanged_msg"]
        cells[n] = (per, f"{per:.4f} µs ({f['fork_sibling_us']:,.0f} µs/sibling)")
    fork = cells.get(15_000)
    verdict = ("met" if fork[0] <= 0.05 else "not met") if fork else "n/a (15,000 not run)"
    row("a fork (sibling continuation), µs per unchanged message", "<= 0.05 µs at 15,000", cells, -0.05, verdict)
    for backend in store["backends"]:
        cells = {}
        for n in sizes:
            ratio = by_size[n][backend]["fragments_per_wire_byte"]
            cells[n] = (ratio, f"{ratio:.3f}x")
        row(f"stored fragments, {_stateless.LABELS[backend]}", "<= 1.2x the wire bytes they replace", cells, -1.2)
    return rows


def print_targets(figures: dict[str, Any]) -> None:
    sizes: list[int] = figures["sizes"]
    left_out = figures["store"]["left_out"]
    print("\n### issue 22 targets")
    print(f"before each timed round: {figures['measure']}")
    if left_out:
        print("backends left out: " + "; ".join(f"{_stateless.LABELS[b]} ({why})" for b, why in left_out.items()))
    if not figures["peers"].get("pydantic-ai"):
        print("(pydantic-ai is not installed: the ratios against it are nan)")
    print("\n| path | goal | " + " | ".join(f"n = {n:,}" for n in sizes) + " | met? |")
    print("|---|---|" + "---|" * len(sizes) + "---|")
    for target in figures["targets"]:
        cells = target["cell"]
        # The cold fingerprint is one figure ("all"), not one per size.
        shown = [cells["all"]] + [""] * (len(sizes) - 1) if "all" in cells else [cells.get(n, "—") for n in sizes]
        print(f"| {target['path']} | {target['goal']} | " + " | ".join(shown) + f" | {target['met']} |")


def print_tables(figures: dict[str, Any]) -> None:
    results = figures["stateless_us_per_msg"]
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
    store = figures["store"]
    print(
        "\n| n | backend | load + prepare µs/msg | lazy, seen target µs/msg | lazy, 2 new turns µs/msg "
        "| load + prepare ms | refresh + prepare (2 new) µs | … of which refresh µs | … body joined µs "
        "| refresh % of load | fragments / wire bytes |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for n, by_backend in store["by_size"].items():
        for backend, f in by_backend.items():
            print(
                f"| {n:,} | {_stateless.LABELS[backend]} | {f['load_prepare_us_per_msg']:.2f} "
                f"| {f['lazy_prepare_us_per_msg']:.2f} | {f['lazy_new_turns_us_per_msg']:.2f} "
                f"| {f['load_prepare_us'] / 1e3:,.1f} | {f['refresh_prepare_us']:,.0f} | {f['refresh_alone_us']:,.0f} "
                f"| {f['refresh_prepare_joined_us']:,.0f} | {f['refresh_pct']:.2f} % "
                f"| {f['fragments_per_wire_byte']:.3f}x |"
            )
    print("\n| n | steady state µs per unchanged msg | one step µs | one step, body joined µs | one fork sibling µs |")
    print("|---|---|---|---|---|")
    for n, f in figures["steady"].items():
        print(
            f"| {n:,} | {f['us_per_unchanged_msg']:.4f} | {f['step_us']:.0f} | {f['step_joined_us']:.0f} "
            f"| {f['fork_sibling_us']:.0f} |"
        )
    cold = figures["cold_fingerprint_us_per_msg"]
    py = cold["python"]
    fresh = figures["cold_fingerprint_messages"]
    print(f"\ncold all-prefix fingerprint, non-ASCII, {fresh:,} fresh messages (µs/msg):")
    print(
        f"python {py:.2f}; thinkseal 1 thread {cold['thinkseal-1']:.2f} ({py / cold['thinkseal-1']:.2f}x), "
        f"2 threads {cold['thinkseal-2']:.2f} ({py / cold['thinkseal-2']:.2f}x)"
    )
    if "memory" not in figures:
        print_targets(figures)
        return
    mem = figures["memory"]
    print(
        f"\nmemory: {mem['decision_bytes_per_msg']:.0f} B per decided message beyond its digest; "
        f"wire caches {mem['wire_cache_per_wire_byte']:.2f}x wire bytes"
    )
    print("\n| wire caches / wire bytes, 300 messages | joined | alone | parallel |")
    print("|---|---|---|---|")
    for pid, row in figures["wire_caches"].items():
        print(f"| {pid} | {row['joined']:.2f}x | {row['alone']:.2f}x | {row['parallel']:.2f}x |")
    print_targets(figures)


def sizes_arg(text: str) -> tuple[int, ...]:
    try:
        sizes = tuple(int(part.replace("_", "")) for part in text.split(",") if part.strip())
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of message counts: {text!r}") from None
    if not sizes or min(sizes) < 10:
        raise argparse.ArgumentTypeError("sizes are message counts of at least 10")
    return sizes


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0], allow_abbrev=False)
    parser.add_argument("--sizes", type=sizes_arg, help="comma-separated message counts (default 1000,3000,15000)")
    parser.add_argument("--quick", action="store_true", help="n = 1,000 and 3,000 (unless --sizes), fewer rounds")
    parser.add_argument("--json", help="write every figure to this path")
    parser.add_argument(
        "--no-plot", dest="plot", action="store_false", help="leave docs/performance-peers.png as it is"
    )
    _stateless.cold_option(parser)
    args = parser.parse_args(argv)
    _stateless.use_measure(args)
    sizes = args.sizes or (QUICK_SIZES if args.quick else SIZES)
    rounds = QUICK if args.quick else FULL
    for name, ok in _peers.available().items():
        if not ok:
            print(f"({name} is not installed: its column is left out; pip install -e '.[bench]')")
    print(f"sizes {', '.join(f'{n:,}' for n in sizes)}; rounds {asdict(rounds)} (min of rounds)")
    print(f"before each timed round: {_stateless.MEASURES[_stateless.SERVED]}")
    figures = run(tuple(sizes), rounds)
    print_tables(figures)
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=2, ensure_ascii=False, default=str) + "\n")
        print(f"\nfigures: {args.json}")
    if args.plot:
        try:
            print(f"\nplot: {plot(figures['stateless_us_per_msg'])}")
        except ImportError:
            print("\n(matplotlib is not installed: no plot)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
