"""The late-interaction stage: MaxSim over stored token matrices re-orders the top of the fused ranking
(``UNDERCROFT_RERANKER=colbert|colbert-ort``).

The composition root attaches a `LateEncoder` to the handle (`VaultStore.attach_late_encoder`); from then on
every write stores each drawer's document-side matrix sealed under ``{id}/tok`` (`kernel.token_table`), and
`Searcher.from_settings` builds this stage. A search encodes the query once (its query side), reads the
stored matrices of the first ``UNDERCROFT_LATE_TOP_N`` fused positions, and re-orders them by MaxSim
(`undercroft_core.maxsim_many`); everything below the window keeps its fused place, so the stage changes
order, never membership.

A stored matrix is used only when it opens under its drawer's domain AND is current: made by this encoder
from exactly the verified content being ranked (the digest inside the seal). A drawer with no matrix, a stale
one, or one that fails its seal is encoded from its verified content in RAM for this search (counted in
``encoded_at_query``; never stored here — ``repair --tokens`` backfills, verify names a failed seal), so a
damaged or missing row costs time, never a wrong score. A failed query encoding (the role's counted empty
matrix) keeps the whole window in fused order, as a failed cross-encoder does (`search.rescore`).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import undercroft_obs as obs
from numpy.typing import NDArray
from undercroft_core.late_interaction import maxsim_many
from undercroft_core.model_roles import LateEncoder
from undercroft_obs import names

from undercroft_store.search.errors import InvalidSearch
from undercroft_store.store import VaultStore

__all__ = ["LateRescore"]

_log = logging.getLogger(__name__)


@dataclass
class LateRescore:
    """Re-order the top ``top_n`` fused positions by MaxSim of the query's tokens over each stored matrix."""

    store: VaultStore
    encoder: LateEncoder
    top_n: int = 200
    #: The runtime the role runs on (``onnx`` for colbert, ``ort`` for colbert-ort): ``late_failures_total``'s
    #: backend label.
    backend: str = "onnx"
    #: Searches whose window kept its fused order because the query's encoding failed.
    kept_fused: int = 0
    #: Candidates scored from a stored matrix, and those encoded in RAM because none current was stored.
    scored_from_store: int = 0
    encoded_at_query: int = 0

    def __post_init__(self) -> None:
        if isinstance(self.top_n, bool) or not isinstance(self.top_n, int) or self.top_n < 1:
            raise InvalidSearch(f"the late-interaction depth must be a positive integer, got {self.top_n!r}")

    def reorder(
        self,
        query: str,
        positions: Sequence[int],
        content_of: Callable[[Sequence[int]], Sequence[str | None]],
        *,
        seqs: Callable[[Sequence[int]], Sequence[int]],
        demoted: Callable[[int], bool] = lambda _position: False,
    ) -> list[int]:
        """``positions`` (best first) with the first ``top_n`` re-ordered by MaxSim.

        ``content_of`` gives each window position's verified content (None: it vanished; it keeps its place
        at the end of its band), ``seqs`` each position's drawer seq. ``demoted`` positions stay below the
        promoted ones, as fusion placed them. Ties keep fused order (a stable sort)."""
        window = list(positions[: self.top_n])
        if len(window) < 2:
            return list(positions)
        before = self.encoder.late_failures
        try:
            question = self.encoder.encode_query(query)
        except Exception as error:  # noqa: BLE001 - a role that breaks its no-raise contract still costs no result
            _log.warning("late encoding failed, fused order kept: %s: %s", type(error).__name__, error)
            self.kept_fused += 1
            return list(positions)
        if self.encoder.late_failures != before or question.shape[0] == 0:
            self._count_failures(self.encoder.late_failures - before, "query")
            self.kept_fused += 1
            return list(positions)
        contents = list(content_of(window))
        matrices = self._matrices(window, contents, list(seqs(window)))
        scorable = [index for index, matrix in enumerate(matrices) if matrix is not None]
        scores = maxsim_many(question, [matrix for matrix in matrices if matrix is not None])
        keyed = {window[index]: float(score) for index, score in zip(scorable, scores, strict=True)}
        reordered = sorted(
            window,
            key=lambda position: (demoted(position), position not in keyed, -keyed.get(position, 0.0)),
        )
        return reordered + list(positions[self.top_n :])

    def _matrices(
        self, window: list[int], contents: list[str | None], seqs: list[int]
    ) -> list[NDArray[np.float32] | None]:
        """Each window position's current matrix: stored when it opens and is current, else encoded now."""
        stored = self.store.token_matrices(seqs)
        matrices: list[NDArray[np.float32] | None] = [None] * len(window)
        missing: list[int] = []
        for index, (seq, content) in enumerate(zip(seqs, contents, strict=True)):
            if content is None:
                continue
            held = stored.get(seq)
            if (
                held is not None
                and held.tokens.shape[1] == self.encoder.dimension
                and held.current(self.encoder.name, content)
            ):
                matrices[index] = held.tokens
                self.scored_from_store += 1
            else:
                missing.append(index)
        if missing:
            before = self.encoder.late_failures
            encoded = self.encoder.encode_documents([str(contents[index]) for index in missing])
            self._count_failures(self.encoder.late_failures - before, "doc")
            for index, matrix in zip(missing, encoded, strict=True):
                matrices[index] = matrix  # an empty (failed) matrix scores 0.0 and sorts below the scored ones
            self.encoded_at_query += len(missing)
        return matrices

    def _count_failures(self, failed: int, side: str) -> None:
        if failed > 0 and self.backend in names.RERANK_BACKENDS:
            obs.increment(names.LATE_FAILURES_TOTAL, failed, backend=self.backend, side=side)
