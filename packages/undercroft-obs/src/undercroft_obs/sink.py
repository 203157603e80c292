"""The sink interface every signal goes through, the default no-op sink and an in-memory recording sink.

A sink receives signals that the shim has already validated (registered name, metadata-only values).
Sinks may be called from several threads at once; the ones here are thread-safe.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal, Protocol, runtime_checkable

from undercroft_obs._internal.metadata import EventValue

__all__ = ["FanoutSink", "NullSink", "Record", "RecordingSink", "Sink"]

Kind = Literal["event", "counter", "histogram", "gauge"]


@runtime_checkable
class Sink(Protocol):
    """Where validated signals go. Implementations must be thread-safe and must not raise."""

    def event(self, name: str, metadata: Mapping[str, EventValue]) -> None:
        """Receive one discrete event (a live-stream frame)."""

    def counter(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Add `value` (≥ 0) to the counter series `name{labels}`."""

    def histogram(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Record one observation of the histogram series `name{labels}`."""

    def gauge(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Set the gauge series `name{labels}` to `value`."""


class NullSink:
    """The default sink: drops everything. Nothing leaves the process, nothing is kept."""

    def event(self, name: str, metadata: Mapping[str, EventValue]) -> None:
        """Drop an event."""

    def counter(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Drop a counter increment."""

    def histogram(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Drop a histogram observation."""

    def gauge(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Drop a gauge value."""


@dataclass(frozen=True)
class Record:
    """One signal as a `RecordingSink` received it."""

    kind: Kind
    name: str
    value: float | None
    labels: Mapping[str, EventValue] = field(default_factory=dict)


class RecordingSink:
    """Keeps every signal in memory, in arrival order, for tests to assert on."""

    def __init__(self) -> None:
        """Start empty."""
        self._lock = threading.Lock()
        self._records: list[Record] = []

    def _add(self, record: Record) -> None:
        with self._lock:
            self._records.append(record)

    def event(self, name: str, metadata: Mapping[str, EventValue]) -> None:
        """Record an event."""
        self._add(Record("event", name, None, dict(metadata)))

    def counter(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Record a counter increment."""
        self._add(Record("counter", name, value, dict(labels)))

    def histogram(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Record a histogram observation."""
        self._add(Record("histogram", name, value, dict(labels)))

    def gauge(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Record a gauge value."""
        self._add(Record("gauge", name, value, dict(labels)))

    @property
    def records(self) -> tuple[Record, ...]:
        """Every record so far, oldest first (a snapshot)."""
        with self._lock:
            return tuple(self._records)

    def events(self, name: str | None = None) -> list[Mapping[str, EventValue]]:
        """The metadata of every event named `name` (every event when `name` is None), oldest first."""
        return [r.labels for r in self.records if r.kind == "event" and (name is None or r.name == name)]

    def counter_total(self, name: str, **labels: str) -> float:
        """The sum of increments of `name` whose labels include every given `labels` item."""
        return sum(
            r.value or 0.0
            for r in self.records
            if r.kind == "counter" and r.name == name and all(r.labels.get(k) == v for k, v in labels.items())
        )

    def observations(self, name: str, **labels: str) -> list[float]:
        """Every observation of histogram `name` whose labels include every given `labels` item."""
        return [
            r.value or 0.0
            for r in self.records
            if r.kind == "histogram" and r.name == name and all(r.labels.get(k) == v for k, v in labels.items())
        ]

    def gauge_value(self, name: str, **labels: str) -> float | None:
        """The last value set on gauge `name` with exactly `labels`, or None if never set."""
        found: float | None = None
        for r in self.records:
            if r.kind == "gauge" and r.name == name and dict(r.labels) == labels:
                found = r.value
        return found

    def clear(self) -> None:
        """Forget every record."""
        with self._lock:
            self._records.clear()


class FanoutSink:
    """Hands every signal to each of its sinks in order (a server's metric sink beside its live broker)."""

    def __init__(self, *sinks: Sink) -> None:
        """Fan out to ``sinks`` (each must be thread-safe and must not raise, as every sink)."""
        self.sinks = sinks

    def event(self, name: str, metadata: Mapping[str, EventValue]) -> None:
        """Hand an event to every sink."""
        for sink in self.sinks:
            sink.event(name, metadata)

    def counter(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Hand a counter increment to every sink."""
        for sink in self.sinks:
            sink.counter(name, value, labels)

    def histogram(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Hand a histogram observation to every sink."""
        for sink in self.sinks:
            sink.histogram(name, value, labels)

    def gauge(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Hand a gauge value to every sink."""
        for sink in self.sinks:
            sink.gauge(name, value, labels)
