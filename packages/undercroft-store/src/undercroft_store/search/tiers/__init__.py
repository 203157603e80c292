"""The candidate tiers for scale, behind ``UNDERCROFT_RETRIEVAL``: PQ/IVF and FDE (sealed at rest), HNSW (RAM only).

`scaled_tier` builds the tier a declaration names (None: the default full scan). The faiss indexes
themselves live in `undercroft_index`; this package holds what binds them to a vault: the sealed tables
(`kernel.tier_tables`, `kernel.fde_tables`), the exact second stage (`exact`), the tiers (`pq`, `fde`, `hnsw`) and
their verify, repair and rotation legs (`integrity`, `fde_integrity`). docs/scaling.md is the guide.
"""

from __future__ import annotations

from undercroft_store.search.errors import InvalidSearch
from undercroft_store.search.tiers.fde import FdeOptions, FdeTier
from undercroft_store.search.tiers.hnsw import HnswTier
from undercroft_store.search.tiers.pq import TRAIN_MIN, PQTier, TierOptions

__all__ = ["TRAIN_MIN", "FdeOptions", "FdeTier", "HnswTier", "PQTier", "ScaledTier", "TierOptions", "scaled_tier"]

#: A tier the searcher keeps per handle.
ScaledTier = PQTier | HnswTier | FdeTier


def scaled_tier(
    retrieval: str | None, options: TierOptions | None = None, fde: FdeOptions | None = None
) -> ScaledTier | None:
    """The tier ``UNDERCROFT_RETRIEVAL`` names: None (unset: full scan), `PQTier`, `HnswTier` or `FdeTier`
    (which needs the handle's late encoder: the searcher refuses it without one, `fde.NEEDS_COLBERT`)."""
    if retrieval is None:
        return None
    declared = str(retrieval)
    if declared == "pq":
        return PQTier(options)
    if declared == "hnsw":
        return HnswTier()
    if declared == "fde":
        return FdeTier(fde)
    raise InvalidSearch(f"UNDERCROFT_RETRIEVAL must be pq, hnsw or fde; got {declared!r}")
