"""Runs the pytest-benchmark suite and prints the table of docs/performance.md:
per-message costs and ratios against the pure-Python baseline from the same run.

    python benches/report.py            # full run (about a minute)
"""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def main() -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "bench.json"
        cmd = [sys.executable, "-m", "pytest", "-q", str(ROOT / "benches"), "--benchmark-only"]
        cmd.append(f"--benchmark-json={out}")
        subprocess.run(cmd, check=True, cwd=ROOT)
        data = json.loads(out.read_text())
    stats = {b["name"]: b["stats"] for b in data["benchmarks"]}
    extra = {b["name"]: b.get("extra_info", {}) for b in data["benchmarks"]}
    machine = data["machine_info"]
    print(f"machine: {machine.get('cpu', {}).get('brand_raw', '?')}, python {machine['python_version']}")
    print()
    print("| cold fingerprint of every prefix (per message, min of rounds) | µs | vs pure Python |")
    print("|---|---|---|")
    base = stats["test_cold_python_baseline"]["min"] / extra["test_cold_python_baseline"]["messages"]
    for name, label in [
        ("test_cold_python_baseline", "pure Python: orjson + blake3 package"),
        ("test_cold_thinkseal_core[1]", "thinkseal core, 1 thread"),
        ("test_cold_thinkseal_core[2]", "thinkseal core, 2 threads"),
        ("test_cold_conversation_replay[unbound]", "Conversation.replay, all turns unbound (unseal each)"),
        ("test_cold_conversation_replay[bound]", "Conversation.replay, all turns bound and kept"),
    ]:
        if name not in stats:
            continue
        per = stats[name]["min"] / extra[name]["messages"]
        print(f"| {label} | {per * 1e6:.2f} | {base / per:.2f} times |")
    print()
    print("| append one turn + replay decision | min µs | median µs |")
    print("|---|---|---|")
    for n in (100, 1_000, 10_000, 100_000):
        s = stats.get(f"test_append_then_replay[{n}]")
        if s:
            print(f"| n = {n:,} | {s['min'] * 1e6:.1f} | {s['median'] * 1e6:.1f} |")
    print()
    print("| append one turn + Anthropic prepare (body + bytes) | min µs | median µs | min per message |")
    print("|---|---|---|---|")
    for n in (100, 1_000, 10_000, 100_000):
        s = stats.get(f"test_append_then_prepare[{n}]")
        if s:
            print(f"| n = {n:,} | {s['min'] * 1e6:.1f} | {s['median'] * 1e6:.1f} | {s['min'] / n * 1e9:.1f} ns |")
    native, slow = stats.get("test_from_json_native"), stats.get("test_from_json_python_path")
    if native and slow:
        print()
        print("| Conversation.from_json, 1,000 bound messages | min µs per message | vs the Python path |")
        print("|---|---|---|")
        print(f"| Python path (json + message_from_dict) | {slow['min'] / 1e-3:.2f} | 1.00 times |")
        print(f"| native reader | {native['min'] / 1e-3:.2f} | {slow['min'] / native['min']:.2f} times |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
