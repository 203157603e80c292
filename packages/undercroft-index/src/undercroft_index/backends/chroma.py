"""Chroma over its v2 REST API (``/api/v2/tenants/{tenant}/databases/{database}/…``), through the policed client.

What it holds per record: the id, the at-rest content base64 in ``documents``, the embedding, and
``{wing, room, sealed}`` in ``metadatas``; the space is the collection metadata ``undercroft_space``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from undercroft_net import Endpoint

from undercroft_index._internal.rest import DEFAULT_TIMEOUT, RestSession
from undercroft_index._internal.shapes import check_space, content_text, count_of, field, vector_list
from undercroft_index.errors import BackendFailed
from undercroft_index.remote import MirrorInfo, MirrorRecord, candidate_ids, check_k

__all__ = ["ChromaIndex"]


class ChromaIndex:
    """A Chroma server (``chroma run``), tenant and database as declared (Chroma's defaults otherwise)."""

    name = "chroma"

    def __init__(
        self,
        endpoint: Endpoint,
        *,
        tenant: str = "default_tenant",
        database: str = "default_database",
        timeout: float = DEFAULT_TIMEOUT,
    ) -> None:
        """Open the session; nothing is sent until the first call."""
        self._rest = RestSession("chroma", endpoint, timeout=timeout)
        self._base = f"/api/v2/tenants/{tenant}/databases/{database}/collections"
        self._ids: dict[str, str] = {}

    @property
    def destination(self) -> str:
        """Scheme, host and port of the server."""
        return self._rest.destination

    def _collection(self, collection: str) -> dict[str, Any] | None:
        found = self._rest.call("GET", f"{self._base}/{collection}", "describe", missing=(404,))
        if found is None:
            return None
        if not isinstance(found, dict) or not isinstance(found.get("id"), str):
            raise BackendFailed("chroma: describe: the collection answer has no id")
        self._ids[collection] = found["id"]
        return found

    def _id(self, collection: str) -> str:
        if collection not in self._ids and self._collection(collection) is None:
            raise BackendFailed(f"chroma: no collection {collection}")
        return self._ids[collection]

    def describe(self, collection: str) -> MirrorInfo | None:
        """The collection's count and recorded space, or None when it does not exist."""
        found = self._collection(collection)
        if found is None:
            return None
        metadata = found.get("metadata") or {}
        space = metadata.get("undercroft_space") if isinstance(metadata, dict) else None
        return MirrorInfo(collection, self.count(collection), space if isinstance(space, str) else None)

    def ensure(self, collection: str, *, space: str, dimension: int) -> None:
        """Create the collection (cosine HNSW) with its space in the metadata, or check the one there."""
        found = self._rest.call(
            "POST",
            self._base,
            "create collection",
            {
                "name": collection,
                "metadata": {"undercroft_space": space},
                # ef_search above the largest k a search asks for (hydration: 256 and up), or HNSW answers short.
                "configuration": {"hnsw": {"space": "cosine", "ef_search": 1024, "ef_construction": 200}},
                "get_or_create": True,
            },
        )
        self._ids[collection] = str(field(found, "id", "chroma", "create collection"))
        metadata = found.get("metadata") or {}
        check_space("chroma", collection, metadata.get("undercroft_space"), space)

    def push(self, collection: str, records: Sequence[MirrorRecord], *, space: str) -> None:
        """Upsert one batch."""
        if not records:
            return
        body = {
            "ids": [r.id for r in records],
            "embeddings": [vector_list(r) for r in records],
            "documents": [content_text(r) for r in records],
            "metadatas": [{"wing": r.wing, "room": r.room, "sealed": r.sealed, "space": space} for r in records],
        }
        self._rest.call("POST", f"{self._base}/{self._id(collection)}/upsert", "upsert", body, ok=(200, 201))

    def query(self, collection: str, vector: Sequence[float], k: int, *, wing: str | None = None) -> list[str]:
        """Nearest ids (cosine), optionally ``where wing == …``."""
        body: dict[str, object] = {
            "query_embeddings": [[float(v) for v in vector]],
            "n_results": check_k(k),
            "include": ["distances"],
        }
        if wing is not None:
            body["where"] = {"wing": wing}
        answer = self._rest.call("POST", f"{self._base}/{self._id(collection)}/query", "query", body)
        rows = field(answer, "ids", "chroma", "query")
        if not isinstance(rows, list) or len(rows) != 1:
            raise BackendFailed("chroma: query: the answer does not hold one row of ids")
        return candidate_ids(rows[0], k, backend="chroma")

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete ``ids``."""
        if ids:
            self._rest.call("POST", f"{self._base}/{self._id(collection)}/delete", "delete", {"ids": list(ids)})

    def count(self, collection: str) -> int:
        """The collection's record count."""
        return count_of(self._rest.call("GET", f"{self._base}/{self._id(collection)}/count", "count"), "chroma")

    def drop(self, collection: str) -> None:
        """Delete the collection (absent: nothing to do)."""
        self._rest.call("DELETE", f"{self._base}/{collection}", "drop", missing=(404,))
        self._ids.pop(collection, None)

    def settle(self, collection: str) -> None:
        """Nothing to do: Chroma indexes each upsert as it lands."""
        del collection

    def close(self) -> None:
        """Close the session."""
        self._rest.close()
