"""Product-quantised candidate indexes over unit vectors (faiss IVF-PQ), rebuilt in RAM from stored artifacts.

A `Codebook` is what training produces: the coarse centroids (``nlist`` rows; one centroid when the corpus is
below the IVF threshold, i.e. flat PQ) and the PQ sub-quantiser codebook. Both serialise to plain bytes so the
caller can seal each under its own domain; this module never touches storage or keys. `Codebook.encode`
turns vectors into self-contained codes (the list number and the PQ code of the residual, faiss's standalone
code layout), and `ProbeIndex` is the searchable RAM form: codes grouped by inverted list, each tagged by the
caller's int64 id. Ranking is by squared L2 distance, which orders unit vectors exactly as cosine does; a
codebook trained with ``inner_product=True`` ranks by inner product instead (the FDE tier's vectors are not unit:
their dot product is what approximates MaxSim).

The index is an accelerator only: it proposes ids, and the caller re-scores every proposal exactly.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cache, cached_property
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import NDArray

from undercroft_index.errors import IndexRefused

if TYPE_CHECKING:
    import faiss

__all__ = [
    "FAISS_THREADS",
    "PQ_BITS",
    "Codebook",
    "ProbeIndex",
    "ivf_lists",
    "load_faiss",
    "subquantizers",
    "train_codebook",
]

#: Bits per sub-quantiser code (256 centroids each).
PQ_BITS: Final = 8
#: Bytes of PQ code per vector the tier aims at (the sub-quantiser count, when the dimension allows it).
_TARGET_BYTES: Final = 48
#: k-means iterations for the sub-quantisers and the coarse centroids (faiss's default is 25).
_ITERATIONS: Final = 12
_SEED: Final = 1234
#: faiss's OpenMP threads. One: the per-query scans are small, and on a shared few-core machine OpenMP's
#: spinning threads made training three times slower than a single thread (measured in benchmarks/RESULTS.md).
FAISS_THREADS: Final = 1


@cache
def load_faiss() -> Any:
    """faiss, imported on first use (its OpenMP threads set once): most `undercroft` starts never build an
    index, and importing faiss costs ~0.1 s (benchmarks/RESULTS.md, start-up)."""
    import faiss

    faiss.omp_set_num_threads(FAISS_THREADS)
    return faiss


def subquantizers(dimension: int, code_bytes: int = _TARGET_BYTES) -> int:
    """The sub-quantiser count: the largest divisor of ``dimension`` at most ``code_bytes`` (48 B/vector for
    384-d by default)."""
    if dimension < 1 or code_bytes < 1:
        raise IndexRefused(f"dimension and code bytes must be positive, got {dimension} and {code_bytes}")
    return max(m for m in range(1, min(code_bytes, dimension) + 1) if dimension % m == 0)


def ivf_lists(population: int, ivf_min: int) -> int:
    """Inverted lists for a corpus: ``⌈√N⌉`` at or above ``ivf_min`` drawers, else one (flat PQ)."""
    if population < ivf_min:
        return 1
    return max(1, math.isqrt(population - 1) + 1)


def _as_rows(vectors: NDArray[np.float32], dimension: int) -> NDArray[np.float32]:
    array = np.ascontiguousarray(vectors, dtype=np.float32)
    if array.ndim != 2 or array.shape[1] != dimension:
        raise IndexRefused(f"expected vectors of shape (n, {dimension}), got {array.shape}")
    if not np.isfinite(array).all():
        raise IndexRefused("vectors hold a non-finite value")
    return array


def _empty_index(dimension: int, nlist: int, m: int, inner_product: bool = False) -> faiss.IndexIVFPQ:
    library = load_faiss()
    quantizer = library.IndexFlatIP(dimension) if inner_product else library.IndexFlatL2(dimension)
    metric = library.METRIC_INNER_PRODUCT if inner_product else library.METRIC_L2
    index: faiss.IndexIVFPQ = library.IndexIVFPQ(quantizer, dimension, nlist, m, PQ_BITS, metric)
    index.cp.niter = _ITERATIONS
    index.cp.seed = _SEED
    index.pq.cp.niter = _ITERATIONS
    index.pq.cp.seed = _SEED
    # A small vault trains on what it has (faiss would print a warning per sub-quantiser otherwise).
    index.cp.min_points_per_centroid = 1
    index.pq.cp.min_points_per_centroid = 1
    return index


@dataclass(frozen=True)
class Codebook:
    """A trained quantiser pair: coarse centroids ``(nlist, d)`` and PQ centroids ``(m, 256, d/m)``."""

    dimension: int
    centroids: NDArray[np.float32]
    codebook: NDArray[np.float32]
    inner_product: bool = False  # rank by inner product (largest first) instead of L2 distance

    @property
    def nlist(self) -> int:
        """Inverted lists (1: flat PQ)."""
        return int(self.centroids.shape[0])

    @property
    def subquantizers(self) -> int:
        """PQ sub-quantisers (bytes of PQ code per vector)."""
        return int(self.codebook.shape[0])

    @cached_property
    def code_size(self) -> int:
        """Bytes of one standalone code: the list number's bytes, then the PQ code."""
        return int(self._encoder.sa_code_size())

    @cached_property
    def _encoder(self) -> faiss.IndexIVFPQ:
        """One trained, empty index kept for encoding (building one costs the precomputed tables)."""
        return self._index()

    def centroid_bytes(self) -> bytes:
        """The coarse centroids as little-endian float32 (what the caller seals as the centroid set)."""
        return np.ascontiguousarray(self.centroids, dtype="<f4").tobytes()

    def codebook_bytes(self) -> bytes:
        """The PQ centroids as little-endian float32 (what the caller seals as the codebook)."""
        return np.ascontiguousarray(self.codebook, dtype="<f4").tobytes()

    @classmethod
    def from_bytes(cls, dimension: int, nlist: int, centroids: bytes, codebook: bytes) -> Codebook:
        """Rebuild from the two serialised artifacts; a length that does not fit the geometry is refused."""
        m = subquantizers(dimension)
        expected_centroids = nlist * dimension * 4
        expected_codebook = m * (1 << PQ_BITS) * (dimension // m) * 4
        if nlist < 1 or len(centroids) != expected_centroids:
            raise IndexRefused(
                f"centroid set is {len(centroids)} bytes; {nlist} lists of {dimension} need {expected_centroids}"
            )
        if len(codebook) != expected_codebook:
            raise IndexRefused(
                f"codebook is {len(codebook)} bytes; {expected_codebook} expected for dimension {dimension}"
            )
        coarse = np.frombuffer(centroids, dtype="<f4").reshape(nlist, dimension).astype(np.float32)
        fine = np.frombuffer(codebook, dtype="<f4").reshape(m, 1 << PQ_BITS, dimension // m).astype(np.float32)
        if not (np.isfinite(coarse).all() and np.isfinite(fine).all()):
            raise IndexRefused("codebook or centroids hold a non-finite value")
        return cls(dimension=dimension, centroids=coarse, codebook=fine)

    def _index(self) -> faiss.IndexIVFPQ:
        index = _empty_index(self.dimension, self.nlist, self.subquantizers, self.inner_product)
        index.quantizer.add(self.centroids)
        load_faiss().copy_array_to_vector(self.codebook.ravel(), index.pq.centroids)
        index.is_trained = True
        index.precompute_table()
        return index

    def encode(self, vectors: NDArray[np.float32]) -> NDArray[np.uint8]:
        """Standalone codes ``(n, code_size)`` of unit ``vectors`` (list number, then PQ code of the residual)."""
        rows = _as_rows(vectors, self.dimension)
        if not len(rows):
            return np.zeros((0, self.code_size), dtype=np.uint8)
        codes: NDArray[np.uint8] = self._encoder.sa_encode(rows)
        return codes

    def index(self, codes: NDArray[np.uint8], ids: NDArray[np.int64]) -> ProbeIndex:
        """The searchable RAM index holding ``codes`` under ``ids`` (grouped by list)."""
        probe = ProbeIndex(self._index(), self.code_size)
        probe.add(codes, ids)
        return probe


def train_codebook(
    sample: NDArray[np.float32], *, nlist: int, inner_product: bool = False, code_bytes: int = _TARGET_BYTES
) -> Codebook:
    """Train coarse centroids and the PQ codebook on ``sample`` (needs at least 256 and ``nlist`` rows);
    ``inner_product`` makes every index of the codebook rank by inner product; ``code_bytes`` bounds the PQ code
    (the sub-quantiser count: the largest divisor of the dimension at most this)."""
    rows = _as_rows(sample, sample.shape[1] if sample.ndim == 2 else -1)
    dimension = rows.shape[1]
    if len(rows) < (1 << PQ_BITS) or len(rows) < nlist:
        raise IndexRefused(f"training needs at least {max(1 << PQ_BITS, nlist)} vectors, got {len(rows)}")
    m = subquantizers(dimension, code_bytes)
    index = _empty_index(dimension, nlist, m, inner_product)
    index.verbose = False
    index.train(rows)
    centroids = index.quantizer.reconstruct_n(0, nlist).astype(np.float32)
    codebook = (
        load_faiss().vector_to_array(index.pq.centroids).astype(np.float32).reshape(m, 1 << PQ_BITS, dimension // m)
    )
    return Codebook(dimension=dimension, centroids=centroids, codebook=codebook, inner_product=inner_product)


class ProbeIndex:
    """Codes in RAM grouped by inverted list; `search` ADC-scans the probed lists (optionally a subset of ids)."""

    def __init__(self, index: faiss.IndexIVFPQ, code_size: int) -> None:
        """Wrap a trained, empty faiss index (use `Codebook.index`)."""
        self._index = index
        self._code_size = code_size

    @property
    def nlist(self) -> int:
        """Inverted lists."""
        return int(self._index.nlist)

    @property
    def size(self) -> int:
        """Codes held."""
        return int(self._index.ntotal)

    def code_bytes(self) -> int:
        """RAM the inverted lists hold: PQ codes plus one int64 id per vector."""
        return self.size * (int(self._index.code_size) + 8)

    def add(self, codes: NDArray[np.uint8], ids: NDArray[np.int64]) -> None:
        """Add standalone codes under ``ids`` (each id at most once; remove before re-adding)."""
        codes = np.ascontiguousarray(codes, dtype=np.uint8)
        ids = np.ascontiguousarray(ids, dtype=np.int64)
        if codes.ndim != 2 or codes.shape[1] != self._code_size or len(codes) != len(ids):
            raise IndexRefused(f"codes of shape {codes.shape} do not fit {len(ids)} ids of {self._code_size} bytes")
        if len(ids):
            self._index.add_sa_codes(codes, ids)

    def standalone_codes(self) -> dict[int, bytes]:
        """``id → standalone code`` of every vector held, read back from the inverted lists (no copy kept)."""
        invlists = self._index.invlists
        if invlists is None:  # pragma: no cover - an IndexIVF always owns its lists
            return {}
        size = int(self._index.code_size)
        coarse = self._code_size - size
        found: dict[int, bytes] = {}
        for number in range(self.nlist):
            count = int(invlists.list_size(number))
            if not count:
                continue
            ids = load_faiss().rev_swig_ptr(invlists.get_ids(number), count).copy()
            codes = load_faiss().rev_swig_ptr(invlists.get_codes(number), count * size).copy().reshape(count, size)
            prefix = number.to_bytes(coarse, "little")
            for position, vector_id in enumerate(ids.tolist()):
                found[int(vector_id)] = prefix + codes[position].tobytes()
        return found

    def remove(self, ids: NDArray[np.int64]) -> int:
        """Drop the codes of ``ids``; returns how many were held."""
        if not len(ids):
            return 0
        return int(self._index.remove_ids(load_faiss().IDSelectorBatch(np.ascontiguousarray(ids, dtype=np.int64))))

    def search(
        self, query: NDArray[np.float32], k: int, *, nprobe: int, within: NDArray[np.int64] | None = None
    ) -> NDArray[np.int64]:
        """Up to ``k`` ids nearest ``query`` (largest inner product, for such a codebook) in the ``nprobe``
        nearest lists, best first (only ``within``, when given)."""
        if k < 1 or self.size == 0:
            return np.zeros(0, dtype=np.int64)
        vector = _as_rows(query.reshape(1, -1), int(self._index.d))
        selector = (
            None if within is None else load_faiss().IDSelectorBatch(np.ascontiguousarray(within, dtype=np.int64))
        )
        params: Any = load_faiss().SearchParametersIVF()
        params.nprobe = max(1, min(nprobe, self.nlist))
        params.sel = selector
        _, labels = self._index.search(vector, min(k, self.size), params=params)
        found: NDArray[np.int64] = labels[0][labels[0] >= 0].astype(np.int64)
        return found
