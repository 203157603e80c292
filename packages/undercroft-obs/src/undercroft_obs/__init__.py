"""Undercroft's observability shim: no-op by default.

Producers call `emit`, `increment`, `observe`, `set_gauge` and `timer` with names from
`undercroft_obs.names`; the installed `Sink` receives the validated signals. The default sink drops them,
so nothing is kept and nothing leaves the process unless a telemetry sink is installed.
"""

from undercroft_obs import names
from undercroft_obs.errors import Error, InvalidMetadata, UnknownName
from undercroft_obs.exposition import MetricsSink
from undercroft_obs.names import COUNTER_NAMES, EVENT_NAMES, GAUGE_NAMES, HISTOGRAM_NAMES
from undercroft_obs.shim import current_sink, emit, increment, install_sink, observe, set_gauge, sink_installed, timer
from undercroft_obs.sink import FanoutSink, NullSink, Record, RecordingSink, Sink
from undercroft_obs.tracing import NullTracer, Tracer, current_tracer, install_tracer, span

__version__ = "0.1.0"

__all__ = [
    "COUNTER_NAMES",
    "EVENT_NAMES",
    "GAUGE_NAMES",
    "HISTOGRAM_NAMES",
    "Error",
    "FanoutSink",
    "InvalidMetadata",
    "MetricsSink",
    "NullSink",
    "NullTracer",
    "Record",
    "RecordingSink",
    "Sink",
    "Tracer",
    "UnknownName",
    "__version__",
    "current_sink",
    "current_tracer",
    "emit",
    "increment",
    "install_sink",
    "install_tracer",
    "names",
    "observe",
    "set_gauge",
    "sink_installed",
    "span",
    "timer",
]
