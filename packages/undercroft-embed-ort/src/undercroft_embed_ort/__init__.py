"""Undercroft's in-process model roles tuned on ONNX Runtime: session pool, int8, GPU providers when present."""

from undercroft_embed_ort.embedder import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_TOKENS,
    MODEL_VARIABLE,
    NAME_VARIABLE,
    TOKENIZER_VARIABLE,
    OrtEmbedder,
)
from undercroft_embed_ort.errors import Error, ModelUnavailable
from undercroft_embed_ort.rerankers import (
    COLBERT_MODEL_VARIABLE,
    COLBERT_NAME_VARIABLE,
    COLBERT_QUERY_MODEL_VARIABLE,
    COLBERT_TOKENIZER_VARIABLE,
    RERANK_MODEL_VARIABLE,
    RERANK_NAME_VARIABLE,
    RERANK_TOKENIZER_VARIABLE,
    OrtCrossEncoder,
    OrtLateEncoder,
    pair_scores,
)
from undercroft_embed_ort.runtime import (
    GPU_PROVIDERS,
    POOL_VARIABLE,
    SessionPool,
    pool_size,
    quantise_dynamic,
    select_providers,
)

__version__ = "0.1.0"

__all__ = [
    "COLBERT_MODEL_VARIABLE",
    "COLBERT_NAME_VARIABLE",
    "COLBERT_QUERY_MODEL_VARIABLE",
    "COLBERT_TOKENIZER_VARIABLE",
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_TOKENS",
    "GPU_PROVIDERS",
    "MODEL_VARIABLE",
    "NAME_VARIABLE",
    "POOL_VARIABLE",
    "RERANK_MODEL_VARIABLE",
    "RERANK_NAME_VARIABLE",
    "RERANK_TOKENIZER_VARIABLE",
    "TOKENIZER_VARIABLE",
    "Error",
    "ModelUnavailable",
    "OrtCrossEncoder",
    "OrtEmbedder",
    "OrtLateEncoder",
    "SessionPool",
    "__version__",
    "pair_scores",
    "pool_size",
    "quantise_dynamic",
    "select_providers",
]
