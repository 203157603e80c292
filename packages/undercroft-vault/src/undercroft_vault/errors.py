"""Typed errors of `undercroft_vault`."""

from undercroft_core.errors import UndercroftError

__all__ = ["Error"]


class Error(UndercroftError):
    """Base of every error raised by `undercroft_vault`."""
