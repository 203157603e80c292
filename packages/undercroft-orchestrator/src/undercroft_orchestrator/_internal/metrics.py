"""The separate metrics listener (``UNDERCROFT_ORCH_METRICS_ADDR``) and the Prometheus meter behind it.

A separate listener because the control plane's own port must be reachable by tenants: a ``/metrics`` path
there would be exposed in every real fleet. Off loopback it requires ``UNDERCROFT_ORCH_METRICS_TOKEN``
(start-up refuses otherwise). Its errors are ``text/plain``, matching the success format it serves.
"""

from __future__ import annotations

import hmac

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import PlainTextResponse, Response
from starlette.routing import Route

from undercroft_orchestrator._internal.meter import Meter
from undercroft_orchestrator.errors import Refused

try:
    from prometheus_client import CollectorRegistry, Counter, Histogram, generate_latest
    from prometheus_client.exposition import CONTENT_TYPE_LATEST
except ImportError:  # pragma: no cover - exercised without the extra in a subprocess
    raise Refused(
        "UNDERCROFT_ORCH_METRICS_ADDR needs the telemetry extra: pip install 'undercroft-orchestrator[telemetry]'"
    ) from None

__all__ = ["PrometheusMeter", "metrics_app"]


class PrometheusMeter(Meter):
    """The four ``undercroft_orch_*`` counters and the request-duration histogram, in a private registry."""

    def __init__(self) -> None:
        """Register the series; no label can name a tenant, a vault or an instance."""
        self.registry = CollectorRegistry(auto_describe=True)
        self._requests = Counter(
            "undercroft_orch_requests", "Requests by route class", ["route"], registry=self.registry
        )
        self._refused = Counter(
            "undercroft_orch_refused_credentials", "Refused credentials by kind", ["kind"], registry=self.registry
        )
        self._rate = Counter("undercroft_orch_rate_limited", "Rate-screen firings", registry=self.registry)
        self._engine = Counter(
            "undercroft_orch_engine_calls", "Engine-call outcomes", ["outcome"], registry=self.registry
        )
        self._duration = Histogram(
            "undercroft_orch_request_duration_seconds",
            "Request duration by route class",
            ["route"],
            registry=self.registry,
        )

    def request(self, route: str, seconds: float) -> None:
        """Count the request and observe its duration."""
        self._requests.labels(route=route).inc()
        self._duration.labels(route=route).observe(seconds)

    def refused(self, kind: str) -> None:
        """Count a refused credential."""
        self._refused.labels(kind=kind).inc()

    def rate_limited(self) -> None:
        """Count a rate-screen firing."""
        self._rate.inc()

    def engine(self, outcome: str) -> None:
        """Count an engine call's outcome."""
        self._engine.labels(outcome=outcome).inc()


def metrics_app(meter: PrometheusMeter, token: str | None) -> Starlette:
    """The listener's application: ``GET /metrics``, behind ``token`` when one is declared."""

    async def metrics(request: Request) -> Response:
        if token is not None:
            scheme, _, presented = request.headers.get("authorization", "").partition(" ")
            if scheme.lower() != "bearer" or not hmac.compare_digest(presented.encode(), token.encode()):
                return PlainTextResponse("unauthorized\n", status_code=401, headers={"WWW-Authenticate": "Bearer"})
        return Response(generate_latest(meter.registry), media_type=CONTENT_TYPE_LATEST)

    return Starlette(routes=[Route("/metrics", metrics, methods=["GET"])])
