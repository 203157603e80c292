"""The in-process model roles beside the embedder: a cross-encoder and a ColBERT-style late encoder.

One interface per role, implemented by the onnx and ort distributions and injected by the composition root;
the store never imports a model distribution. Every role degrades instead of failing: a failed or raising
inference becomes a counted 0.0 score (``rerank_failures``) or an empty token matrix (``late_failures``),
exactly as a failed embed becomes a counted zero vector. :func:`mean_pool` is the sentence-embedder head
both runtimes share (attention-masked mean over the token states, then L2).
"""

from __future__ import annotations

import threading
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np
from numpy.typing import NDArray

from undercroft_core.embedder import check_texts
from undercroft_core.errors import InvalidInput

__all__ = [
    "CrossEncoder",
    "DegradingCrossEncoder",
    "DegradingLateEncoder",
    "LateEncoder",
    "mean_pool",
]


def mean_pool(hidden: NDArray[np.floating], mask: NDArray[np.integer]) -> NDArray[np.float32]:
    """Attention-masked mean of ``hidden`` ``(batch, tokens, dim)`` over tokens, L2-normalised per row.

    A row whose mask is all zero, or whose mean is the zero vector, stays zero (never NaN).
    """
    states = np.asarray(hidden, dtype=np.float32)
    weights = np.asarray(mask, dtype=np.float32)
    if states.ndim != 3 or weights.shape != states.shape[:2]:
        raise InvalidInput(
            f"mean_pool needs (batch, tokens, dim) states and a (batch, tokens) mask, got "
            f"{states.shape} and {weights.shape}"
        )
    summed = np.einsum("btd,bt->bd", states, weights)
    counts = np.maximum(weights.sum(axis=1, keepdims=True), 1.0)
    pooled = summed / counts
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return np.ascontiguousarray(pooled / np.where(norms > 0.0, norms, 1.0), dtype=np.float32)


@runtime_checkable
class CrossEncoder(Protocol):
    """Scores (query, passage) pairs jointly; higher is more relevant."""

    @property
    def name(self) -> str:
        """The identity this role records for itself (UNDERCROFT_RERANK_NAME)."""
        ...

    @property
    def rerank_failures(self) -> int:
        """How many pair scores degraded to 0.0 over this object's life."""
        ...

    def score(self, query: str, passages: Sequence[str]) -> NDArray[np.float32]:
        """One score per passage, in order; a failed pair scores 0.0 and is counted."""
        ...


@runtime_checkable
class LateEncoder(Protocol):
    """Encodes text into a token matrix, one side for queries and one for documents (MaxSim rescoring)."""

    @property
    def name(self) -> str:
        """The identity this role records for itself (UNDERCROFT_COLBERT_NAME)."""
        ...

    @property
    def dimension(self) -> int:
        """Width of every token vector."""
        ...

    @property
    def late_failures(self) -> int:
        """How many matrices degraded to empty over this object's life."""
        ...

    def encode_query(self, text: str) -> NDArray[np.float32]:
        """The query's ``(tokens, dimension)`` matrix, rows L2-normalised; empty on a counted failure."""
        ...

    def encode_documents(self, texts: Sequence[str]) -> list[NDArray[np.float32]]:
        """One ``(tokens, dimension)`` matrix per text; a failed text gives an empty matrix and is counted."""
        ...


class _Counted:
    def __init__(self) -> None:
        self._failures = 0
        self._lock = threading.Lock()
        self.last_failure: str | None = None

    def _record(self, count: int, reason: str) -> None:
        with self._lock:
            self._failures += count
            self.last_failure = reason


class DegradingCrossEncoder(_Counted, ABC):
    """Base of a cross-encoder whose failures degrade to counted 0.0 scores (a batch retried pair by pair)."""

    def __init__(self, name: str) -> None:
        super().__init__()
        self._name = name

    @property
    def name(self) -> str:
        """The identity this role records for itself."""
        return self._name

    @property
    def rerank_failures(self) -> int:
        """How many pair scores degraded to 0.0."""
        return self._failures

    @abstractmethod
    def _score_batch(self, query: str, passages: list[str]) -> NDArray[np.floating]:
        """One raw score per passage (may raise; the caller degrades)."""

    def _attempt(self, query: str, passages: list[str]) -> NDArray[np.float32] | str:
        try:
            raw = np.asarray(self._score_batch(query, passages))
        except Exception as error:  # noqa: BLE001 - any inference failure degrades; it must not fail a search
            return f"{type(error).__name__}: {error}"
        flat = raw.reshape(-1) if raw.size == len(passages) else raw
        if flat.shape != (len(passages),) or flat.dtype.kind != "f":
            return f"cross-encoder returned shape {raw.shape} dtype {raw.dtype}, expected ({len(passages)},)"
        return flat.astype(np.float32)

    def score(self, query: str, passages: Sequence[str]) -> NDArray[np.float32]:
        """One score per passage; failed or non-finite pairs score 0.0 and are counted, never raised."""
        if not isinstance(query, str):
            raise InvalidInput(f"query must be a string, got {type(query).__name__}")
        batch = check_texts(passages)
        if not batch:
            return np.zeros(0, dtype=np.float32)
        result = self._attempt(query, batch)
        if isinstance(result, str):
            values = []
            for passage in batch:
                single = self._attempt(query, [passage])
                if isinstance(single, str):
                    self._record(1, single)
                    values.append(0.0)
                else:
                    values.append(float(single[0]))
            result = np.asarray(values, dtype=np.float32)
        finite = np.isfinite(result)
        if not finite.all():
            bad = int((~finite).sum())
            result = np.where(finite, result, np.float32(0.0)).astype(np.float32)
            self._record(bad, f"{bad} non-finite score(s)")
        return result


class DegradingLateEncoder(_Counted, ABC):
    """Base of a late encoder whose failures degrade to counted empty matrices (a batch retried text by text)."""

    def __init__(self, name: str, dimension: int) -> None:
        super().__init__()
        self._name = name
        self._dimension = dimension

    @property
    def name(self) -> str:
        """The identity this role records for itself."""
        return self._name

    @property
    def dimension(self) -> int:
        """Width of every token vector."""
        return self._dimension

    @property
    def late_failures(self) -> int:
        """How many matrices degraded to empty."""
        return self._failures

    @abstractmethod
    def _encode_batch(self, texts: list[str], *, query: bool) -> list[NDArray[np.floating]]:
        """One raw token matrix per text (may raise; the caller degrades)."""

    def _empty(self) -> NDArray[np.float32]:
        return np.zeros((0, self._dimension), dtype=np.float32)

    def _clean(self, matrix: NDArray[np.floating]) -> NDArray[np.float32] | str:
        array = np.asarray(matrix)
        if array.ndim != 2 or array.shape[1] != self._dimension or array.dtype.kind != "f":
            expected = f"(tokens, {self._dimension})"
            return f"late encoder returned shape {array.shape} dtype {array.dtype}, expected {expected}"
        if not np.isfinite(array).all():
            return "non-finite token matrix"
        norms = np.linalg.norm(array, axis=1, keepdims=True)
        return np.ascontiguousarray(array / np.where(norms > 0.0, norms, 1.0), dtype=np.float32)

    def _attempt(self, texts: list[str], *, query: bool) -> list[NDArray[np.float32] | str] | str:
        try:
            raw = self._encode_batch(texts, query=query)
        except Exception as error:  # noqa: BLE001 - any inference failure degrades; it must not fail a write
            return f"{type(error).__name__}: {error}"
        if len(raw) != len(texts):
            return f"late encoder returned {len(raw)} matrices for {len(texts)} texts"
        return [self._clean(matrix) for matrix in raw]

    def _encode(self, texts: list[str], *, query: bool) -> list[NDArray[np.float32]]:
        result = self._attempt(texts, query=query)
        if isinstance(result, str):
            result = []
            for text in texts:
                single = self._attempt([text], query=query)
                result.append(single if isinstance(single, str) else single[0])
        matrices: list[NDArray[np.float32]] = []
        for item in result:
            if isinstance(item, str):
                self._record(1, item)
                matrices.append(self._empty())
            else:
                matrices.append(item)
        return matrices

    def encode_query(self, text: str) -> NDArray[np.float32]:
        """The query side's token matrix (rows L2-normalised); empty and counted on failure."""
        return self._encode(check_texts([text]), query=True)[0]

    def encode_documents(self, texts: Sequence[str]) -> list[NDArray[np.float32]]:
        """The document side's token matrices; a failed text gives an empty matrix and is counted."""
        batch = check_texts(texts)
        return self._encode(batch, query=False) if batch else []
