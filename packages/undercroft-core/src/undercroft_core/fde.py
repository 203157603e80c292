"""MUVERA fixed-dimensional encodings (arXiv:2405.19504): one vector per token matrix whose dot product
approximates MaxSim, so a plain vector scan can generate late-interaction candidates.

Per repetition r: a SimHash of ``bits`` Gaussian hyperplanes splits space into ``2**bits`` partitions; each
token is projected by a random ±1/√p matrix to ``projection`` dimensions. A query block sums its projected
tokens per partition; a document block averages them, and an empty partition takes the projected token
whose SimHash bits are nearest in Hamming distance. The FDE is all blocks concatenated:
``repetitions · 2**bits · projection`` dimensions. Parameters are drawn from a seed once and persisted as
bytes (:meth:`FdeEncoder.to_bytes`), so an index never depends on a random generator's version.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from undercroft_core.errors import InvalidInput

__all__ = ["FdeEncoder", "FdeParameters"]

_MAGIC = b"UCFDE1\x00\x00"
_HEADER = struct.Struct("<8sIIIIQ")


@dataclass(frozen=True, slots=True)
class FdeParameters:
    """Shape of an encoding: token dimension, repetitions, SimHash bits, projection dimension, seed."""

    dimension: int
    repetitions: int = 20
    bits: int = 3
    projection: int = 16
    seed: int = 0

    def __post_init__(self) -> None:
        for name, low, high in (
            ("dimension", 1, 65536),
            ("repetitions", 1, 256),
            ("bits", 0, 12),
            ("projection", 1, 4096),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InvalidInput(f"FDE {name} must be an integer in [{low}, {high}], got {value!r}")
        if isinstance(self.seed, bool) or not isinstance(self.seed, int) or not 0 <= self.seed < 2**64:
            raise InvalidInput(f"FDE seed must be an integer in [0, 2**64), got {self.seed!r}")

    @property
    def partitions(self) -> int:
        """Partitions per repetition."""
        return 1 << self.bits

    @property
    def output_dimension(self) -> int:
        """Length of one FDE."""
        return self.repetitions * self.partitions * self.projection


class FdeEncoder:
    """Encodes query and document token matrices into FDEs with fixed, persisted random parameters."""

    def __init__(self, parameters: FdeParameters, hyperplanes: NDArray[np.float32], projections: NDArray[np.float32]):
        expected_h = (parameters.repetitions, parameters.dimension, parameters.bits)
        expected_p = (parameters.repetitions, parameters.dimension, parameters.projection)
        if hyperplanes.shape != expected_h or projections.shape != expected_p:
            raise InvalidInput("FDE parameter arrays do not match the declared shape")
        if not (np.isfinite(hyperplanes).all() and np.isfinite(projections).all()):
            raise InvalidInput("FDE parameter arrays must be finite")
        self.parameters = parameters
        self._hyperplanes = np.ascontiguousarray(hyperplanes, dtype=np.float32)
        self._projections = np.ascontiguousarray(projections, dtype=np.float32)
        self._weights = (1 << np.arange(parameters.bits, dtype=np.int64)).astype(np.int64)
        ids = np.arange(parameters.partitions, dtype=np.int64)
        self._partition_ids = ids
        # Hamming distance between two partition ids is the popcount of their XOR.
        self._popcount = np.array([bin(value).count("1") for value in range(parameters.partitions)], dtype=np.int64)

    @classmethod
    def from_seed(cls, parameters: FdeParameters) -> FdeEncoder:
        """Draw hyperplanes (Gaussian) and projections (±1/√p) from ``parameters.seed`` (PCG64)."""
        rng = np.random.Generator(np.random.PCG64(parameters.seed))
        shape_h = (parameters.repetitions, parameters.dimension, parameters.bits)
        hyperplanes = rng.standard_normal(shape_h).astype(np.float32)
        shape_p = (parameters.repetitions, parameters.dimension, parameters.projection)
        signs = rng.integers(0, 2, size=shape_p).astype(np.float32) * 2.0 - 1.0
        projections = (signs / np.sqrt(parameters.projection)).astype(np.float32)
        return cls(parameters, hyperplanes, projections)

    def to_bytes(self) -> bytes:
        """Persist: a fixed header then the float32-LE hyperplanes and projections."""
        p = self.parameters
        header = _HEADER.pack(_MAGIC, p.dimension, p.repetitions, p.bits, p.projection, p.seed)
        return header + self._hyperplanes.astype("<f4").tobytes() + self._projections.astype("<f4").tobytes()

    @classmethod
    def from_bytes(cls, blob: bytes) -> FdeEncoder:
        """Inverse of :meth:`to_bytes`; refuses a blob of the wrong magic or length."""
        if len(blob) < _HEADER.size or blob[:8] != _MAGIC:
            raise InvalidInput("not a persisted FDE encoder")
        _, dimension, repetitions, bits, projection, seed = _HEADER.unpack_from(blob)
        parameters = FdeParameters(dimension, repetitions, bits, projection, seed)
        size_h = repetitions * dimension * bits
        size_p = repetitions * dimension * projection
        if len(blob) != _HEADER.size + 4 * (size_h + size_p):
            raise InvalidInput("persisted FDE encoder has the wrong length")
        body = np.frombuffer(blob, dtype="<f4", offset=_HEADER.size)
        hyperplanes = body[:size_h].reshape(repetitions, dimension, bits).astype(np.float32)
        projections = body[size_h:].reshape(repetitions, dimension, projection).astype(np.float32)
        return cls(parameters, hyperplanes, projections)

    def _stack(self, matrices: Sequence[NDArray[np.floating]]) -> tuple[NDArray[np.float32], NDArray[np.int64]]:
        arrays = [np.asarray(matrix, dtype=np.float32) for matrix in matrices]
        for array in arrays:
            if array.ndim != 2 or array.shape[1] != self.parameters.dimension:
                raise InvalidInput(f"token matrices must be (tokens, {self.parameters.dimension})")
        lengths = np.array([array.shape[0] for array in arrays], dtype=np.int64)
        tokens = np.concatenate(arrays) if arrays else np.zeros((0, self.parameters.dimension), np.float32)
        if not np.isfinite(tokens).all():
            raise InvalidInput("token matrices must be finite")
        return tokens, lengths

    def _encode(self, matrices: Sequence[NDArray[np.floating]], *, document: bool) -> NDArray[np.float32]:
        p = self.parameters
        tokens, lengths = self._stack(matrices)
        count = len(lengths)
        owner = np.repeat(np.arange(count, dtype=np.int64), lengths)
        block = p.partitions * p.projection
        out = np.zeros((count, p.repetitions * block), dtype=np.float32)
        starts = np.concatenate(([0], np.cumsum(lengths)[:-1])).astype(np.int64)
        nonempty = lengths > 0
        for repetition in range(p.repetitions):
            bits = (tokens @ self._hyperplanes[repetition] > 0).astype(np.int64)
            cluster = bits @ self._weights
            projected = tokens @ self._projections[repetition]
            key = owner * p.partitions + cluster
            cells = count * p.partitions
            # One bincount per projected coordinate: a scatter-add without np.add.at's per-element overhead.
            sums = np.empty((cells, p.projection), dtype=np.float64)
            for column in range(p.projection):
                sums[:, column] = np.bincount(key, weights=projected[:, column], minlength=cells)
            if document:
                counts = np.bincount(key, minlength=cells).astype(np.float64)
                sums /= np.maximum(counts, 1.0)[:, None]
                empty = (counts == 0).reshape(count, p.partitions) & nonempty[:, None]
                if empty.any() and tokens.shape[0]:
                    # Nearest token by Hamming distance for every (document, partition), ties to the first.
                    distance = self._popcount[cluster[:, None] ^ self._partition_ids[None, :]]
                    local = np.arange(tokens.shape[0], dtype=np.int64) - np.repeat(starts, lengths)
                    ranked = distance * (int(lengths.max()) + 1) + local[:, None]
                    best = np.minimum.reduceat(ranked, starts[nonempty], axis=0)
                    chosen = np.zeros((count, p.partitions), dtype=np.int64)
                    chosen[nonempty] = starts[nonempty][:, None] + best % (int(lengths.max()) + 1)
                    rows, parts = np.nonzero(empty)
                    sums[rows * p.partitions + parts] = projected[chosen[rows, parts]]
            out[:, repetition * block : (repetition + 1) * block] = sums.reshape(count, block)
        return out

    def encode_queries(self, queries: Sequence[NDArray[np.floating]]) -> NDArray[np.float32]:
        """Query FDEs ``(len(queries), output_dimension)``: per-partition sums."""
        return self._encode(queries, document=False)

    def encode_documents(self, documents: Sequence[NDArray[np.floating]]) -> NDArray[np.float32]:
        """Document FDEs ``(len(documents), output_dimension)``: per-partition means, empty partitions filled."""
        return self._encode(documents, document=True)
