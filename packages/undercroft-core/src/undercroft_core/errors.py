"""Typed errors shared by every Undercroft distribution that depends on core."""

__all__ = ["IntegrityError", "InvalidInput", "UndercroftError"]


class UndercroftError(Exception):
    """Base of every Undercroft error. A run failure unless a subclass says otherwise."""

    #: The class a surface reports: "run" (exit 1, HTTP 4xx) or "integrity" (exit 2, HTTP 409).
    error_class = "run"


class InvalidInput(UndercroftError, ValueError):
    """A declaration, name, id, vector or body was refused before anything was written."""


class IntegrityError(UndercroftError):
    """An integrity verdict: something at rest failed verification. Exit code 2, HTTP 409."""

    error_class = "integrity"
