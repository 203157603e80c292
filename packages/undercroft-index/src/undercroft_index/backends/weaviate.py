"""Weaviate over its REST (``/v1/schema``, ``/v1/batch/objects``, ``/v1/objects``) and GraphQL (``/v1/graphql``)
APIs, through the policed client.

A class per mirror (Weaviate capitalises class names: ``Undercroft_<vault>_<hex>``), ``vectorizer: none``,
cosine distance; each object's id is `record_uuid` of the drawer id and its properties are ``drawer_id``,
``wing``, ``room``, ``sealed``, ``space`` and the at-rest ``content`` (base64). The space is also the class
description. Values reach GraphQL only as JSON string literals (a wing cannot break out of the query).
Tested at protocol level against Weaviate's documented shapes (no Weaviate server can be installed here).
"""

from __future__ import annotations

import json
from collections.abc import Sequence

from undercroft_net import Endpoint

from undercroft_index._internal.rest import DEFAULT_TIMEOUT, RestSession
from undercroft_index._internal.shapes import check_space, content_text, count_of, field, space_document, vector_list
from undercroft_index.errors import BackendFailed
from undercroft_index.remote import MirrorInfo, MirrorRecord, candidate_ids, check_k, record_uuid

__all__ = ["WeaviateIndex", "class_name"]

_PROPERTIES = (
    ("drawer_id", "text"),
    ("wing", "text"),
    ("room", "text"),
    ("sealed", "boolean"),
    ("space", "text"),
    ("content", "text"),
)


def class_name(collection: str) -> str:
    """Weaviate's form of a collection name (the first letter upper-case)."""
    return collection[:1].upper() + collection[1:]


class WeaviateIndex:
    """A Weaviate server; ``api_key`` is sent as a bearer when declared."""

    name = "weaviate"

    def __init__(self, endpoint: Endpoint, *, api_key: str | None = None, timeout: float = DEFAULT_TIMEOUT) -> None:
        """Open the session; nothing is sent until the first call."""
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else None
        self._rest = RestSession("weaviate", endpoint, timeout=timeout, headers=headers)

    @property
    def destination(self) -> str:
        """Scheme, host and port of the server."""
        return self._rest.destination

    def _schema(self, collection: str) -> dict[str, object] | None:
        found = self._rest.call("GET", f"/v1/schema/{class_name(collection)}", "describe", missing=(404,))
        if found is not None and not isinstance(found, dict):
            raise BackendFailed("weaviate: describe: the class answer is not an object")
        return found

    @staticmethod
    def _space(schema: dict[str, object]) -> str | None:
        try:
            space = json.loads(str(schema.get("description") or "")).get("undercroft_space")
        except (ValueError, AttributeError):
            return None
        return space if isinstance(space, str) else None

    def describe(self, collection: str) -> MirrorInfo | None:
        """The class's object count and recorded space, or None when the class does not exist."""
        schema = self._schema(collection)
        if schema is None:
            return None
        return MirrorInfo(collection, self.count(collection), self._space(schema))

    def ensure(self, collection: str, *, space: str, dimension: int) -> None:
        """Create the class unless it exists; refuse one recorded for another space."""
        schema = self._schema(collection)
        if schema is not None:
            check_space("weaviate", collection, self._space(schema), space)
            return
        self._rest.call(
            "POST",
            "/v1/schema",
            "create class",
            {
                "class": class_name(collection),
                "description": space_document(space),
                "vectorizer": "none",
                "vectorIndexConfig": {"distance": "cosine"},
                "properties": [{"name": n, "dataType": [t]} for n, t in _PROPERTIES],
            },
        )

    def push(self, collection: str, records: Sequence[MirrorRecord], *, space: str) -> None:
        """Batch-create (upsert by id) one batch; any per-object error fails the batch."""
        if not records:
            return
        objects = [
            {
                "class": class_name(collection),
                "id": record_uuid(r.id),
                "vector": vector_list(r),
                "properties": {
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
        answer = self._rest.call("POST", "/v1/batch/objects", "upsert", {"objects": objects})
        if not isinstance(answer, list):
            raise BackendFailed("weaviate: upsert: the batch answer is not a list")
        for item in answer:
            errors = ((item or {}).get("result") or {}).get("errors") if isinstance(item, dict) else None
            if errors:
                raise BackendFailed(f"weaviate: upsert: an object was refused: {str(errors)[:200]!r}")

    def _graphql(self, query: str, step: str) -> object:
        answer = self._rest.call("POST", "/v1/graphql", step, {"query": query})
        if isinstance(answer, dict) and answer.get("errors"):
            raise BackendFailed(f"weaviate: {step}: {str(answer['errors'])[:200]!r}")
        return field(answer, "data", "weaviate", step)

    def query(self, collection: str, vector: Sequence[float], k: int, *, wing: str | None = None) -> list[str]:
        """``Get { Class(nearVector …, limit …, where wing = …) { drawer_id } }``."""
        klass = class_name(collection)
        arguments = [f"nearVector: {{vector: {json.dumps([float(v) for v in vector])}}}", f"limit: {check_k(k)}"]
        if wing is not None:
            arguments.append(f'where: {{path: ["wing"], operator: Equal, valueText: {json.dumps(wing)}}}')
        data = self._graphql(f"{{ Get {{ {klass}({', '.join(arguments)}) {{ drawer_id }} }} }}", "query")
        rows = field(field(data, "Get", "weaviate", "query"), klass, "weaviate", "query")
        if not isinstance(rows, list):
            raise BackendFailed("weaviate: query: the rows are not a list")
        return candidate_ids([r.get("drawer_id") if isinstance(r, dict) else r for r in rows], k, backend="weaviate")

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete each object by id (an absent one answers 404, which is not an error)."""
        klass = class_name(collection)
        for drawer_id in ids:
            self._rest.call(
                "DELETE", f"/v1/objects/{klass}/{record_uuid(drawer_id)}", "delete", ok=(200, 204), missing=(404,)
            )

    def count(self, collection: str) -> int:
        """``Aggregate { Class { meta { count } } }``."""
        klass = class_name(collection)
        data = self._graphql(f"{{ Aggregate {{ {klass} {{ meta {{ count }} }} }} }}", "count")
        rows = field(field(data, "Aggregate", "weaviate", "count"), klass, "weaviate", "count")
        if not isinstance(rows, list) or len(rows) != 1:
            raise BackendFailed("weaviate: count: the answer does not hold one aggregate")
        return count_of(field(field(rows[0], "meta", "weaviate", "count"), "count", "weaviate", "count"), "weaviate")

    def drop(self, collection: str) -> None:
        """Delete the class and its objects (absent: nothing to do)."""
        self._rest.call("DELETE", f"/v1/schema/{class_name(collection)}", "drop", missing=(404,))

    def settle(self, collection: str) -> None:
        """Nothing to do: Weaviate indexes each batch as it lands."""
        del collection

    def close(self) -> None:
        """Close the session."""
        self._rest.close()
