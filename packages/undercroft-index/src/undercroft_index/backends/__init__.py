"""The five implementations of `undercroft_index.remote.RemoteIndex`, and `open_backend` that picks one."""

from __future__ import annotations

from undercroft_net import CaPin, police

from undercroft_index.backends.chroma import ChromaIndex
from undercroft_index.backends.milvus import MilvusIndex
from undercroft_index.backends.pgvector import PgvectorIndex
from undercroft_index.backends.qdrant import QdrantIndex
from undercroft_index.backends.weaviate import WeaviateIndex
from undercroft_index.errors import BackendFailed, IndexRefused
from undercroft_index.remote import BACKEND_NAMES, RemoteIndex

__all__ = ["ChromaIndex", "MilvusIndex", "PgvectorIndex", "QdrantIndex", "WeaviateIndex", "open_backend"]


def open_backend(
    name: str, location: str, *, variable: str, pin: CaPin | None = None, timeout: float = 10.0
) -> RemoteIndex:
    """The backend ``name`` at ``location`` (a URL; pgvector: a DSN), every URL through the transport policy.

    ``variable`` names the declaration the location came from (for messages); ``pin`` is the loaded
    ``UNDERCROFT_INDEX_CA``, which replaces the public roots. A refused URL raises `BackendFailed`.
    """
    if name not in BACKEND_NAMES:
        raise IndexRefused(f"unknown backend {name!r}: one of {', '.join(BACKEND_NAMES)}")
    if name == "pgvector":
        return PgvectorIndex.connect(location, variable=variable, pin=pin)
    try:
        endpoint = police(location, variable=variable, pin=pin)
    except Exception as error:  # noqa: BLE001 - TransportRefused (or a bad value): one run failure naming it
        raise BackendFailed(f"{name}: {error}") from None
    if name == "chroma":
        return ChromaIndex(endpoint, timeout=timeout)
    if name == "qdrant":
        return QdrantIndex(endpoint, timeout=timeout)
    if name == "weaviate":
        return WeaviateIndex(endpoint, timeout=timeout)
    return MilvusIndex.connect(endpoint, timeout=timeout)
