"""Qdrant over its REST API (``/collections/…``), through the policed client.

Point ids must be unsigned integers or UUIDs, so each point's id is `record_uuid` of the drawer id and the
drawer id travels in the payload (``drawer_id``) beside ``wing``, ``room``, ``sealed``, ``space`` and the
at-rest ``content`` (base64). Qdrant collections carry no free metadata, so the mirror's space is read
from a point's payload. Tested at protocol level against Qdrant's documented request and answer shapes
(no Qdrant server can be installed here).
"""

from __future__ import annotations

from collections.abc import Sequence

from undercroft_net import Endpoint

from undercroft_index._internal.rest import DEFAULT_TIMEOUT, RestSession
from undercroft_index._internal.shapes import check_space, content_text, count_of, field, vector_list
from undercroft_index.errors import BackendFailed
from undercroft_index.remote import MirrorInfo, MirrorRecord, candidate_ids, check_k, record_uuid

__all__ = ["QdrantIndex"]


class QdrantIndex:
    """A Qdrant server; ``api_key`` is sent as the ``api-key`` header when declared."""

    name = "qdrant"

    def __init__(self, endpoint: Endpoint, *, api_key: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Open the session; nothing is sent until the first call."""
        headers = {"api-key": api_key} if api_key else None
        self._rest = RestSession("qdrant", endpoint, timeout=timeout, headers=headers)

    @property
    def destination(self) -> str:
        """Scheme, host and port of the server."""
        return self._rest.destination

    def _space(self, collection: str) -> str | None:
        answer = self._rest.call(
            "POST",
            f"/collections/{collection}/points/scroll",
            "scroll",
            {"limit": 1, "with_payload": ["space"], "with_vector": False},
        )
        points = field(field(answer, "result", "qdrant", "scroll"), "points", "qdrant", "scroll")
        if not isinstance(points, list) or not points or not isinstance(points[0], dict):
            return None
        payload = points[0].get("payload") or {}
        space = payload.get("space") if isinstance(payload, dict) else None
        return space if isinstance(space, str) else None

    def describe(self, collection: str) -> MirrorInfo | None:
        """The collection's exact count and the space of its points, or None when it does not exist."""
        if self._rest.call("GET", f"/collections/{collection}", "describe", missing=(404,)) is None:
            return None
        return MirrorInfo(collection, self.count(collection), self._space(collection))

    def ensure(self, collection: str, *, space: str, dimension: int) -> None:
        """Create the collection (cosine, ``dimension``) unless it exists; refuse one holding another space."""
        if self._rest.call("GET", f"/collections/{collection}", "describe", missing=(404,)) is not None:
            check_space("qdrant", collection, self._space(collection), space)
            return
        self._rest.call(
            "PUT",
            f"/collections/{collection}",
            "create collection",
            {"vectors": {"size": dimension, "distance": "Cosine"}},
        )
        self._rest.call(
            "PUT",
            f"/collections/{collection}/index",
            "create payload index",
            {"field_name": "wing", "field_schema": "keyword"},
        )

    def push(self, collection: str, records: Sequence[MirrorRecord], *, space: str) -> None:
        """Upsert one batch (``wait=true``: the call returns once the points are applied)."""
        if not records:
            return
        points = [
            {
                "id": record_uuid(r.id),
                "vector": vector_list(r),
                "payload": {
                    "drawer_id": r.id,
                    "wing": r.wing,
                    "room": r.room,
                    "sealed": r.sealed,
                    "space": space,
                    "content": content_text(r),
                },
            }
            for r in records
        ]
        self._rest.call("PUT", f"/collections/{collection}/points?wait=true", "upsert", {"points": points})

    def query(self, collection: str, vector: Sequence[float], k: int, *, wing: str | None = None) -> list[str]:
        """Nearest points (``/points/search``), the drawer ids out of their payloads."""
        body: dict[str, object] = {
            "vector": [float(v) for v in vector],
            "limit": check_k(k),
            "with_payload": ["drawer_id"],
            "with_vector": False,
        }
        if wing is not None:
            body["filter"] = {"must": [{"key": "wing", "match": {"value": wing}}]}
        answer = self._rest.call("POST", f"/collections/{collection}/points/search", "query", body)
        hits = field(answer, "result", "qdrant", "query")
        if not isinstance(hits, list):
            raise BackendFailed("qdrant: query: the result is not a list")
        ids: list[object] = []
        for hit in hits:
            payload = hit.get("payload") if isinstance(hit, dict) else None
            if not isinstance(payload, dict):
                raise BackendFailed("qdrant: query: a hit carries no payload")
            ids.append(payload.get("drawer_id"))
        return candidate_ids(ids, k, backend="qdrant")

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete the points of ``ids``."""
        if ids:
            self._rest.call(
                "POST",
                f"/collections/{collection}/points/delete?wait=true",
                "delete",
                {"points": [record_uuid(i) for i in ids]},
            )

    def count(self, collection: str) -> int:
        """The exact point count."""
        answer = self._rest.call("POST", f"/collections/{collection}/points/count", "count", {"exact": True})
        return count_of(field(field(answer, "result", "qdrant", "count"), "count", "qdrant", "count"), "qdrant")

    def drop(self, collection: str) -> None:
        """Delete the collection (absent: nothing to do)."""
        self._rest.call("DELETE", f"/collections/{collection}", "drop", missing=(404,))

    def settle(self, collection: str) -> None:
        """Nothing to do: every upsert was sent with ``wait=true``."""
        del collection

    def close(self) -> None:
        """Close the session."""
        self._rest.close()
