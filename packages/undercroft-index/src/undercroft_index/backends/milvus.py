"""Milvus through ``pymilvus`` (the ``milvus`` extra): a server URL policed first, or a local Milvus Lite file.

gRPC is pymilvus's own transport, so the URL passes undercroft_net's `police` before the client is built:
https anywhere (verified against ``UNDERCROFT_INDEX_CA`` when pinned), http to loopback only. A path ending
in ``.db`` is Milvus Lite, in process: no network at all. One collection per mirror: ``id`` (VARCHAR primary
key, the drawer id), ``vector`` (FLOAT_VECTOR, cosine), ``wing``, ``room``, ``sealed``, ``space`` and the at-rest
``content`` (base64); the space is the collection property ``undercroft_space``.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from undercroft_net import Endpoint, police

from undercroft_index._internal.shapes import check_space, content_text, vector_list
from undercroft_index.errors import BackendFailed, IndexRefused
from undercroft_index.remote import MirrorInfo, MirrorRecord, candidate_ids, check_k

__all__ = ["MAX_CONTENT_CHARS", "MilvusIndex"]

_MAX_ANSWER_BYTES = 16 * 1024 * 1024

#: Milvus's VARCHAR bound; a drawer's base64 at-rest content above it is refused, not truncated.
MAX_CONTENT_CHARS = 65535


def _quoted(value: str) -> str:
    # A Milvus boolean-expression string literal: JSON's escaping is a subset Milvus parses.
    return json.dumps(value)


class MilvusIndex:
    """A Milvus server or a Milvus Lite file (``MilvusIndex.lite(path)``)."""

    name = "milvus"

    def __init__(self, client: Any, destination: str, *, timeout: float = 10.0) -> None:
        """Wrap a built ``pymilvus.MilvusClient`` (use `connect` or `lite`)."""
        self._client = client
        self._destination = destination
        self._timeout = timeout

    @classmethod
    def connect(cls, endpoint: Endpoint, *, token: str | None = None, timeout: float = 10.0) -> MilvusIndex:
        """A Milvus server at ``endpoint`` (re-policed here; TLS verified against its pin when declared)."""
        endpoint = police(endpoint.url, variable=endpoint.variable, pin=endpoint.pin)
        options: dict[str, object] = {
            "uri": endpoint.origin,
            "timeout": timeout,
            # gRPC would otherwise take a proxy from http(s)_proxy/grpc_proxy (the policy takes none from the
            # environment), and read answers of any size (the REST backends are bounded too).
            "grpc_options": {"grpc.enable_http_proxy": 0, "grpc.max_receive_message_length": _MAX_ANSWER_BYTES},
        }
        if token:
            options["token"] = token
        if endpoint.scheme == "https":
            options["secure"] = True
            if endpoint.pin is not None:
                options["server_pem_path"] = str(endpoint.pin.path)
        return cls(_client(**options), endpoint.origin, timeout=timeout)

    @classmethod
    def lite(cls, path: str, *, timeout: float = 10.0) -> MilvusIndex:
        """Milvus Lite in a local file (``*.db``): in process, nothing on the network."""
        if not str(path).endswith(".db"):
            raise IndexRefused(f"a Milvus Lite store is a file ending in .db, got {path!r}")
        return cls(_client(uri=str(path), timeout=timeout), f"milvus-lite:{path}", timeout=timeout)

    @property
    def destination(self) -> str:
        """The server's origin, or ``milvus-lite:<path>``."""
        return self._destination

    def _call(self, step: str, method: str, *args: object, **kwargs: object) -> Any:
        try:
            return getattr(self._client, method)(*args, **kwargs)
        except Exception as error:  # noqa: BLE001 - pymilvus raises many types; each becomes one run failure
            raise BackendFailed(f"milvus: {step}: {type(error).__name__}: {str(error)[:200]}") from None

    def _exists(self, collection: str) -> bool:
        return bool(self._call("describe", "has_collection", collection))

    def _space(self, collection: str) -> str | None:
        described = self._call("describe", "describe_collection", collection)
        properties = described.get("properties") if isinstance(described, dict) else None
        space = properties.get("undercroft_space") if isinstance(properties, dict) else None
        return space if isinstance(space, str) else None

    def describe(self, collection: str) -> MirrorInfo | None:
        """The collection's count and recorded space, or None when it does not exist."""
        if not self._exists(collection):
            return None
        return MirrorInfo(collection, self.count(collection), self._space(collection))

    def ensure(self, collection: str, *, space: str, dimension: int) -> None:
        """Create the collection (schema above, cosine AUTOINDEX) unless it exists; refuse another space."""
        if self._exists(collection):
            check_space("milvus", collection, self._space(collection), space)
            return
        from pymilvus import DataType, MilvusClient

        schema = MilvusClient.create_schema(auto_id=False)
        schema.add_field("id", DataType.VARCHAR, is_primary=True, max_length=256)
        schema.add_field("vector", DataType.FLOAT_VECTOR, dim=dimension)
        for text in ("wing", "room", "space"):
            schema.add_field(text, DataType.VARCHAR, max_length=256)
        schema.add_field("sealed", DataType.BOOL)
        schema.add_field("content", DataType.VARCHAR, max_length=MAX_CONTENT_CHARS)
        index = MilvusClient.prepare_index_params()
        index.add_index(field_name="vector", index_type="AUTOINDEX", metric_type="COSINE")
        self._call(
            "create collection",
            "create_collection",
            collection,
            schema=schema,
            index_params=index,
            properties={"undercroft_space": space},
        )

    def push(self, collection: str, records: Sequence[MirrorRecord], *, space: str) -> None:
        """Upsert one batch."""
        if not records:
            return
        rows = []
        for r in records:
            content = content_text(r)
            if len(content) > MAX_CONTENT_CHARS:
                raise IndexRefused(f"milvus: drawer {r.id}'s at-rest content exceeds {MAX_CONTENT_CHARS} characters")
            rows.append(
                {
                    "id": r.id,
                    "vector": vector_list(r),
                    "wing": r.wing,
                    "room": r.room,
                    "space": space,
                    "sealed": r.sealed,
                    "content": content,
                }
            )
        self._call("upsert", "upsert", collection, rows)

    def query(self, collection: str, vector: Sequence[float], k: int, *, wing: str | None = None) -> list[str]:
        """Nearest ids (cosine), optionally ``wing == "…"``."""
        options: dict[str, object] = {"limit": check_k(k), "output_fields": []}
        if wing is not None:
            options["filter"] = f"wing == {_quoted(wing)}"
        answer = self._call("query", "search", collection, data=[[float(v) for v in vector]], **options)
        try:
            hits = list(answer[0])
        except (TypeError, IndexError, KeyError):
            raise BackendFailed("milvus: query: the answer does not hold one row of hits") from None
        return candidate_ids([h.get("id") if isinstance(h, dict) else h for h in hits], k, backend="milvus")

    def delete(self, collection: str, ids: Sequence[str]) -> None:
        """Delete ``ids``."""
        if ids:
            self._call("delete", "delete", collection, ids=list(ids))

    def count(self, collection: str) -> int:
        """``count(*)`` over the collection (live rows, deletes applied)."""
        answer = self._call("count", "query", collection, filter="", output_fields=["count(*)"])
        try:
            value = answer[0]["count(*)"]
        except (TypeError, IndexError, KeyError):
            raise BackendFailed("milvus: count: the answer holds no count(*)") from None
        if isinstance(value, bool) or not isinstance(value, int) or value < 0:
            raise BackendFailed(f"milvus: count: not a non-negative integer ({value!r})")
        return value

    def drop(self, collection: str) -> None:
        """Drop the collection (absent: nothing to do)."""
        if self._exists(collection):
            self._call("drop", "drop_collection", collection)

    def settle(self, collection: str) -> None:
        """Flush: upserts sit in growing segments, which Milvus searches by brute force (Lite: seconds per query
        at 10k rows); a flush seals them, so its index serves the searches that follow."""
        self._call("settle", "flush", collection)

    def close(self) -> None:
        """Close the client."""
        self._call("close", "close")


def _client(**options: object) -> Any:
    try:
        from pymilvus import MilvusClient
    except ImportError:
        raise BackendFailed("milvus: pymilvus is not installed (pip install 'undercroft-index[milvus]')") from None
    try:
        # Dedicated: pymilvus shares one channel per address across the process, and a shared channel opened
        # elsewhere (another client, a readiness probe) carries its own options, so it could honour
        # http_proxy/grpc_proxy and ignore the message cap. A dedicated channel is ours and closes with us.
        return MilvusClient(**options, dedicated=True)
    except Exception as error:  # noqa: BLE001 - a refused connection surfaces as several pymilvus types
        raise BackendFailed(f"milvus: cannot connect: {type(error).__name__}: {str(error)[:200]}") from None
