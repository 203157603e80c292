"""Product quantisation of late-interaction token vectors (faiss ``ProductQuantizer``): ~16 bytes a token.

A `TokenCodebook` is ``m`` sub-quantisers of 256 centroids each over ``dimension / m`` wide slices; a token
row becomes ``m`` one-byte codes (16 B a token for a 384-wide encoder, against 386 for int8 with a float16
scale). Training uses faiss; encoding uses faiss; decoding is a numpy gather (a MaxSim over decoded rows is
exactly the asymmetric-distance score, inner products being linear in the reconstruction). The codebook
serialises to plain bytes so the caller seals it; this module never touches storage or keys.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray

from undercroft_index.errors import IndexRefused
from undercroft_index.pq import PQ_BITS, load_faiss

__all__ = ["TOKEN_CODE_BYTES", "TokenCodebook", "token_subquantizers", "train_token_codebook"]

#: Bytes of code per token the tier aims at (the sub-quantiser count, when the dimension allows it).
TOKEN_CODE_BYTES: Final = 16
_CENTROIDS: Final = 1 << PQ_BITS
_ITERATIONS: Final = 12
_SEED: Final = 1234


def token_subquantizers(dimension: int) -> int:
    """The largest divisor of ``dimension`` at most 16 (16 B/token for 384-wide tokens)."""
    if dimension < 1:
        raise IndexRefused(f"dimension must be positive, got {dimension}")
    return max(m for m in range(1, min(TOKEN_CODE_BYTES, dimension) + 1) if dimension % m == 0)


@dataclass(frozen=True)
class TokenCodebook:
    """Trained PQ centroids ``(m, 256, dimension / m)``."""

    centroids: NDArray[np.float32]

    @property
    def subquantizers(self) -> int:
        """Bytes of code per token."""
        return int(self.centroids.shape[0])

    @property
    def dimension(self) -> int:
        """The token width this codebook codes."""
        return int(self.centroids.shape[0] * self.centroids.shape[2])

    def to_bytes(self) -> bytes:
        """The centroids as little-endian float32 (what the caller seals)."""
        return np.ascontiguousarray(self.centroids, dtype="<f4").tobytes()

    @classmethod
    def from_bytes(cls, dimension: int, data: bytes) -> TokenCodebook:
        """Rebuild from `to_bytes`; a length that does not fit ``dimension`` or a non-finite value is refused."""
        m = token_subquantizers(dimension)
        expected = m * _CENTROIDS * (dimension // m) * 4
        if len(data) != expected:
            raise IndexRefused(f"token codebook is {len(data)} bytes; {expected} expected for dimension {dimension}")
        centroids = np.frombuffer(data, dtype="<f4").reshape(m, _CENTROIDS, dimension // m).astype(np.float32)
        if not np.isfinite(centroids).all():
            raise IndexRefused("token codebook holds a non-finite value")
        return cls(centroids)

    def encode(self, tokens: NDArray[np.floating]) -> NDArray[np.uint8]:
        """``(n, m)`` codes of ``(n, dimension)`` token rows (each slice's nearest centroid)."""
        rows = _rows(tokens, self.dimension)
        m, width = self.subquantizers, self.dimension // self.subquantizers
        codes = np.empty((len(rows), m), dtype=np.uint8)
        for part in range(m):
            piece = rows[:, part * width : (part + 1) * width]
            centres = self.centroids[part]
            # argmin |x - c|^2 = argmin (|c|^2 - 2 x.c): one matrix product per slice.
            distance = (centres * centres).sum(axis=1)[None, :] - 2.0 * piece @ centres.T
            codes[:, part] = np.argmin(distance, axis=1).astype(np.uint8)
        return codes

    def decode(self, codes: NDArray[np.uint8]) -> NDArray[np.float32]:
        """The ``(n, dimension)`` reconstruction of ``(n, m)`` codes."""
        if codes.ndim != 2 or codes.shape[1] != self.subquantizers:
            raise IndexRefused(f"expected codes of shape (n, {self.subquantizers}), got {codes.shape}")
        parts = [self.centroids[part][codes[:, part]] for part in range(self.subquantizers)]
        return np.ascontiguousarray(np.concatenate(parts, axis=1), dtype=np.float32)


def _rows(tokens: NDArray[np.floating], dimension: int) -> NDArray[np.float32]:
    array = np.ascontiguousarray(tokens, dtype=np.float32)
    if array.ndim != 2 or array.shape[1] != dimension:
        raise IndexRefused(f"expected token rows of shape (n, {dimension}), got {array.shape}")
    if not np.isfinite(array).all():
        raise IndexRefused("token rows hold a non-finite value")
    return array


def train_token_codebook(sample: NDArray[np.floating]) -> TokenCodebook:
    """Train the sub-quantisers on ``sample`` token rows (at least 256 of them) with faiss's k-means."""
    if sample.ndim != 2:
        raise IndexRefused(f"expected token rows of shape (n, d), got {sample.shape}")
    rows = _rows(sample, int(sample.shape[1]))
    if len(rows) < _CENTROIDS:
        raise IndexRefused(f"token codebook training needs at least {_CENTROIDS} token rows, got {len(rows)}")
    dimension = rows.shape[1]
    m = token_subquantizers(dimension)
    faiss = load_faiss()
    quantizer = faiss.ProductQuantizer(dimension, m, PQ_BITS)
    quantizer.cp.niter = _ITERATIONS
    quantizer.cp.seed = _SEED
    quantizer.cp.min_points_per_centroid = 1
    quantizer.verbose = False
    quantizer.train(rows)
    centroids = faiss.vector_to_array(quantizer.centroids).astype(np.float32).reshape(m, _CENTROIDS, dimension // m)
    return TokenCodebook(np.ascontiguousarray(centroids))
