"""The rescore tier: a cross-encoder re-orders the top of the fused ranking (``UNDERCROFT_RERANKER=onnx|ort``).

After fusion, the gate and the window promotion have ordered the admitted pool, the first
``UNDERCROFT_RERANK_TOP_N`` positions are scored by the injected `CrossEncoder` as (query, content) pairs in
one call (the role batches them) and re-ordered by that score; everything below the window keeps its fused
place, so the stage changes order, never membership. The store never builds the model: the composition root
attaches one to the handle (`VaultStore.attach_cross_encoder`) and `Searcher.from_settings` picks it up.

A failure never costs a result. The role already degrades a failed pair to a counted 0.0; here any failure
inside one search (the role's counter moved, or it raised despite its contract) keeps the whole window in its
fused order — a 0.0 among real logits would otherwise move that candidate on noise — and the count
(``rerank_failures`` on every stats surface) says it happened.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import undercroft_obs as obs
from undercroft_core.model_roles import CrossEncoder
from undercroft_obs import names

from undercroft_store.search.errors import InvalidSearch

__all__ = ["CrossEncoderRescore"]

_log = logging.getLogger(__name__)


@dataclass
class CrossEncoderRescore:
    """Re-order the top ``top_n`` fused positions by ``encoder``'s (query, passage) score."""

    encoder: CrossEncoder
    top_n: int = 50
    #: The runtime the role runs on (``onnx`` / ``ort``), the one label of ``rerank_failures_total``.
    backend: str = "onnx"
    #: Searches whose window kept its fused order because the role failed inside them.
    kept_fused: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.top_n, bool) or not isinstance(self.top_n, int) or self.top_n < 1:
            raise InvalidSearch(f"the rerank depth must be a positive integer, got {self.top_n!r}")

    def reorder(
        self,
        query: str,
        positions: Sequence[int],
        content_of: Callable[[Sequence[int]], Sequence[str | None]],
        *,
        demoted: Callable[[int], bool] = lambda _position: False,
    ) -> list[int]:
        """``positions`` (best first) with the first ``top_n`` re-ordered by the cross-encoder.

        ``content_of`` returns each window position's verified content (None: it vanished; it keeps its
        place). ``demoted`` positions (outside a promoted date window) stay below the promoted ones, as fusion
        placed them. Ties keep fused order (a stable sort)."""
        window = list(positions[: self.top_n])
        if len(window) < 2:
            return list(positions)
        contents = list(content_of(window))
        scorable = [index for index, text in enumerate(contents) if text is not None]
        before = self.encoder.rerank_failures
        try:
            scores = np.asarray(self.encoder.score(query, [str(contents[index]) for index in scorable]))
        except Exception as error:  # noqa: BLE001 - a role that breaks its no-raise contract still costs no result
            _log.warning("rerank failed, fused order kept: %s: %s", type(error).__name__, error)
            self.kept_fused += 1
            return list(positions)
        failed = self.encoder.rerank_failures - before
        if failed > 0 or scores.shape != (len(scorable),):
            if failed > 0 and self.backend in names.RERANK_BACKENDS:
                obs.increment(names.RERANK_FAILURES_TOTAL, failed, backend=self.backend)
            self.kept_fused += 1
            return list(positions)
        keyed = {window[index]: float(score) for index, score in zip(scorable, scores, strict=True)}
        # Vanished positions sort last within their band; the sort is stable, so ties keep fused order.
        reordered = sorted(
            window,
            key=lambda position: (demoted(position), position not in keyed, -keyed.get(position, 0.0)),
        )
        return reordered + list(positions[self.top_n :])
