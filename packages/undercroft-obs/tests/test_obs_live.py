"""The live broker, the fan-out sink, the span shim and the OTLP tracer (policy at construction, a real export)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest
import undercroft_obs as obs
from undercroft_obs import names
from undercroft_obs.broker import Broker, Frame

# --- the broker ------------------------------------------------------------------------------------------


def test_frames_reach_only_the_subscribers_of_their_vault() -> None:
    broker = Broker()
    acme: list[Frame] = []
    other: list[Frame] = []
    subscription = broker.subscribe("acme", acme.append)
    broker.subscribe("other", other.append)
    with obs.sink_installed(obs.FanoutSink(obs.RecordingSink(), broker)):
        obs.emit(names.EVENT_DRAWER_SAVED, vault="acme", wing="w", room="r", deduped=False)
        obs.emit(names.EVENT_KG_TRIPLE, vault="other")
    assert [f.event for f in acme] == ["drawer-saved"] and [f.event for f in other] == ["kg-triple"]
    assert broker.subscribed() == {"acme", "other"}
    broker.unsubscribe(subscription)
    broker.unsubscribe(subscription)  # idempotent
    broker.event(names.EVENT_KG_TRIPLE, {"vault": "acme"})
    assert len(acme) == 1 and broker.subscribed() == {"other"}


def test_the_ring_keeps_the_last_samples_and_the_window_bounds_the_read() -> None:
    broker = Broker(capacity=3)
    for n in range(5):
        broker.event(names.EVENT_SAMPLE, {"vault": "acme", "drawers": n})
    broker.event(names.EVENT_DRAWER_DELETED, {"vault": "acme"})  # not a sample: not kept
    assert [s["drawers"] for s in broker.history("acme")] == [2, 3, 4]
    assert [s["drawers"] for s in broker.history("acme", 2)] == [3, 4]
    assert broker.history("acme", 0) == [] and broker.history("nowhere") == []
    broker.forget("acme")
    assert broker.history("acme") == []
    with pytest.raises(ValueError):
        Broker(capacity=0)


def test_a_broken_subscriber_is_dropped_and_never_fails_the_producer() -> None:
    broker = Broker()

    def broken(_frame: Frame) -> None:
        raise RuntimeError("subscriber gone")

    broker.subscribe("acme", broken)
    kept: list[Frame] = []
    broker.subscribe("acme", kept.append)
    broker.event(names.EVENT_KG_TRIPLE, {"vault": "acme"})  # does not raise
    broker.event(names.EVENT_KG_TRIPLE, {"vault": "acme"})
    assert len(kept) == 2 and broker.subscribed() == {"acme"}
    broker.event(names.EVENT_KG_TRIPLE, {"surface": "drawer"})  # no vault: nobody's frame


# --- the span shim ---------------------------------------------------------------------------------------


def test_spans_take_registered_names_and_declared_scalar_attributes_only() -> None:
    with obs.span(names.SPAN_SEARCH, vault="acme", scoped=True) as span:
        span.set("hits", 3)
        span.set("fusion", None)  # None is omitted
    with pytest.raises(obs.UnknownName), obs.span("query.text"):
        pass
    with pytest.raises(obs.InvalidMetadata), obs.span(names.SPAN_SEARCH, query="periwinkle obelisk"):
        pass
    with pytest.raises(obs.InvalidMetadata), obs.span(names.SPAN_SAVE, vault="x" * 65):
        pass
    with pytest.raises(obs.InvalidMetadata), obs.span(names.SPAN_SAVE, vault=b"bytes"):
        pass
    with obs.span(names.SPAN_SEARCH) as span, pytest.raises(obs.InvalidMetadata):
        span.set("wing", "finance")
    with pytest.raises(TypeError):
        obs.install_tracer(object())  # type: ignore[arg-type]
    assert isinstance(obs.current_tracer(), obs.NullTracer)


# --- the OTLP tracer -------------------------------------------------------------------------------------
otlp = pytest.importorskip("undercroft_obs.telemetry.otlp", reason="the telemetry extra is not installed")
TransportRefused = pytest.importorskip("undercroft_net.errors").TransportRefused


@pytest.mark.parametrize(
    "endpoint",
    [
        "http://example.com:4318",
        "http://10.1.2.3:4318",
        "http://0.0.0.0:4318",
        "http://127.0.0.1@evil.example:4318",
        "http://127.1:4318",
        "ftp://127.0.0.1:4318",
        "",
    ],
)
def test_an_endpoint_off_the_policy_is_refused_at_construction_naming_the_variable(endpoint: str) -> None:
    with pytest.raises(TransportRefused, match="UNDERCROFT_OTLP_ENDPOINT"):
        otlp.OtlpTracer(endpoint)


@pytest.fixture
def receiver() -> Iterator[tuple[str, list[bytes]]]:
    bodies: list[bytes] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:
            bodies.append(self.rfile.read(int(self.headers["Content-Length"])))
            self.send_response(200)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *_args: object) -> None:
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{server.server_address[1]}", bodies
    server.shutdown()


def test_spans_export_nested_with_the_error_class_only(receiver: tuple[str, list[bytes]]) -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    url, bodies = receiver
    tracer = otlp.OtlpTracer(url, service_name="unit")
    previous = obs.install_tracer(tracer)
    try:
        with obs.span(names.SPAN_V1_REQUEST, route="/v1/vaults/{id}/search", method="POST") as root:
            with obs.span(names.SPAN_SEARCH, vault="acme") as inner:
                inner.set("hits", 2)
            root.set("status", 200)
        with pytest.raises(ValueError), obs.span(names.SPAN_SAVE, vault="acme"):
            raise ValueError("zanzibar quokka marmalade")  # a message that could quote content
        assert tracer.flush()
    finally:
        obs.install_tracer(previous)
        tracer.shutdown()
    spans = []
    for body in bodies:
        request = ExportTraceServiceRequest()
        request.ParseFromString(body)
        spans += [s for r in request.resource_spans for scope in r.scope_spans for s in scope.spans]
    by_name = {span.name: span for span in spans}
    assert set(by_name) == {"v1.request", "search", "save"}
    assert by_name["search"].parent_span_id == by_name["v1.request"].span_id
    assert by_name["save"].status.code == 2 and by_name["save"].status.message == "ValueError"
    assert not by_name["save"].events  # no exception event: no message, no traceback
    assert b"zanzibar" not in b"".join(bodies)
