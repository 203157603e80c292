"""MaxSim, the late-interaction score: Σ over query tokens of the best dot product with any document token."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

from undercroft_core.errors import InvalidInput

__all__ = ["maxsim", "maxsim_many"]


def _matrix(value: NDArray[np.floating], what: str, dimension: int | None = None) -> NDArray[np.float32]:
    array = np.asarray(value, dtype=np.float32)
    if array.ndim != 2:
        raise InvalidInput(f"{what} must be a (tokens, dimension) matrix, got {array.ndim} dimensions")
    if dimension is not None and array.shape[1] != dimension:
        raise InvalidInput(f"{what} has dimension {array.shape[1]}, the query has {dimension}")
    return array


def maxsim(query: NDArray[np.floating], document: NDArray[np.floating]) -> float:
    """MaxSim of one query token matrix against one document token matrix (0.0 if either has no tokens)."""
    q = _matrix(query, "query")
    d = _matrix(document, "document", q.shape[1])
    if q.shape[0] == 0 or d.shape[0] == 0:
        return 0.0
    return float((q @ d.T).max(axis=1).astype(np.float64).sum())


def maxsim_many(query: NDArray[np.floating], documents: Sequence[NDArray[np.floating]]) -> NDArray[np.float64]:
    """MaxSim of one query against each document, in one matrix product (documents with no tokens score 0)."""
    q = _matrix(query, "query")
    scores = np.zeros(len(documents), dtype=np.float64)
    matrices = [_matrix(document, "document", q.shape[1]) for document in documents]
    present = [index for index, matrix in enumerate(matrices) if matrix.shape[0] > 0]
    if not present or q.shape[0] == 0:
        return scores
    stacked = np.concatenate([matrices[index] for index in present])
    lengths = np.array([matrices[index].shape[0] for index in present])
    offsets = np.concatenate(([0], np.cumsum(lengths)[:-1]))
    similarities = stacked @ q.T
    best = np.maximum.reduceat(similarities, offsets, axis=0)
    scores[present] = best.astype(np.float64).sum(axis=1)
    return scores
