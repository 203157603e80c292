"""Remote vector indexes as untrusted accelerators: the one backend interface and what crosses it.

A backend holds a *mirror* of one vault: per drawer its id, its at-rest content (sealed bytes on a sealed
vault; the plaintext of an hmac-only vault, pushed only when the operator said ``--allow-plaintext``), its
embedding and its wing and room labels in the clear, plus the embedding-space identity (``name@dimension``)
the mirror was pushed from. A query returns candidate *ids* and nothing else is believed: the caller re-reads
every id from the local vault, verifies it and re-scores it. So nothing a backend answers is trusted here
either — every answer is shape-checked (`candidate_ids`) and bounded, and a malformed one raises
`BackendFailed` rather than being half-used.

The five implementations (`open_backend`): ``chroma``, ``qdrant`` and ``weaviate`` over their REST APIs
through undercroft_net's policed client; ``milvus`` through ``pymilvus`` (its URL policed first; a local
``*.db`` path is Milvus Lite); ``pgvector`` through ``psycopg`` (``sslmode=require`` off loopback).
"""

from __future__ import annotations

import hashlib
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol, runtime_checkable

from undercroft_index.errors import BackendFailed, IndexRefused

__all__ = [
    "BACKEND_NAMES",
    "MAX_QUERY_K",
    "MirrorInfo",
    "MirrorRecord",
    "RemoteIndex",
    "candidate_ids",
    "collection_name",
    "record_uuid",
]

#: The backends this distribution implements, in the order the documents list them.
BACKEND_NAMES: Final = ("chroma", "milvus", "qdrant", "pgvector", "weaviate")

#: The most candidates one query may ask for (a bound on what an untrusted answer can make us read).
MAX_QUERY_K: Final = 4096

_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:/+-]{0,255}")


@dataclass(frozen=True)
class MirrorRecord:
    """One drawer as a mirror receives it: id, at-rest content, embedding, labels in the clear."""

    id: str
    content: bytes = field(repr=False)
    sealed: bool
    embedding: tuple[float, ...] = field(repr=False)
    wing: str
    room: str

    def __post_init__(self) -> None:
        if not isinstance(self.id, str) or _ID.fullmatch(self.id) is None:
            raise IndexRefused(f"a mirror record needs a drawer id, got {self.id!r}")
        if not isinstance(self.content, bytes):
            raise IndexRefused(f"record {self.id}: content must be the at-rest bytes")
        if not self.embedding or not all(math.isfinite(v) for v in self.embedding):
            raise IndexRefused(f"record {self.id}: the embedding is empty or not finite")


@dataclass(frozen=True)
class MirrorInfo:
    """What a backend holds for one collection: how many records, and the space they were pushed from."""

    collection: str
    records: int
    space: str | None


@runtime_checkable
class RemoteIndex(Protocol):
    """One remote vector index. Every method may raise `BackendFailed` (exit 1), never an integrity verdict:
    a backend cannot produce one, because nothing it says is believed."""

    @property
    def name(self) -> str:
        """The backend's name (one of `BACKEND_NAMES`)."""
        ...

    @property
    def destination(self) -> str:
        """Where it points, for the audit record and messages (host and port; never a credential)."""
        ...

    def describe(self, collection: str) -> MirrorInfo | None:
        """The mirror ``collection``, or None when no such collection exists (not the same as zero records)."""
        ...

    def ensure(self, collection: str, *, space: str, dimension: int) -> None:
        """Create ``collection`` for ``space`` (``name@dimension``) unless it exists; refuse another space."""
        ...

    def push(self, collection: str, records: Sequence[MirrorRecord], *, space: str) -> None:
        """Upsert ``records`` (idempotent by id: a push run again converges)."""
        ...

    def settle(self, collection: str) -> None:
        """Called once after a push's last batch: make what was pushed searchable at the index's best (Milvus:
        a flush, sealing the growing segments it would otherwise scan by brute force; the others: nothing)."""
        ...

    def query(self, collection: str, vector: Sequence[float], k: int, *, wing: str | None = None) -> list[str]:
        """Up to ``k`` candidate ids nearest ``vector`` (optionally within one wing), best first."""
        ...

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete ``ids`` (absent ids are not an error)."""
        ...

    def count(self, collection: str) -> int:
        """How many records ``collection`` holds (`BackendFailed` when it does not exist)."""
        ...

    def drop(self, collection: str) -> None:
        """Remove ``collection`` and everything in it (absent: nothing to do)."""
        ...

    def close(self) -> None:
        """Release the connection."""
        ...


def collection_name(vault: str) -> str:
    """The collection a vault is mirrored into: ``undercroft_<vault>_<8 hex>``, legal on all five backends.

    The hex is a digest of the exact vault name, so two names that fold to the same safe spelling
    (``a-b`` and ``a_b``) never share a mirror.
    """
    if not isinstance(vault, str) or not vault:
        raise IndexRefused("a collection is named after a vault; got no vault name")
    safe = re.sub(r"[^a-z0-9_]", "_", vault.lower())[:40]
    digest = hashlib.sha256(vault.encode("utf-8")).hexdigest()[:8]
    return f"undercroft_{safe}_{digest}"


def record_uuid(drawer_id: str) -> str:
    """A stable UUID for a drawer id, for backends whose point ids must be UUIDs (Qdrant, Weaviate)."""
    digest = bytearray(hashlib.sha256(b"undercroft-mirror\x00" + drawer_id.encode("utf-8")).digest()[:16])
    digest[6] = (digest[6] & 0x0F) | 0x50  # version 5-shaped, variant RFC 4122: accepted by both servers
    digest[8] = (digest[8] & 0x3F) | 0x80
    text = digest.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


def candidate_ids(raw: object, k: int, *, backend: str) -> list[str]:
    """Shape-check a backend's answer into at most ``k`` distinct id strings, order kept, repeats dropped.

    Anything that is not a list of strings is `BackendFailed`: a malformed answer is not partially believed.
    An id that is not even drawer-id shaped is dropped here; the caller drops ids its vault does not hold.
    """
    if not isinstance(raw, list):
        raise BackendFailed(f"{backend}: the query answer is not a list of ids ({type(raw).__name__})")
    for item in raw:  # the whole answer is checked, not just the part that will be used
        if not isinstance(item, str):
            raise BackendFailed(f"{backend}: the query answer holds a non-string id ({type(item).__name__})")
    seen: dict[str, None] = {}
    for item in raw:
        if _ID.fullmatch(item) is not None:
            seen.setdefault(item, None)
        if len(seen) >= k:
            break
    return list(seen)


def check_k(k: int) -> int:
    """``k`` as a positive integer no larger than `MAX_QUERY_K`."""
    if isinstance(k, bool) or not isinstance(k, int) or not 1 <= k <= MAX_QUERY_K:
        raise IndexRefused(f"a query asks for 1..{MAX_QUERY_K} candidates, got {k!r}")
    return k
