"""The gateway's counters and timings, served at ``/metrics`` in Prometheus'
text format (no dependency: a few counters and one histogram per route)."""

from __future__ import annotations

from threading import Lock
from typing import Final

# Seconds: the added latency of interest is milliseconds, a request's whole time up to minutes.
BUCKETS: Final[tuple[float, ...]] = (0.001, 0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60)
_HELP: Final[dict[str, str]] = {
    "requests": "Requests answered, by route and status.",
    "turns_kept": "Assistant turns with sealed parts forwarded sealed.",
    "turns_unsealed": "Assistant turns forwarded unsealed, by reason.",
    "recoveries": "Requests sent once more after the provider rejected stale thinking.",
    "passed_through": "Provider API requests thinkseal could not read, forwarded as they came.",
    "answers_cut": "Upstream answers that broke off; the client's answer is broken off too.",
    "request_seconds": "Time from a request's arrival to the end of its answer.",
}


def _labels(labels: dict[str, str]) -> str:
    if not labels:
        return ""
    inner = ",".join(f'{k}="{v}"'.replace("\n", " ") for k, v in sorted(labels.items()))
    return "{" + inner + "}"


class Metrics:
    def __init__(self) -> None:
        self._counters: dict[tuple[str, str], float] = {}
        self._histograms: dict[tuple[str, str], list[float]] = {}
        self._lock = Lock()

    def count(self, name: str, amount: float = 1, **labels: str) -> None:
        key = (name, _labels(labels))
        with self._lock:
            self._counters[key] = self._counters.get(key, 0) + amount

    def observe(self, name: str, value: float, **labels: str) -> None:
        key = (name, _labels(labels))
        with self._lock:
            counts = self._histograms.setdefault(key, [0.0] * (len(BUCKETS) + 2))  # buckets, +Inf, sum
            for i, bound in enumerate(BUCKETS):
                if value <= bound:
                    counts[i] += 1
            counts[len(BUCKETS)] += 1
            counts[-1] += value

    def value(self, name: str, **labels: str) -> float:
        return self._counters.get((name, _labels(labels)), 0)

    def render(self) -> str:
        lines: list[str] = []
        with self._lock:
            counters = sorted(self._counters.items())
            histograms = sorted(self._histograms.items())
        seen: set[str] = set()
        for (name, labels), value in counters:
            metric = f"thinkseal_gateway_{name}_total"
            if metric not in seen:
                seen.add(metric)
                lines += [f"# HELP {metric} {_HELP.get(name, name)}", f"# TYPE {metric} counter"]
            lines.append(f"{metric}{labels} {value:g}")
        for (name, labels), counts in histograms:
            metric = f"thinkseal_gateway_{name}"
            if metric not in seen:
                seen.add(metric)
                lines += [f"# HELP {metric} {_HELP.get(name, name)}", f"# TYPE {metric} histogram"]
            inner = labels[1:-1] + "," if labels else ""
            for bound, count in zip((*BUCKETS, "+Inf"), counts, strict=False):
                lines.append(f'{metric}_bucket{{{inner}le="{bound}"}} {count:g}')
            lines.append(f"{metric}_sum{labels} {counts[-1]:g}")
            lines.append(f"{metric}_count{labels} {counts[len(BUCKETS)]:g}")
        return "\n".join(lines) + "\n"
