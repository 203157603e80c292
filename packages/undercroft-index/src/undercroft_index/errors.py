"""Typed errors of `undercroft_index`."""

__all__ = ["Error"]


class Error(Exception):
    """Base of every error raised by `undercroft_index` (this distribution does not depend on core)."""

    #: "run" (exit 1) or "integrity" (exit 2).
    error_class = "run"
