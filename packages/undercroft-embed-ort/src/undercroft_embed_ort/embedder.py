"""The ort sentence embedder: the onnx embedder's contract on a tuned runtime (session pool, GPU when present).

Same variables (``UNDERCROFT_ONNX_MODEL`` / ``_TOKENIZER`` / ``_NAME``), same identity for the same files,
same mean-pool + L2 — so switching runtimes is one env change and never a re-embed. It is the onnx embedder
(undercroft-embed-onnx) with two things changed: its sessions come from a `SessionPool` of
``UNDERCROFT_ORT_POOL`` single-thread sessions (a pool of 1 runs one all-core forward per batch; a GPU
provider when onnxruntime reports one), and each call's length-sorted batches fan out across that pool.
"""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import onnxruntime
from undercroft_embed_onnx.embedder import (
    DEFAULT_BATCH_SIZE,
    DEFAULT_MAX_TOKENS,
    MODEL_VARIABLE,
    NAME_VARIABLE,
    TOKENIZER_VARIABLE,
    OnnxEmbedder,
)
from undercroft_embed_onnx.text_model import Mapper, model_file

from undercroft_embed_ort.errors import ModelUnavailable
from undercroft_embed_ort.runtime import SessionPool, pool_size

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MAX_TOKENS",
    "MODEL_VARIABLE",
    "NAME_VARIABLE",
    "TOKENIZER_VARIABLE",
    "OrtEmbedder",
]


class OrtEmbedder(OnnxEmbedder):
    """A sentence embedder on a pool of ONNX Runtime sessions (or one batched all-core / device session)."""

    def __init__(
        self,
        model: Path | str,
        tokenizer: Path | str,
        *,
        name: str | None = None,
        pool: int = 1,
        max_tokens: int = DEFAULT_MAX_TOKENS,
        batch_size: int = DEFAULT_BATCH_SIZE,
        providers: Sequence[str] | None = None,
    ) -> None:
        if pool < 1:
            raise ModelUnavailable(f"pool and batch_size must be at least 1, got {pool} and {batch_size}")
        self._wanted = (pool, None if providers is None else list(providers))
        super().__init__(model, tokenizer, name=name, max_tokens=max_tokens, batch_size=batch_size)

    def _first_session(self, model: Path) -> onnxruntime.InferenceSession | None:
        size, providers = self._wanted
        self._pool = SessionPool(model, MODEL_VARIABLE, size, providers)
        return self._pool.sessions[0]

    def _mapper(self) -> Mapper:
        return self._pool.map

    @classmethod
    def from_env(cls, env: Mapping[str, str] | None = None) -> OrtEmbedder:
        """Build from ``UNDERCROFT_ONNX_MODEL``, ``_TOKENIZER``, ``_NAME`` and ``UNDERCROFT_ORT_POOL``."""
        source = os.environ if env is None else env
        model = model_file(source, MODEL_VARIABLE, "a model.onnx")
        tokenizer = model_file(source, TOKENIZER_VARIABLE, "a tokenizer.json")
        return cls(model, tokenizer, name=source.get(NAME_VARIABLE, "").strip() or None, pool=pool_size(source))

    @property
    def pool_size(self) -> int:
        """Sessions in the pool (1: one batched forward on every core, or on the device)."""
        return self._pool.size

    @property
    def providers(self) -> list[str]:
        """The execution providers the sessions run on, preferred first."""
        return list(self._pool.providers)

    def close(self) -> None:
        """Stop the pool's worker threads."""
        self._pool.close()
