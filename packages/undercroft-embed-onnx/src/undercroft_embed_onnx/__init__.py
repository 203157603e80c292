"""Undercroft's in-process model roles on the portable CPU path: one onnxruntime CPU session per role."""

from undercroft_embed_onnx.embedder import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_TOKENS,
    MODEL_VARIABLE,
    NAME_VARIABLE,
    TOKENIZER_VARIABLE,
    OnnxEmbedder,
    pooled_rows,
)
from undercroft_embed_onnx.errors import Error, ModelUnavailable

__version__ = "0.1.0"

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_TOKENS",
    "MODEL_VARIABLE",
    "NAME_VARIABLE",
    "TOKENIZER_VARIABLE",
    "Error",
    "ModelUnavailable",
    "OnnxEmbedder",
    "__version__",
    "pooled_rows",
]
