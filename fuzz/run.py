"""Run the fuzz targets of fuzz/targets.py with atheris, each for a bounded time.

    python fuzz/run.py [--seconds N] [--only NAME ...] [--findings DIR]

Each target runs in a fresh subprocess on a copy of its seed corpus
(fuzz/corpus/<name>/, ':' spelled '_') in a temporary directory, so a run never
writes into the repository. Prints ``fuzz <name>: <N> inputs, <K> findings`` per
target and exits non-zero if any target found a crash. ``--findings DIR`` keeps
the crashing inputs under DIR/<name>/.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

HERE = Path(__file__).resolve().parent
CORPUS = HERE / "corpus"
# libFuzzer's final stats: "Done 1234 runs in 5 second(s)", or the "#1234 DONE ..." status line.
_DONE = re.compile(r"^(?:Done (\d+) runs|#(\d+)\s+DONE)", re.MULTILINE)
_STATUS = re.compile(r"^#(\d+)\s", re.MULTILINE)


def _child(name: str, argv: list[str]) -> None:
    """Fuzz one target in this process (the subprocess side of ``main``)."""
    # Imported here, never at the top: thinkseal must be first imported inside
    # instrument_imports for the fuzzer to see its coverage.
    import atheris  # noqa: PLC0415

    sys.path.insert(0, str(HERE))
    with atheris.instrument_imports(include=["thinkseal", "targets"]):
        from targets import TARGETS  # noqa: PLC0415

        import thinkseal  # noqa: F401, PLC0415

    atheris.Setup([sys.argv[0], *argv], TARGETS[name])
    atheris.Fuzz()


def _inputs(output: str) -> int:
    done = _DONE.findall(output)
    if done:
        runs, status = done[-1]
        return int(runs or status)
    status = _STATUS.findall(output)  # a crash ends the run before the final stats
    return int(status[-1]) if status else 0


def _run(name: str, seconds: int, findings: Path | None) -> tuple[str, str | None]:
    """Fuzz ``name`` for ``seconds``: its summary line, and the report of its findings (None if none)."""
    with tempfile.TemporaryDirectory(prefix="thinkseal-fuzz-") as tmp:
        work = Path(tmp)
        corpus = work / "corpus"
        seeds = CORPUS / name.replace(":", "_")
        if seeds.is_dir():
            shutil.copytree(seeds, corpus)
        else:
            corpus.mkdir()
        artifacts = work / "artifacts"
        artifacts.mkdir()
        args = [
            f"-max_total_time={seconds}",
            "-rss_limit_mb=2048",
            "-timeout=30",
            f"-artifact_prefix={artifacts}/",
            str(corpus),
        ]
        command = [sys.executable, str(Path(__file__).resolve()), "--child", name, "--", *args]
        limit = seconds + 300  # a hang libFuzzer's own timeouts miss
        proc = subprocess.run(command, capture_output=True, text=True, errors="replace", check=False, timeout=limit)
        output = proc.stdout + proc.stderr
        crashes = sorted(p for p in artifacts.iterdir() if p.is_file())
        failed = proc.returncode != 0 or bool(crashes)
        line = f"fuzz {name}: {_inputs(output)} inputs, {max(len(crashes), 1) if failed else 0} findings"
        if not failed:
            return line, None
        log = "\n".join(line for line in output.splitlines() if not line.startswith("INFO: Instrumenting"))
        report = [f"---- {name} (exit {proc.returncode}) ----", log[-6000:]]
        for crash in crashes:
            report.append(f"  crashing input {crash.name}: {crash.read_bytes()[:500]!r}")
            if findings is not None:
                keep = findings / name.replace(":", "_")
                keep.mkdir(parents=True, exist_ok=True)
                shutil.copy(crash, keep / crash.name)
                report.append(f"  saved {keep / crash.name}")
        return line, "\n".join(report)


def main() -> int:
    if len(sys.argv) > 2 and sys.argv[1] == "--child":
        _child(sys.argv[2], sys.argv[4:])  # argv: --child NAME -- libFuzzer args...
        return 0
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=int, default=5, help="time per target (default 5)")
    parser.add_argument("--only", nargs="+", metavar="NAME", help="run only these targets")
    parser.add_argument("--findings", type=Path, help="keep crashing inputs under DIR/<target>/")
    parser.add_argument("--jobs", type=int, default=min(4, os.cpu_count() or 1), help="targets run at once")
    options = parser.parse_args()

    sys.path.insert(0, str(HERE))
    from targets import TARGETS  # noqa: PLC0415  (the names only: each target runs in its own process)

    names = options.only or list(TARGETS)
    unknown = [name for name in names if name not in TARGETS]
    if unknown:
        parser.error(f"unknown targets: {', '.join(unknown)}; expected some of {', '.join(TARGETS)}")
    start = time.monotonic()
    failed = []
    with ThreadPoolExecutor(max(1, options.jobs)) as pool:
        results = pool.map(lambda name: _run(name, options.seconds, options.findings), names)
        for name, (line, report) in zip(names, results, strict=True):  # in order, as they finish
            print(line, flush=True)
            if report is not None:
                print(report, file=sys.stderr, flush=True)
                failed.append(name)
    print(f"fuzz: {len(names)} targets in {time.monotonic() - start:.0f}s, {len(failed)} with findings")
    if failed:
        print(f"fuzz: findings in {', '.join(failed)}", file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
