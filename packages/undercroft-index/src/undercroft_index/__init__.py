"""Undercroft's candidate indexes, used as untrusted accelerators: faiss PQ/IVF and in-RAM HNSW (local), and
the remote vector backends (Chroma, Milvus, Qdrant, pgvector, Weaviate).

Nothing here reads storage or keys: the store seals and persists what the local indexes serialise, hands the
remote ones what may leave (sealed content, embeddings, wing/room labels) and re-reads, verifies and re-scores
every id any index proposes.
"""

from typing import TYPE_CHECKING, Any

from undercroft_index.errors import BackendFailed, Error, IndexRefused, MirrorMismatch
from undercroft_index.hnsw import HnswIndex, ef_search
from undercroft_index.pq import FAISS_THREADS, PQ_BITS, Codebook, ProbeIndex, ivf_lists, subquantizers, train_codebook
from undercroft_index.remote import (
    BACKEND_NAMES,
    MAX_QUERY_K,
    MirrorInfo,
    MirrorRecord,
    RemoteIndex,
    candidate_ids,
    collection_name,
    record_uuid,
)

if TYPE_CHECKING:
    from undercroft_index.backends import (
        ChromaIndex,
        MilvusIndex,
        PgvectorIndex,
        QdrantIndex,
        WeaviateIndex,
        open_backend,
    )

__version__ = "0.1.0"

__all__ = [
    "BACKEND_NAMES",
    "FAISS_THREADS",
    "MAX_QUERY_K",
    "PQ_BITS",
    "BackendFailed",
    "ChromaIndex",
    "Codebook",
    "Error",
    "HnswIndex",
    "IndexRefused",
    "MilvusIndex",
    "MirrorInfo",
    "MirrorMismatch",
    "MirrorRecord",
    "PgvectorIndex",
    "ProbeIndex",
    "QdrantIndex",
    "RemoteIndex",
    "WeaviateIndex",
    "__version__",
    "candidate_ids",
    "collection_name",
    "ef_search",
    "ivf_lists",
    "open_backend",
    "record_uuid",
    "subquantizers",
    "train_codebook",
]

# The backends load httpx (and their clients) on first use: the store imports this package for its local
# tiers, and every `undercroft` start would otherwise pay for a network stack it does not use.
_LAZY = frozenset({"ChromaIndex", "MilvusIndex", "PgvectorIndex", "QdrantIndex", "WeaviateIndex", "open_backend"})


def __getattr__(name: str) -> Any:
    """Load the remote backends on first access."""
    if name in _LAZY:
        from undercroft_index import backends

        return getattr(backends, name)
    raise AttributeError(f"module 'undercroft_index' has no attribute {name!r}")
