"""Undercroft's in-process model roles tuned on ONNX Runtime."""

from undercroft_embed_ort.errors import Error

__version__ = "0.1.0"

__all__ = ["Error", "__version__"]
