"""The HNSW candidate tier (``UNDERCROFT_RETRIEVAL=hnsw``): a faiss graph in RAM only, never persisted.

The graph is built from the full-scan tier's decrypt-once matrix and rebuilt whenever the store's generation
moves (HNSW has no deletion); a sealed vault therefore never holds a plaintext-derived index at rest. Only
an unscoped, non-exact draw walks the graph (``ef_search`` scaled with the corpus, `undercroft_index.ef_search`);
a declared scope or an exact plan ranks the scope's cached rows exactly, as the full scan does. The second
stage is exact cosine over the drawn rows. Single-vault only: a multi-tenant server refuses it at start.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray
from undercroft_index import HnswIndex

from undercroft_store.search.candidates import Candidates, EmbeddingCache, FullScanTier, PoolPlan
from undercroft_store.search.tiers.pq import ranked_exact
from undercroft_store.store import VaultStore

__all__ = ["HnswTier"]


class HnswTier:
    """One handle's in-RAM graph over the cached matrix."""

    name = "hnsw"

    def __init__(self) -> None:
        """No graph until the first `prepare`."""
        self._graph: HnswIndex | None = None
        self._built_for: tuple[int, int] | None = None
        self._full: FullScanTier | None = None
        self._seqs = np.zeros(0, dtype=np.int64)
        self._unit = np.zeros((0, 0), dtype=np.float32)
        self.builds = 0

    def prepare(self, store: VaultStore, cache: EmbeddingCache) -> tuple[NDArray[np.int64], HnswTier]:
        """Refresh the matrix from ``cache`` and rebuild the graph if the rows moved."""
        seqs, unit = cache.load(store)
        key = (id(cache), cache.rebuilds)  # every refresh of the matrix counts: a new graph
        if key != self._built_for:
            self._graph = HnswIndex(unit, seqs)
            self._built_for = key
            self.builds += 1
        self._seqs, self._unit = seqs, unit
        self._full = FullScanTier(seqs, unit)
        return seqs, self

    def clear(self) -> None:
        """Drop the graph (a closed vault)."""
        self._graph, self._built_for, self._full = None, None, None

    def candidates(self, query: NDArray[np.float32], scope_seqs: NDArray[np.int64], plan: PoolPlan) -> Candidates:
        """Graph draw for an unscoped wide plan; the exact scan of the scope otherwise."""
        full, graph = self._full, self._graph
        if full is None or graph is None:
            raise RuntimeError("the HNSW tier serves candidates only after prepare()")
        if plan.exact or len(scope_seqs) != len(self._seqs):
            return full.candidates(query, scope_seqs, plan)
        drawn = np.sort(graph.search(query, plan.stage_one))
        rows = np.searchsorted(self._seqs, drawn)
        chosen, cosines = ranked_exact(drawn, self._unit[rows], query, plan.hydrate)
        return Candidates(seqs=chosen, cosines=cosines, stage_one=len(drawn))

    def cosines(self, query: NDArray[np.float32], seqs: NDArray[np.int64]) -> NDArray[np.float32]:
        """Exact cosines from the cached matrix."""
        if self._full is None:
            raise RuntimeError("the HNSW tier serves cosines only after prepare()")
        return self._full.cosines(query, seqs)
