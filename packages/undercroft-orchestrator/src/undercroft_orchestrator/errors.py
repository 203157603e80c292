"""Typed errors of `undercroft_orchestrator`."""

__all__ = ["Error"]


class Error(Exception):
    """Base of every error raised by `undercroft_orchestrator` (this distribution does not depend on core)."""

    #: "run" (exit 1) or "integrity" (exit 2).
    error_class = "run"
