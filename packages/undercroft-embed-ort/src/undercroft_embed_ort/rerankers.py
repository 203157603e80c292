"""The two second-stage roles on the tuned runtime: embed-onnx's cross-encoder and late encoder, pooled.

The cross-encoder is `OnnxCrossEncoder` with its sessions from a `SessionPool` of ``UNDERCROFT_ORT_POOL``
sessions and the candidate pool's length-sorted batches fanned across it (a pool of 1: one batched all-core
forward). The late encoder runs one query forward per search and encodes documents at ingest, where the
embedder already holds the pool: it is embed-onnx's, under this distribution's name. Same variables, same
refusals, the same counted degrades.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path
from typing import Self

import onnxruntime
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
from undercroft_embed_onnx.text_model import Mapper, model_file

from undercroft_embed_ort.runtime import SessionPool, pool_size

__all__ = [
    "COLBERT_MODEL_VARIABLE",
    "COLBERT_NAME_VARIABLE",
    "COLBERT_QUERY_MODEL_VARIABLE",
    "COLBERT_TOKENIZER_VARIABLE",
    "RERANK_MODEL_VARIABLE",
    "RERANK_NAME_VARIABLE",
    "RERANK_TOKENIZER_VARIABLE",
    "OrtCrossEncoder",
    "OrtLateEncoder",
    "pair_scores",
]


class OrtCrossEncoder(OnnxCrossEncoder):
    """A (query, passage) scorer fanned across a session pool; ``UNDERCROFT_RERANK_*`` declare it."""

    def __init__(
        self,
        model: Path | str,
        tokenizer: Path | str,
        *,
        name: str = "onnx-reranker",
        max_tokens: int = 512,
        pool: int = 1,
    ) -> None:
        self._size = pool
        super().__init__(model, tokenizer, name=name, max_tokens=max_tokens)

    def _first_session(self, model: Path) -> onnxruntime.InferenceSession | None:
        self._pool = SessionPool(model, RERANK_MODEL_VARIABLE, self._size)
        return self._pool.sessions[0]

    def _mapper(self) -> Mapper:
        return self._pool.map

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> Self:
        """Build from ``UNDERCROFT_RERANK_MODEL``, ``_TOKENIZER``, ``_NAME`` and ``UNDERCROFT_ORT_POOL``."""
        source = os.environ if env is None else env
        return cls(
            model_file(source, RERANK_MODEL_VARIABLE, "a cross-encoder .onnx"),
            model_file(source, RERANK_TOKENIZER_VARIABLE, "a tokenizer.json"),
            name=source.get(RERANK_NAME_VARIABLE, "").strip() or "onnx-reranker",
            pool=pool_size(source),
        )

    @property
    def pool_size(self) -> int:
        """Sessions the candidate pool's batches fan across (1: one batched all-core forward)."""
        return self._pool.size


class OrtLateEncoder(OnnxLateEncoder):
    """A ColBERT-style token encoder on ONNX Runtime; ``UNDERCROFT_COLBERT_*`` declare it."""
