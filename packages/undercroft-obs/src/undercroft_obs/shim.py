"""The observability shim: the functions producers call, routed to one process-wide sink.

By default the sink is `NullSink` and nothing is kept or sent anywhere. Every call is validated the same
way whatever sink is installed — a registered name, metadata-only values — so a test running on the
default sink still catches a producer that would leak content.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

from undercroft_obs._internal.metadata import validate_event_metadata, validate_labels
from undercroft_obs.errors import InvalidMetadata, UnknownName
from undercroft_obs.names import COUNTER_LABELS, EVENT_NAMES, GAUGE_LABELS, HISTOGRAM_LABELS, LABEL_VOCABULARIES
from undercroft_obs.sink import NullSink, Sink

__all__ = [
    "current_sink",
    "emit",
    "increment",
    "install_sink",
    "observe",
    "set_gauge",
    "sink_installed",
    "timer",
]

_lock = threading.Lock()
_sink: Sink = NullSink()


def install_sink(sink: Sink) -> Sink:
    """Route every later signal to `sink`; return the sink it replaces."""
    global _sink
    if not isinstance(sink, Sink):
        raise TypeError(f"{type(sink).__name__} does not implement the Sink interface")
    with _lock:
        previous, _sink = _sink, sink
    return previous


def current_sink() -> Sink:
    """The sink signals go to now."""
    return _sink


@contextmanager
def sink_installed(sink: Sink) -> Iterator[Sink]:
    """Install `sink` for the duration of a `with` block, then put the previous one back."""
    previous = install_sink(sink)
    try:
        yield sink
    finally:
        install_sink(previous)


def _number(name: str, value: float, *, non_negative: bool) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise InvalidMetadata(f"metric {name!r}: value {value!r} is not a number")
    number = float(value)
    if not math.isfinite(number):
        raise InvalidMetadata(f"metric {name!r}: value {value!r} is not finite")
    if non_negative and number < 0:
        raise InvalidMetadata(f"metric {name!r}: counters only go up; got {value!r}")
    return number


def emit(event: str, /, **metadata: object) -> None:
    """Emit one discrete event (a live-stream frame) carrying metadata only.

    Raises `UnknownName` for an unregistered event and `InvalidMetadata` for a value that is not a short
    scalar (bytes, long text, nested structures).
    """
    if event not in EVENT_NAMES:
        raise UnknownName(f"event {event!r} is not registered in undercroft_obs.names.EVENT_NAMES")
    clean = validate_event_metadata(event, metadata)
    _sink.event(event, clean)


def increment(name: str, value: float = 1, /, **labels: object) -> None:
    """Add `value` (default 1, never negative) to counter `name` with exactly its declared labels."""
    expected = COUNTER_LABELS.get(name)
    if expected is None:
        raise UnknownName(f"counter {name!r} is not registered in undercroft_obs.names.COUNTER_NAMES")
    amount = _number(name, value, non_negative=True)
    clean = validate_labels(name, labels, expected, LABEL_VOCABULARIES.get(name, {}))
    _sink.counter(name, amount, clean)


def observe(name: str, value: float, /, **labels: object) -> None:
    """Record one observation (a duration in seconds, a hit count) of histogram `name`."""
    expected = HISTOGRAM_LABELS.get(name)
    if expected is None:
        raise UnknownName(f"histogram {name!r} is not registered in undercroft_obs.names.HISTOGRAM_NAMES")
    amount = _number(name, value, non_negative=True)
    clean = validate_labels(name, labels, expected, LABEL_VOCABULARIES.get(name, {}))
    _sink.histogram(name, amount, clean)


def set_gauge(name: str, value: float, /, **labels: object) -> None:
    """Set gauge `name` to `value`. An unregistered gauge is refused, never silently dropped."""
    expected = GAUGE_LABELS.get(name)
    if expected is None:
        raise UnknownName(f"gauge {name!r} is not registered in undercroft_obs.names.GAUGE_NAMES")
    amount = _number(name, value, non_negative=False)
    clean = validate_labels(name, labels, expected, LABEL_VOCABULARIES.get(name, {}))
    _sink.gauge(name, amount, clean)


@contextmanager
def timer(name: str, /, *, clock: Callable[[], float] = time.perf_counter, **labels: object) -> Iterator[None]:
    """Observe the duration of a `with` block, in seconds, on histogram `name` (also when the block raises).

    The labels are checked before the block runs, so a bad label fails fast instead of after the work.
    """
    expected = HISTOGRAM_LABELS.get(name)
    if expected is None:
        raise UnknownName(f"histogram {name!r} is not registered in undercroft_obs.names.HISTOGRAM_NAMES")
    validate_labels(name, labels, expected, LABEL_VOCABULARIES.get(name, {}))
    start = clock()
    try:
        yield
    finally:
        observe(name, max(0.0, clock() - start), **labels)
