"""Typed errors of `undercroft_obs`."""

__all__ = ["Error", "InvalidMetadata", "UnknownName"]


class Error(Exception):
    """Base of every error raised by `undercroft_obs` (this distribution does not depend on core)."""

    #: "run" (exit 1) or "integrity" (exit 2).
    error_class = "run"


class UnknownName(Error, ValueError):
    """An event or metric name that `undercroft_obs.names` does not register.

    Refused rather than dropped: a series nobody registered would look live at the call site and never
    reach /metrics.
    """


class InvalidMetadata(Error, ValueError):
    """A label or metadata value that is not a short scalar, or a label key the metric does not carry.

    Signals carry metadata only; bytes, long strings and nested structures are how content would leak.
    """
