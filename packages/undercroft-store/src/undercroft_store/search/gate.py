"""The relevance gate: a candidate is admitted on lexical evidence (exact or morphological/typo channel) or on
a cosine at or above the embedder's measured admission gate. ``None`` refuses semantic-only admission.

The gate reads the unaged evidence only: recency orders what passed and never admits or removes anything.
"""

from __future__ import annotations

from typing import Literal

import numpy as np
from numpy.typing import NDArray
from undercroft_core.embedder import Embedder

from undercroft_store.search.errors import InvalidSearch

__all__ = ["admit", "resolve_gate"]


def resolve_gate(embedder: Embedder, declared: float | Literal["off"] | None) -> float | None:
    """The gate in force: a declared cosine, ``off`` (None: lexical channels only), else the embedder's own."""
    if declared == "off":
        return None
    if declared is None:
        return embedder.semantic_admission_gate
    if isinstance(declared, bool) or not isinstance(declared, int | float) or not 0.0 <= declared <= 1.0:
        raise InvalidSearch(f"semantic gate must be a number in 0.0..=1.0 or 'off'; got {declared!r}")
    return float(declared)


def admit(
    exact: NDArray[np.float64], morph: NDArray[np.float64], cosines: NDArray[np.floating], gate: float | None
) -> NDArray[np.bool_]:
    """Which candidates pass: lexical exact or morph evidence, or ``cosine >= gate`` when a gate is set."""
    lexical = (exact > 0.0) | (morph > 0.0)
    if gate is None:
        return lexical
    return lexical | (np.asarray(cosines, dtype=np.float64) >= gate)
