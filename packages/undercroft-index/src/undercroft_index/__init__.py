"""Undercroft's candidate indexes (faiss PQ/IVF and in-RAM HNSW), used as untrusted accelerators.

Nothing here reads storage or keys: the store seals and persists what these indexes serialise, and re-scores
every id they propose exactly.
"""

from undercroft_index.errors import Error, IndexRefused
from undercroft_index.hnsw import HnswIndex, ef_search
from undercroft_index.pq import FAISS_THREADS, PQ_BITS, Codebook, ProbeIndex, ivf_lists, subquantizers, train_codebook

__version__ = "0.1.0"

__all__ = [
    "FAISS_THREADS",
    "PQ_BITS",
    "Codebook",
    "Error",
    "HnswIndex",
    "IndexRefused",
    "ProbeIndex",
    "__version__",
    "ef_search",
    "ivf_lists",
    "subquantizers",
    "train_codebook",
]
