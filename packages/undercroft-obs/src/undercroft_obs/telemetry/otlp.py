"""OTLP/HTTP trace export on opentelemetry-sdk (the ``telemetry`` extra), over a policed ``undercroft_net`` client.

`OtlpTracer` is a `Tracer`: install it (``undercroft_obs.install_tracer``) and every `span` block becomes an
SDK span, nested through the SDK's context, batched on the SDK's export thread and POSTed as an OTLP protobuf
``ExportTraceServiceRequest`` to ``<endpoint>/v1/traces``. The HTTP leg is `undercroft_net`'s policed client,
not the SDK exporter's own session: the endpoint is policed at construction (https to anywhere, http to
loopback only, no override; a refusal names ``UNDERCROFT_OTLP_ENDPOINT``), a ``UNDERCROFT_OTLP_CA`` pin is the
only trust root, redirects are policed and never downgrade, no proxy or CA is read from the environment.
A span carries only the attributes `names.SPAN_ATTRIBUTES` declares (validated by the shim), plus the SDK's
timings and the resource's ``service.name``. Importing this module without the extra raises
`TelemetryMissing`.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator, Mapping, Sequence
from contextlib import AbstractContextManager, contextmanager
from pathlib import Path

from undercroft_obs.errors import Error
from undercroft_obs.tracing import SpanHandle, SpanValue

__all__ = ["DEFAULT_SERVICE_NAME", "TRACES_PATH", "OtlpTracer", "TelemetryMissing"]


class TelemetryMissing(Error):
    """The ``telemetry`` extra is not installed: ``pip install 'undercroft-obs[telemetry]'``."""


try:
    from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
    from opentelemetry.sdk.trace.export import BatchSpanProcessor, SpanExporter, SpanExportResult
    from opentelemetry.trace import Span, Status, StatusCode
except ImportError:  # pragma: no cover - exercised by the extra-absent test in a subprocess
    raise TelemetryMissing(
        "UNDERCROFT_OTLP_ENDPOINT needs the telemetry extra: pip install 'undercroft-cli[telemetry]' "
        "(opentelemetry-sdk, opentelemetry-exporter-otlp-proto-http)"
    ) from None

from undercroft_net.client import policed_client  # noqa: E402 -- after the extra's import check
from undercroft_net.policy import CaPin, load_pin, police  # noqa: E402

TRACES_PATH = "/v1/traces"
"""Where OTLP/HTTP receives traces, below the declared endpoint."""

DEFAULT_SERVICE_NAME = "undercroft"
"""``service.name`` when ``UNDERCROFT_SERVICE_NAME`` is not declared."""

VARIABLE = "UNDERCROFT_OTLP_ENDPOINT"

log = logging.getLogger("undercroft.otlp")


class _PolicedExporter(SpanExporter):
    """The SDK's span encoding, POSTed through the policed client (one request per batch, never retried)."""

    def __init__(self, url: str, *, pin: CaPin | None, headers: Mapping[str, str], timeout: float) -> None:
        endpoint = police(url, variable=VARIABLE, pin=pin)
        self._path = endpoint.url.rstrip("/") + TRACES_PATH
        self._client = policed_client(endpoint, timeout=timeout, retries=0, headers=dict(headers))
        self.failures = 0

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        body = encode_spans(spans).SerializeToString()
        try:
            reply = self._client.post(self._path, content=body, headers={"Content-Type": "application/x-protobuf"})
        except Exception as failure:  # noqa: BLE001 -- an unreachable collector must never fail a request
            self.failures += 1
            log.warning("OTLP export failed: %s", type(failure).__name__)
            return SpanExportResult.FAILURE
        if reply.status_code >= 300:
            self.failures += 1
            log.warning("OTLP export refused: HTTP %d", reply.status_code)
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        self._client.close()

    def force_flush(self, timeout_millis: int = 30_000) -> bool:
        return True


class _Handle:
    def __init__(self, span: Span) -> None:
        self._span = span

    def set(self, key: str, value: SpanValue) -> None:
        self._span.set_attribute(key, value)


class OtlpTracer:
    """Spans to an OTLP/HTTP collector; policed at construction, so a bad declaration refuses at start."""

    def __init__(
        self,
        endpoint: str,
        *,
        pin: str | Path | None = None,
        headers: Mapping[str, str] | None = None,
        service_name: str = DEFAULT_SERVICE_NAME,
        timeout: float = 10.0,
        schedule_delay_ms: int = 1000,
    ) -> None:
        """Police ``endpoint`` (raises ``TransportRefused`` naming the variable) and start the export thread.

        ``pin`` is the ``UNDERCROFT_OTLP_CA`` file: its certificates become the only roots for the collector.
        """
        loaded = None if pin is None else load_pin(pin, variable="UNDERCROFT_OTLP_CA")
        self.exporter = _PolicedExporter(endpoint, pin=loaded, headers=headers or {}, timeout=timeout)
        self.provider = TracerProvider(resource=Resource.create({"service.name": service_name}))
        self.provider.add_span_processor(BatchSpanProcessor(self.exporter, schedule_delay_millis=schedule_delay_ms))
        self._tracer = self.provider.get_tracer("undercroft")

    def start(self, name: str, attributes: Mapping[str, SpanValue]) -> AbstractContextManager[SpanHandle]:
        """Open an SDK span nested under the current one; an exception marks it an error (its class only)."""
        return self._span(name, attributes)

    @contextmanager
    def _span(self, name: str, attributes: Mapping[str, SpanValue]) -> Iterator[SpanHandle]:
        # record_exception would attach the message and traceback, which can quote content: the class only.
        with self._tracer.start_as_current_span(
            name, attributes=dict(attributes), record_exception=False, set_status_on_exception=False
        ) as span:
            try:
                yield _Handle(span)
            except BaseException as failure:
                span.set_status(Status(StatusCode.ERROR, type(failure).__name__))
                raise

    def flush(self, timeout_ms: int = 5000) -> bool:
        """Export every finished span now."""
        return bool(self.provider.force_flush(timeout_ms))

    def shutdown(self) -> None:
        """Flush and stop the export thread."""
        self.provider.shutdown()
