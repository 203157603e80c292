"""Typed errors of `undercroft_embed_ort`."""

from undercroft_core.errors import UndercroftError

__all__ = ["Error", "ModelUnavailable"]


class Error(UndercroftError):
    """Base of every error raised by `undercroft_embed_ort`."""


class ModelUnavailable(Error):
    """A model or tokenizer file is missing or unloadable; the message names the variable that points at it."""
