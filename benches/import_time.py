"""What ``import thinkseal`` costs, measured in fresh processes (issue 10: ≤ 25 ms).

    python benches/import_time.py            # 15 runs of each measurement
    python benches/import_time.py -n 40 --top 25
    python benches/import_time.py --module thinkseal.providers

Two ways a process can find the package, measured apart:

- **bytecode cached**: every module's ``.pyc`` is there, as after ``pip
  install`` (which compiles them) or any earlier import that could write them.
  What users see.
- **package compiled from source**: the standard library and dependencies come
  from ``.pyc``, thinkseal's own modules are compiled on every import. What an
  editable install sees under ``PYTHONDONTWRITEBYTECODE=1`` (or a read-only
  checkout): compiling costs more than running the modules.

Both run with a private bytecode directory (``PYTHONPYCACHEPREFIX``, a
temporary directory filled by one warm-up import), so nothing is written beside
the sources and no stale cache is read. In each, the minimum over the runs (the
machine is noisy; the minimum is the run least disturbed by other work) of:

- ``python -X importtime -c "import thinkseal"``: the cumulative time of the
  ``thinkseal`` line (the import, interpreter start-up excluded), and per module
  the minimum self time, the largest first;
- wall time of ``python -c "import thinkseal"`` minus that of
  ``python -c "pass"`` (interleaved): what a user waits for, without
  ``-X importtime``'s own overhead.

Timings are reported, never asserted; ``tests/interop/test_imports.py`` checks
instead which modules the import loads.
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path


class Mode:
    """One way of finding the package's bytecode, and what was measured in it."""

    def __init__(self, name: str, env: dict[str, str]) -> None:
        self.name = name
        self.env = env
        self.totals: list[float] = []  # µs, cumulative `import <module>` under -X importtime
        self.self_us: dict[str, float] = {}  # µs, min self time per module
        self.bare: list[float] = []  # s, `python -c pass`
        self.loaded: list[float] = []  # s, `python -c "import <module>"`


def importtime_run(module: str, env: dict[str, str]) -> tuple[float, dict[str, float]]:
    """One fresh ``-X importtime`` process: the module's cumulative µs and every module's self µs."""
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        capture_output=True,
        text=True,
        check=True,
        env=env,
    )
    total = 0.0
    self_us: dict[str, float] = {}
    for line in proc.stderr.splitlines():
        if not line.startswith("import time:") or "self [us]" in line:
            continue
        own, cumulative, name = line.removeprefix("import time:").split("|")
        self_us[name.strip()] = float(own)
        if name.strip() == module:
            total = float(cumulative)
    return total, self_us


def wall_run(code: str, env: dict[str, str]) -> float:
    """Seconds from spawning ``python -c code`` to its exit."""
    start = time.perf_counter()
    subprocess.run([sys.executable, "-c", code], check=True, env=env)
    return time.perf_counter() - start


def measure(mode: Mode, module: str, runs: int) -> None:
    for _ in range(runs):
        total, self_us = importtime_run(module, mode.env)
        mode.totals.append(total)
        for name, us in self_us.items():
            mode.self_us[name] = min(mode.self_us.get(name, us), us)
    # Interleaved, so a burst of load hits both sides alike.
    for _ in range(runs):
        mode.bare.append(wall_run("pass", mode.env))
        mode.loaded.append(wall_run(f"import {module}", mode.env))


def median(values: list[float]) -> float:
    return sorted(values)[len(values) // 2]


def main() -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    parser.add_argument("-n", "--runs", type=int, default=15, help="fresh processes per measurement (default 15)")
    parser.add_argument("--top", type=int, default=15, help="modules listed by self time (default 15)")
    parser.add_argument("--module", default="thinkseal", help="what to import (default thinkseal)")
    args = parser.parse_args()
    package = args.module.split(".")[0]
    spec = importlib.util.find_spec(package)  # finds the package without running it
    if spec is None or spec.origin is None:
        parser.error(f"{package} is not importable here")
    package_dir = Path(spec.origin).resolve().parent

    with tempfile.TemporaryDirectory(prefix="import-time-pyc-") as prefix:
        base = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
        cached = Mode("bytecode cached", {**base, "PYTHONPYCACHEPREFIX": prefix})
        wall_run(f"import {args.module}", cached.env)  # writes every module's .pyc under the prefix
        measure(cached, args.module, args.runs)
        # The same caches without the package's own: those are compiled, and not written back.
        shutil.rmtree(Path(prefix + str(package_dir)), ignore_errors=True)
        source = Mode("package compiled from source", {**cached.env, "PYTHONDONTWRITEBYTECODE": "1"})
        measure(source, args.module, args.runs)

    load = " / ".join(f"{x:.2f}" for x in os.getloadavg())
    print(f"python {sys.version.split()[0]}, {os.cpu_count()} CPUs, load average {load} (1, 5, 15 min)")
    print(f"`import {args.module}`, {args.runs} fresh processes per measurement: min (median) in ms")
    print()
    modes = (cached, source)
    print(f"| | {' | '.join(m.name for m in modes)} |")
    print("|---|---|---|")
    cells = [f"{min(m.totals) / 1000:.1f} ({median(m.totals) / 1000:.1f})" for m in modes]
    print(f"| -X importtime, cumulative | {' | '.join(cells)} |")
    cells = [
        f"{(min(m.loaded) - min(m.bare)) * 1000:.1f} ({(median(m.loaded) - median(m.bare)) * 1000:.1f})" for m in modes
    ]
    print(f"| wall, import minus `pass` | {' | '.join(cells)} |")
    cells = [f"{min(m.bare) * 1000:.1f}" for m in modes]
    print(f"| wall, `python -c pass` | {' | '.join(cells)} |")
    cells = []
    for m in modes:
        own = [us for name, us in m.self_us.items() if name.split(".")[0] == package]
        cells.append(f"{sum(own) / 1000:.1f} in {len(own)} modules")
    print(f"| {package}'s own modules, sum of min self | {' | '.join(cells)} |")
    print()
    print(f"Min self time per module (ms), the {args.top} largest in either column:")
    print()
    print(f"| module | {' | '.join(m.name for m in modes)} |")
    print("|---|---|---|")
    names = set(cached.self_us) | set(source.self_us)
    ranked = sorted(names, key=lambda n: -max(m.self_us.get(n, 0.0) for m in modes))
    for name in ranked[: args.top]:
        cells = [f"{m.self_us[name] / 1000:.2f}" if name in m.self_us else "-" for m in modes]
        print(f"| {name} | {' | '.join(cells)} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
