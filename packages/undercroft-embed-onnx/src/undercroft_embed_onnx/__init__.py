"""Undercroft's in-process model roles on the portable CPU path."""

from undercroft_embed_onnx.errors import Error

__version__ = "0.1.0"

__all__ = ["Error", "__version__"]
