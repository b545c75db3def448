"""The soak, full size: an agent loop through ``thinkseal.Client`` against
every provider's enforcing emulator (the driver is ``tests/soak/driver.py``;
``docs/reliability.md`` has what it does and the figures measured).

    python benches/soak.py --steps 10000            # the full run
    python benches/soak.py --steps 10000 --json     # the figures as JSON

Exit status 0 when every step was accepted or recovered and memory stayed
within the bound, 1 otherwise.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from tests.soak.driver import Figures, SoakFailure, growth_bound, run  # noqa: E402


def _mib(value: int | None) -> str:
    return "-" if value is None else f"{value / 2**20:.1f} MiB"


def _print(figures: Figures, bound: int) -> None:
    data = figures.as_dict()
    memory = data["memory"]
    rows = [
        ("steps", data["steps"]),
        ("seed", data["seed"]),
        ("HTTP requests", data["requests"]),
        ("replies", f"{data['replies']} ({data['streamed_steps']} streamed)"),
        ("tool calls", data["tool_calls"]),
        ("recoveries", ", ".join(f"{k} {v}" for k, v in data["recoveries"].items()) or "0"),
        ("retries (5xx)", data["retries"]),
        ("steps run again (cut stream)", data["step_retries_after_cut_stream"]),
        ("faults injected", ", ".join(f"{k} {v}" for k, v in data["faults_injected"].items())),
        ("switches", ", ".join(f"{k} {v}" for k, v in data["switches"].items())),
        ("edits", ", ".join(f"{k} {v}" for k, v in data["edits"].items())),
        ("seals issued / replayed", f"{data['seals_issued']} / {data['seals_replayed']}"),
        ("longest conversation", f"{data['max_messages']} messages"),
        ("traced memory growth after warm-up", f"{memory['traced_growth']} bytes (bound {bound})"),
        ("traced memory peak after warm-up", _mib(memory["traced_peak"])),
        (
            "RSS after warm-up / final / peak",
            " / ".join(_mib(memory[k]) for k in ("rss_after_warmup", "rss_final", "rss_peak")),
        ),
        ("wall time", f"{data['seconds']} s"),
    ]
    for name, value in rows:
        print(f"{name:38} {value}")
    print("steps by provider: " + ", ".join(f"{k} {v}" for k, v in data["steps_by_provider"].items()))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--steps", type=int, default=10_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--warmup", type=int, default=500, help="steps before memory is traced")
    parser.add_argument("--checkpoint-every", type=int, default=50, help="steps between memory checkpoints")
    parser.add_argument("--json", action="store_true", help="print the figures as one JSON object")
    parser.add_argument("--quiet", action="store_true", help="no progress lines on stderr")
    args = parser.parse_args(argv)

    def progress(step: int, figures: Figures) -> None:
        if not args.quiet:
            print(f"soak: {step} steps, {figures.requests} requests", file=sys.stderr, flush=True)

    try:
        figures = run(
            args.steps, seed=args.seed, warmup=args.warmup, checkpoint_every=args.checkpoint_every, progress=progress
        )
    except SoakFailure as failure:
        print(f"soak failed: {failure}", file=sys.stderr)
        return 1
    bound = growth_bound(figures)
    within = figures.growth() <= bound
    if args.json:
        print(json.dumps({**figures.as_dict(), "memory_bound": bound, "ok": within}, indent=2))
    else:
        _print(figures, bound)
    if not within:
        print(f"soak failed: traced memory grew {figures.growth()} bytes, more than {bound}", file=sys.stderr)
    return 0 if within else 1


if __name__ == "__main__":
    sys.exit(main())
