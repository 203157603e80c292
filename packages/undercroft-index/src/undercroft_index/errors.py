"""Typed errors of `undercroft_index`."""

__all__ = ["Error", "IndexRefused"]


class Error(Exception):
    """Base of every error raised by `undercroft_index` (this distribution does not depend on core)."""

    #: "run" (exit 1) or "integrity" (exit 2).
    error_class = "run"


class IndexRefused(Error):
    """Input an index cannot take: a wrong shape, a non-finite value, an artifact of the wrong geometry."""
