"""An in-RAM HNSW graph over unit vectors (faiss), never serialised: the caller rebuilds it from its own rows.

Built for single-vault processes: the graph is plaintext-derived, so it is kept in memory only and has no
`to_bytes`. ``ef_search`` scales with the corpus and never drops below the candidates asked for.
"""

from __future__ import annotations

import math
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import NDArray

from undercroft_index.errors import IndexRefused
from undercroft_index.pq import load_faiss

if TYPE_CHECKING:
    pass

__all__ = ["HnswIndex", "ef_search"]

#: Graph degree (faiss's ``M``).
_DEGREE: Final = 32
_EF_CONSTRUCTION: Final = 80


def ef_search(population: int, k: int) -> int:
    """The search beam: at least ``k``, and ``16·log2(N)`` candidates more as the corpus grows."""
    return max(k, 64, k + 16 * max(1, math.ceil(math.log2(max(2, population)))))


class HnswIndex:
    """An HNSW graph whose row ``i`` is the caller's ``ids[i]``; rebuilt whole when the rows change."""

    def __init__(self, vectors: NDArray[np.float32], ids: NDArray[np.int64]) -> None:
        """Build the graph over unit ``vectors`` (one per id)."""
        rows = np.ascontiguousarray(vectors, dtype=np.float32)
        if rows.ndim != 2 or len(rows) != len(ids):
            raise IndexRefused(f"vectors of shape {rows.shape} do not fit {len(ids)} ids")
        self._ids = np.ascontiguousarray(ids, dtype=np.int64)
        self._graph = load_faiss().IndexHNSWFlat(rows.shape[1], _DEGREE, load_faiss().METRIC_INNER_PRODUCT)
        self._graph.hnsw.efConstruction = _EF_CONSTRUCTION
        if len(rows):
            self._graph.add(rows)

    @property
    def size(self) -> int:
        """Vectors in the graph."""
        return len(self._ids)

    def search(self, query: NDArray[np.float32], k: int) -> NDArray[np.int64]:
        """Up to ``k`` ids most similar to ``query`` (beam from `ef_search`)."""
        if k < 1 or not self.size:
            return np.zeros(0, dtype=np.int64)
        params: Any = load_faiss().SearchParametersHNSW()
        params.efSearch = ef_search(self.size, k)
        vector = np.ascontiguousarray(query.reshape(1, -1), dtype=np.float32)
        _, rows = self._graph.search(vector, min(k, self.size), params=params)
        found = rows[0][rows[0] >= 0]
        picked: NDArray[np.int64] = self._ids[found]
        return picked
