"""The hash embedder: the zero-download default. Deterministic feature hashing, L2-normalised, byte-reproducible.

Word unigrams, word bigrams and character trigrams (recipe in ``_internal/feature_hashing``) are hashed
into ``dimension`` signed buckets with weights 1, 1 and 1/2; the bucket sums are exact in float64 (sums of
halves), the norm is a correctly rounded square root, so the float32 result is the same bytes on every
machine. Its honest limit: two texts score close only when they share literal words or trigrams —
morphology (run/running), never meaning (car/automobile), never across languages.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from undercroft_core._internal.feature_hashing import hash_features
from undercroft_core.embedder import DegradingEmbedder, EmbedderIdentity, check_texts
from undercroft_core.quantisation import QuantisedVectors, quantise_int8

__all__ = [
    "HASH_DIMENSION",
    "HASH_EMBEDDER_NAME",
    "HASH_FEATURE_WEIGHTS",
    "HASH_SEMANTIC_FLOOR",
    "HASH_SEMANTIC_GATE",
    "HashEmbedder",
]

#: The identity name; a change to the recipe, weights or tokenisation must change it.
HASH_EMBEDDER_NAME = "undercroft-hash-v3"
#: Default number of buckets.
HASH_DIMENSION = 384
#: Weight of a unigram, a bigram and a trigram hit.
HASH_FEATURE_WEIGHTS: tuple[float, float, float] = (1.0, 1.0, 0.5)
#: The shipped admission gate, declared rather than re-derived so a default vault's gate does not move.
HASH_SEMANTIC_GATE = 0.56
#: Unrelated text sits near cosine 0 in this space: the (cos + 1) / 2 map.
HASH_SEMANTIC_FLOOR = 0.0


class HashEmbedder(DegradingEmbedder):
    """Feature-hashing embedder; identity ``undercroft-hash-v3@<dimension>``.

    Text with no word character embeds to the zero vector (a legitimate result, not a failure).
    """

    def __init__(self, dimension: int = HASH_DIMENSION) -> None:
        super().__init__(EmbedderIdentity(HASH_EMBEDDER_NAME, dimension))

    @property
    def semantic_admission_gate(self) -> float | None:
        """The shipped 0.56 (measured worst unrelated probe + 0.06 stays below it; see docs/core.md)."""
        return HASH_SEMANTIC_GATE

    @property
    def semantic_floor(self) -> float:
        """0.0: unrelated text is near-orthogonal in a hashed space."""
        return HASH_SEMANTIC_FLOOR

    def _bucket_sums(self, texts: list[str]) -> tuple[NDArray[np.float64], NDArray[np.float64]]:
        """Signed weighted bucket sums (exact multiples of 1/2) and their L2 norms."""
        dimension = self.dimension
        features = hash_features(texts)
        buckets = (features.hashes % np.uint64(dimension)).astype(np.int64)
        signs = np.where((features.hashes >> np.uint64(63)) == 0, 1.0, -1.0)
        weights = np.asarray(HASH_FEATURE_WEIGHTS, dtype=np.float64)[features.kinds] * signs
        flat = np.bincount(features.rows * dimension + buckets, weights=weights, minlength=len(texts) * dimension)
        matrix = np.asarray(flat, dtype=np.float64).reshape(len(texts), dimension)
        norms = np.asarray(np.sqrt(np.einsum("ij,ij->i", matrix, matrix)), dtype=np.float64)
        return matrix, norms

    def _embed_batch(self, texts: list[str]) -> NDArray[np.floating]:
        matrix, norms = self._bucket_sums(texts)
        safe = np.where(norms > 0.0, norms, 1.0)
        return (matrix / safe[:, np.newaxis]).astype(np.float32)

    def embed_int8(self, texts: list[str]) -> QuantisedVectors:
        """The at-rest int8 form, exact where it can be: the bucket sums are multiples of 1/2, so when twice
        the largest fits in int8 the codes are those doubled sums and ``scale = 1 / (2 · norm)`` — no
        rounding at all (every drawer-sized text). Larger sums fall back to :func:`quantise_int8`."""
        batch = check_texts(texts)
        if not batch:
            return quantise_int8(np.zeros((0, self.dimension), dtype=np.float32))
        matrix, norms = self._bucket_sums(batch)
        doubled = matrix * 2.0
        fits = np.abs(doubled).max(axis=1) <= 127.0
        fallback = quantise_int8((matrix / np.where(norms > 0.0, norms, 1.0)[:, np.newaxis]).astype(np.float32))
        codes = np.where(fits[:, np.newaxis], doubled, fallback.codes).astype(np.int8)
        exact_scales = np.where(norms > 0.0, 0.5 / np.where(norms > 0.0, norms, 1.0), 0.0)
        scales = np.where(fits, exact_scales, fallback.scales).astype(np.float32)
        return QuantisedVectors(codes=codes, scales=scales)
