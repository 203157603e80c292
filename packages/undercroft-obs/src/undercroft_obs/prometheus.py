"""The Prometheus exposition of the registered metrics, on ``prometheus-client`` (the ``telemetry`` extra).

`PrometheusSink` is a `Sink`: install it (``undercroft_obs.install_sink``) and every validated signal lands
in its own ``CollectorRegistry`` — one metric object per registered name, with exactly the label keys
`names` declares, so no series can appear that the inventory does not list. ``render()`` is the text a
``/metrics`` scrape returns. ``per_vault_gauges=False`` drops every gauge carrying a ``vault`` label: under
per-vault isolation the scrape must not enumerate tenants. Importing this module without the extra raises
`TelemetryMissing` naming it; nothing else in the distribution imports prometheus-client.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping

from undercroft_obs._internal.metadata import EventValue
from undercroft_obs.errors import Error
from undercroft_obs.exposition import DEFAULT_BUCKETS
from undercroft_obs.names import COUNTER_LABELS, GAUGE_LABELS, HISTOGRAM_LABELS, LABEL_VOCABULARIES

__all__ = ["EXPOSITION_CONTENT_TYPE", "ORCH_PREFIX", "PrometheusSink", "TelemetryMissing"]


class TelemetryMissing(Error):
    """The ``telemetry`` extra is not installed: ``pip install 'undercroft-obs[telemetry]'``."""


try:
    import prometheus_client
    from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
except ImportError:  # pragma: no cover - exercised by the extra-absent test in a subprocess
    raise TelemetryMissing(
        "/metrics needs the telemetry extra: pip install 'undercroft-cli[telemetry]' (prometheus-client)"
    ) from None

# The _created timestamp series double every counter and histogram and no rule reads them.
prometheus_client.disable_created_metrics()  # type: ignore[no-untyped-call]

ORCH_PREFIX = "undercroft_orch_"
"""The control plane's series (its own listener): never in the engine's registry."""

EXPOSITION_CONTENT_TYPE = prometheus_client.CONTENT_TYPE_LATEST
"""The media type of ``render()``'s text."""


def _labelled(metric: Counter | Gauge | Histogram, labels: Mapping[str, str]) -> Counter | Gauge | Histogram:
    return metric.labels(**labels) if labels else metric


class PrometheusSink:
    """Every registered counter, histogram and gauge in one private registry (events are not metrics)."""

    def __init__(self, *, per_vault_gauges: bool = True, control_plane: bool = False) -> None:
        """Register every metric `names` declares for one plane; ``per_vault_gauges=False`` suppresses the vault
        gauges. The engine's registry holds no ``undercroft_orch_*`` series and the control plane's holds only
        those: each process exports what it can move, never a series stuck at zero for another's sake."""
        self.registry = CollectorRegistry(auto_describe=True)
        self.per_vault_gauges = per_vault_gauges

        def mine(name: str) -> bool:
            return name.startswith(ORCH_PREFIX) == control_plane

        counters = {}
        for name, keys in COUNTER_LABELS.items():
            if not mine(name):
                continue
            # prometheus-client appends _total itself; the created-timestamp series are not exported.
            counters[name] = Counter(name.removesuffix("_total"), name, sorted(keys), registry=self.registry)
        self._counters: dict[str, Counter] = counters
        for name, vocabularies in LABEL_VOCABULARIES.items():
            # A counter whose every label is a closed vocabulary starts at 0 on each value: an alert on
            # increase() then fires on the FIRST event, where a series born at 1 would show no increase.
            if name in counters and set(vocabularies) == COUNTER_LABELS[name]:
                ordered = sorted(vocabularies)
                for values in itertools.product(*(sorted(vocabularies[key]) for key in ordered)):
                    counters[name].labels(**dict(zip(ordered, values, strict=True)))
        self._histograms: dict[str, Histogram] = {
            name: Histogram(name, name, sorted(keys), registry=self.registry, buckets=DEFAULT_BUCKETS)
            for name, keys in HISTOGRAM_LABELS.items()
            if mine(name)
        }
        self._gauges: dict[str, Gauge] = {
            name: Gauge(name, name, sorted(keys), registry=self.registry)
            for name, keys in GAUGE_LABELS.items()
            if mine(name)
        }

    def event(self, name: str, metadata: Mapping[str, EventValue]) -> None:
        """Events are the live stream's, not metrics: ignored here."""

    def counter(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Add to the counter series (another plane's counter is not this registry's: ignored)."""
        if name not in self._counters:
            return
        metric = _labelled(self._counters[name], labels)
        assert isinstance(metric, Counter)
        metric.inc(value)

    def histogram(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Observe on the histogram series (another plane's: ignored)."""
        if name not in self._histograms:
            return
        metric = _labelled(self._histograms[name], labels)
        assert isinstance(metric, Histogram)
        metric.observe(value)

    def gauge(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Set the gauge series (dropped when it names a vault and per-vault gauges are suppressed)."""
        if ("vault" in labels and not self.per_vault_gauges) or name not in self._gauges:
            return
        metric = _labelled(self._gauges[name], labels)
        assert isinstance(metric, Gauge)
        metric.set(value)

    def render(self) -> bytes:
        """The registry in the Prometheus text exposition format."""
        return bytes(prometheus_client.generate_latest(self.registry))
