"""A sink that aggregates metrics in memory and renders the Prometheus text exposition format (0.0.4).

Stdlib only: the server that serves /metrics installs it and calls `render()`. Events are not metrics
and are ignored here (the live stream has its own broker).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from typing import Final

from undercroft_obs._internal.metadata import EventValue
from undercroft_obs.names import COUNTER_NAMES, GAUGE_NAMES, HISTOGRAM_NAMES

__all__ = ["DEFAULT_BUCKETS", "MetricsSink"]

#: Histogram upper bounds: seconds from 1 ms to 10 s, which also bucket hit counts usefully.
DEFAULT_BUCKETS: Final = (0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

LabelKey = tuple[tuple[str, str], ...]


def _key(labels: Mapping[str, str]) -> LabelKey:
    return tuple(sorted(labels.items()))


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(key: LabelKey, extra: tuple[str, str] | None = None) -> str:
    pairs = [*key, extra] if extra is not None else list(key)
    if not pairs:
        return ""
    return "{" + ",".join(f'{name}="{_escape(value)}"' for name, value in pairs) + "}"


def _number(value: float) -> str:
    if value == int(value) and abs(value) < 2**53:
        return str(int(value))
    return repr(value)


class MetricsSink:
    """Thread-safe in-memory aggregation of counters, histograms and gauges, rendered on demand."""

    def __init__(self, buckets: tuple[float, ...] = DEFAULT_BUCKETS) -> None:
        """Start empty; `buckets` are the histogram upper bounds (sorted, +Inf implied)."""
        self._lock = threading.Lock()
        self._buckets = tuple(sorted(buckets))
        self._counters: dict[str, dict[LabelKey, float]] = {}
        self._gauges: dict[str, dict[LabelKey, float]] = {}
        # name -> labels -> (bucket counts, sum, count)
        self._histograms: dict[str, dict[LabelKey, tuple[list[int], float, int]]] = {}

    def event(self, name: str, metadata: Mapping[str, EventValue]) -> None:
        """Events are not metrics: ignored."""

    def counter(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Add to a counter series."""
        with self._lock:
            series = self._counters.setdefault(name, {})
            key = _key(labels)
            series[key] = series.get(key, 0.0) + value

    def gauge(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Set a gauge series."""
        with self._lock:
            self._gauges.setdefault(name, {})[_key(labels)] = value

    def histogram(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Record an observation."""
        with self._lock:
            series = self._histograms.setdefault(name, {})
            key = _key(labels)
            counts, total, count = series.get(key, ([0] * len(self._buckets), 0.0, 0))
            for index, bound in enumerate(self._buckets):
                if value <= bound:
                    counts[index] += 1
            series[key] = (counts, total + value, count + 1)

    def render(self) -> str:
        """Every registered series in the text exposition format; unobserved counters render as 0."""
        out: list[str] = []
        with self._lock:
            for name in sorted(COUNTER_NAMES):
                out.append(f"# TYPE {name} counter")
                series = self._counters.get(name) or ({(): 0.0} if name not in self._counters else {})
                for key, value in sorted(series.items()):
                    out.append(f"{name}{_labels(key)} {_number(value)}")
            for name in sorted(HISTOGRAM_NAMES):
                out.append(f"# TYPE {name} histogram")
                for key, (counts, total, count) in sorted(self._histograms.get(name, {}).items()):
                    for bound, bucket in zip(self._buckets, counts, strict=True):
                        out.append(f"{name}_bucket{_labels(key, ('le', repr(bound)))} {bucket}")
                    out.append(f"{name}_bucket{_labels(key, ('le', '+Inf'))} {count}")
                    out.append(f"{name}_sum{_labels(key)} {_number(total)}")
                    out.append(f"{name}_count{_labels(key)} {count}")
            for name in sorted(GAUGE_NAMES):
                if name in self._gauges:
                    out.append(f"# TYPE {name} gauge")
                    for key, value in sorted(self._gauges[name].items()):
                        out.append(f"{name}{_labels(key)} {_number(value)}")
        return "\n".join(out) + "\n"
