"""Fusion: ``w·semantic + (0.90−w)·lexical + 0.10·recency`` over verified candidates, and its calibrations.

* The semantic channel is the cosine mapped into [0, 1] with the embedder's floor as the neutral 0.5
  (``undercroft_core.calibrated_semantic_score``; the hash floor 0 gives ``(cos+1)/2`` bit for bit).
* The lexical channel (``bm25``, the default) is the candidate's BM25 as a share of the pool's best, so the
  best lexical match scores 1 and a candidate with no lexical evidence 0. ``legacy`` uses the share of the
  query's distinct terms the candidate holds exactly.
* A (query, candidate) pair sharing no letter script — where no lettered token can match — takes the
  weight ceiling, read from the pair's own bytes (never language detection).
* Recency is the share of the searched scope written after the drawer (write order, never wall-clock age):
  ``recency = 1 − after / scope``. It orders what the gate admitted; it never admits or removes anything.

``rrf`` is refused with a warning by the configuration layer (it measured 7.3 points worse).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final, Literal

import numpy as np
from numpy.typing import NDArray

from undercroft_store.search.errors import InvalidSearch

__all__ = [
    "FUSION_MODES",
    "RECENCY_WEIGHT",
    "WEIGHT_CEILING",
    "WEIGHT_FLOOR",
    "WEIGHT_TOTAL",
    "FusionMode",
    "FusionPolicy",
    "recency_by_share",
    "semantic_scores",
]

FusionMode = Literal["bm25", "legacy"]
#: The fusion modes a search can run.
FUSION_MODES: Final[tuple[FusionMode, ...]] = ("bm25", "legacy")
#: Share of the score the recency channel holds.
RECENCY_WEIGHT: Final = 0.10
#: Semantic + lexical weights always sum to this.
WEIGHT_TOTAL: Final = 0.90
#: Lowest and highest semantic weight any configuration may take (no channel can be retired).
WEIGHT_FLOOR: Final = 0.20
WEIGHT_CEILING: Final = 0.70


def semantic_scores(cosines: NDArray[np.floating], floor: float) -> NDArray[np.float64]:
    """Map cosines into [0, 1] with ``floor`` as the neutral 0.5 (vectorised ``calibrated_semantic_score``)."""
    if not 0.0 <= floor <= 0.98:
        raise InvalidSearch(f"semantic floor must be in [0.0, 0.98], got {floor!r}")
    values = np.clip(np.asarray(cosines, dtype=np.float64), -1.0, 1.0)
    if floor == 0.0:
        return (values + 1.0) / 2.0
    above = 0.5 + 0.5 * (values - floor) / (1.0 - floor)
    below = 0.5 * (values + 1.0) / (floor + 1.0)
    return np.where(values >= floor, above, below)


def recency_by_share(scope_seqs: NDArray[np.int64], candidate_seqs: NDArray[np.int64]) -> NDArray[np.float64]:
    """``1 − (drawers of the scope written after each candidate) / (scope size)``; 0 for an empty scope.

    ``scope_seqs`` must be sorted ascending (write order); a candidate outside the scope is placed by its seq.
    """
    total = len(scope_seqs)
    if total == 0:
        return np.zeros(len(candidate_seqs), dtype=np.float64)
    after = total - np.searchsorted(scope_seqs, candidate_seqs, side="right")
    return 1.0 - after.astype(np.float64) / float(total)


@dataclass(frozen=True, slots=True)
class FusionPolicy:
    """The blend of one search: mode, semantic weight (clamped to 0.20–0.70) and the embedder's floor."""

    mode: FusionMode = "bm25"
    weight: float = 0.55
    floor: float = 0.0

    def __post_init__(self) -> None:
        if self.mode not in FUSION_MODES:
            known = ", ".join(FUSION_MODES)
            raise InvalidSearch(f"fusion must be one of {known}; got {self.mode!r} (rrf was removed)")
        if not isinstance(self.weight, int | float) or not np.isfinite(self.weight):
            raise InvalidSearch(f"fusion weight must be a finite number, got {self.weight!r}")
        object.__setattr__(self, "weight", float(min(WEIGHT_CEILING, max(WEIGHT_FLOOR, self.weight))))

    def weights(
        self, query_scripts: frozenset[str], candidate_scripts: Sequence[frozenset[str]]
    ) -> NDArray[np.float64]:
        """Per-candidate semantic weight: the ceiling for a script-disjoint pair, else the policy's weight."""
        count = len(candidate_scripts)
        if not query_scripts:
            return np.full(count, self.weight, dtype=np.float64)
        # C-level maps (no Python frame per candidate): a candidate with no script never takes the ceiling.
        disjoint = np.fromiter(map(query_scripts.isdisjoint, candidate_scripts), dtype=bool, count=count)
        disjoint &= np.fromiter(map(bool, candidate_scripts), dtype=bool, count=count)
        return np.where(disjoint, WEIGHT_CEILING, self.weight)

    def lexical_channel(self, total: NDArray[np.float64], coverage: NDArray[np.float64]) -> NDArray[np.float64]:
        """The lexical score in [0, 1]: BM25 as a share of the pool's best (``bm25``), or term coverage (``legacy``)."""
        if self.mode == "legacy":
            return coverage
        best = float(total.max()) if len(total) else 0.0
        return total / best if best > 0.0 else np.zeros_like(total)

    def fuse(
        self,
        semantic: NDArray[np.float64],
        lexical: NDArray[np.float64],
        recency: NDArray[np.float64],
        weights: NDArray[np.float64],
    ) -> NDArray[np.float64]:
        """``w·semantic + (0.90−w)·lexical + 0.10·recency``, per candidate."""
        return weights * semantic + (WEIGHT_TOTAL - weights) * lexical + RECENCY_WEIGHT * recency
