"""Typed errors of `undercroft_orchestrator`, each carrying the exit class the doctrine assigns it."""

from __future__ import annotations

__all__ = ["EngineFailed", "Error", "IntegrityVerdict", "MigrationStopped", "Refused", "StateError"]


class Error(Exception):
    """Base of every error raised by `undercroft_orchestrator` (this distribution does not depend on core)."""

    #: "run" (exit 1) or "integrity" (exit 2).
    error_class = "run"


class Refused(Error):
    """A request or argument the control plane will not act on (a bad name, an unknown tenant, a policy refusal)."""


class StateError(Error):
    """The control plane's own state database cannot be used (wrong key, edited row, read-only replica)."""


class EngineFailed(Error):
    """An engine answered with an error status, or could not be reached; ``status`` is 0 when it did not answer.

    ``kind`` is ``"status"`` (it answered ≥ 400), ``"unreachable"`` or ``"refused"`` (the transport policy
    declined the hop: this process's decision, not an engine outage).
    """

    def __init__(self, message: str, *, status: int = 0, body: object = None, kind: str = "status") -> None:
        """Record the engine's status, decoded body (``None`` when there was none) and the failure's kind."""
        super().__init__(message)
        self.status = status
        self.body = body
        self.kind = kind
        if isinstance(body, dict) and body.get("class") == "integrity":
            self.error_class = "integrity"


class IntegrityVerdict(Error):
    """An engine reported that a vault contradicts itself (a 200 with ``"ok": false``)."""

    error_class = "integrity"


class MigrationStopped(Error):
    """A migration stopped before the flip: the source still serves the tenant and nothing was lost."""

    def __init__(self, message: str, *, judgement: dict[str, object] | None = None, integrity: bool = False) -> None:
        """Record the judgement that stopped it; ``integrity`` when an engine's verdict was the reason."""
        super().__init__(message)
        self.judgement = judgement or {}
        if integrity:
            self.error_class = "integrity"
