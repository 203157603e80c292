"""The candidate tiers for scale, behind ``UNDERCROFT_RETRIEVAL``: PQ/IVF (sealed at rest) and HNSW (RAM only).

`scaled_tier` builds the tier a declaration names (None: the default full scan). The faiss indexes
themselves live in `undercroft_index`; this package holds what binds them to a vault: the sealed tables
(`kernel.tier_tables`), the exact second stage (`exact`), the tiers (`pq`, `hnsw`) and their verify, repair and rotation
legs (`integrity`). docs/scaling.md is the guide.
"""

from __future__ import annotations

from undercroft_store.search.errors import InvalidSearch
from undercroft_store.search.tiers.hnsw import HnswTier
from undercroft_store.search.tiers.pq import TRAIN_MIN, PQTier, TierOptions

__all__ = ["TRAIN_MIN", "HnswTier", "PQTier", "ScaledTier", "TierOptions", "scaled_tier"]

#: A tier the searcher keeps per handle.
ScaledTier = PQTier | HnswTier


def scaled_tier(retrieval: str | None, options: TierOptions | None = None) -> ScaledTier | None:
    """The tier ``UNDERCROFT_RETRIEVAL`` names: None (unset: full scan), `PQTier` or `HnswTier`.

    ``fde`` is refused with its reason: the tier needs the ColBERT token matrices no ingest stores yet."""
    if retrieval is None:
        return None
    declared = str(retrieval)
    if declared == "pq":
        return PQTier(options)
    if declared == "hnsw":
        return HnswTier()
    if declared == "fde":
        raise InvalidSearch(
            "UNDERCROFT_RETRIEVAL=fde is not built yet: it needs stored ColBERT token matrices; "
            "unset it (full scan) or choose pq"
        )
    raise InvalidSearch(f"UNDERCROFT_RETRIEVAL must be pq, hnsw or fde; got {declared!r}")
