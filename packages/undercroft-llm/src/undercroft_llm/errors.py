"""Typed errors of `undercroft_llm`."""

from undercroft_core.errors import UndercroftError

__all__ = ["Error"]


class Error(UndercroftError):
    """Base of every error raised by `undercroft_llm`."""
