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
from undercroft_embed_onnx.rerankers import (
    COLBERT_MODEL_VARIABLE,
    COLBERT_NAME_VARIABLE,
    COLBERT_QUERY_MODEL_VARIABLE,
    COLBERT_TOKENIZER_VARIABLE,
    RERANK_MODEL_VARIABLE,
    RERANK_NAME_VARIABLE,
    RERANK_TOKENIZER_VARIABLE,
    OnnxCrossEncoder,
    OnnxLateEncoder,
    pair_scores,
)

__version__ = "0.1.0"

__all__ = [
    "COLBERT_MODEL_VARIABLE",
    "COLBERT_NAME_VARIABLE",
    "COLBERT_QUERY_MODEL_VARIABLE",
    "COLBERT_TOKENIZER_VARIABLE",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_TOKENS",
    "MODEL_VARIABLE",
    "NAME_VARIABLE",
    "RERANK_MODEL_VARIABLE",
    "RERANK_NAME_VARIABLE",
    "RERANK_TOKENIZER_VARIABLE",
    "TOKENIZER_VARIABLE",
    "Error",
    "ModelUnavailable",
    "OnnxCrossEncoder",
    "OnnxEmbedder",
    "OnnxLateEncoder",
    "__version__",
    "pair_scores",
    "pooled_rows",
]
