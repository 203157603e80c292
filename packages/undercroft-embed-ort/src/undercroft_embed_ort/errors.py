"""Typed errors of `undercroft_embed_ort`."""

from undercroft_core.errors import UndercroftError

__all__ = ["Error"]


class Error(UndercroftError):
    """Base of every error raised by `undercroft_embed_ort`."""
