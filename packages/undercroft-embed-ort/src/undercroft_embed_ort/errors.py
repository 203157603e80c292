"""Typed errors of `undercroft_embed_ort`: embed-onnx's own, since this distribution is those roles tuned.

The shared glue (undercroft_embed_onnx.text_model) raises them, so catching `ModelUnavailable` from either
import name catches every refusal of either runtime.
"""

from undercroft_embed_onnx.errors import Error, ModelUnavailable

__all__ = ["Error", "ModelUnavailable"]
