"""What the control plane counts: four counters and one histogram, none with a tenant, vault or name label.

`Meter` is the no-op the process uses unless ``UNDERCROFT_ORCH_METRICS_ADDR`` is declared; then
`undercroft_orchestrator._internal.metrics` supplies the Prometheus-backed one. Labels are closed vocabularies.
"""

from __future__ import annotations

__all__ = ["ENGINE_OUTCOMES", "REFUSAL_KINDS", "ROUTE_CLASSES", "Meter", "route_class"]

ROUTE_CLASSES = ("healthz", "data", "admin", "ui", "other")
REFUSAL_KINDS = ("tenant", "admin")
ENGINE_OUTCOMES = ("ok", "error", "unreachable", "refused")


def route_class(path: str) -> str:
    """The route class a request path belongs to (the only request label the metrics carry)."""
    if path == "/healthz":
        return "healthz"
    head = path.split("/", 2)[1] if path.count("/") >= 1 else ""
    return {"t": "data", "admin": "admin", "ui": "ui"}.get(head, "other")


class Meter:
    """The no-op meter: every call does nothing."""

    def request(self, route: str, seconds: float) -> None:
        """One request of class ``route`` answered after ``seconds``."""

    def refused(self, kind: str) -> None:
        """One refused credential (``tenant`` or ``admin``)."""

    def rate_limited(self) -> None:
        """One request the rate screen turned away."""

    def engine(self, outcome: str) -> None:
        """One call to an engine and how it ended."""
