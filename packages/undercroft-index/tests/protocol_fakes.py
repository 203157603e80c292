"""Protocol-level stand-ins for the servers that cannot be installed here: Qdrant and Weaviate.

Each fake keeps state in memory and answers ONLY the documented request shapes the adapters send, with the
documented answer shapes (Qdrant REST ``/collections``; Weaviate ``/v1/schema``, ``/v1/batch/objects``,
``/v1/objects``, ``/v1/graphql``) — anything else is a 400/AssertionError, so an adapter
drifting from the protocol fails here. The HTTP fakes are real loopback servers: the adapters reach them
through the policed client exactly as they would reach the real thing. This is protocol-level testing,
not a test against the servers themselves; docs/remote-index.md says so.
"""

from __future__ import annotations

import json
import re
from contextlib import AbstractContextManager
from typing import Any

import numpy as np


def _cosine_order(points: dict[str, dict[str, Any]], vector: list[float], keep: Any) -> list[str]:
    query = np.asarray(vector, dtype=np.float64)
    query /= np.linalg.norm(query) or 1.0
    scored = []
    for key, point in points.items():
        if not keep(point):
            continue
        row = np.asarray(point["vector"], dtype=np.float64)
        scored.append((-float(row @ query / (np.linalg.norm(row) or 1.0)), key))
    return [key for _, key in sorted(scored)]


class FakeQdrant:
    """Qdrant's REST shapes (collections, points upsert/search/scroll/count/delete, payload index)."""

    def __init__(self) -> None:
        self.collections: dict[str, dict[str, Any]] = {}
        self.requests: list[tuple[str, str, Any]] = []

    def handle(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        self.requests.append((method, path, body))
        ok = lambda result: (200, {"result": result, "status": "ok", "time": 0.001})  # noqa: E731
        match = re.fullmatch(r"/collections/([A-Za-z0-9_-]+)(/.*)?", path.split("?")[0])
        assert match, path
        name, rest = match.group(1), match.group(2) or ""
        held = self.collections.get(name)
        if held is None and not (method == "PUT" and rest == ""):
            return 404, {"status": {"error": f"Not found: Collection `{name}` doesn't exist!"}, "time": 0.0}
        if method == "GET" and rest == "":
            vectors = held["vectors"]
            return ok(
                {"status": "green", "points_count": len(held["points"]), "config": {"params": {"vectors": vectors}}}
            )
        if method == "PUT" and rest == "":
            assert set(body) == {"vectors"} and body["vectors"]["distance"] == "Cosine", body
            self.collections[name] = {"vectors": body["vectors"], "points": {}, "indexes": {}}
            return ok(True)
        if method == "DELETE" and rest == "":
            del self.collections[name]
            return ok(True)
        if method == "PUT" and rest == "/index":
            assert body == {"field_name": "wing", "field_schema": "keyword"}, body
            held["indexes"][body["field_name"]] = body["field_schema"]
            return ok({"operation_id": 1, "status": "completed"})
        if method == "PUT" and rest == "/points":
            for point in body["points"]:
                assert set(point) == {"id", "vector", "payload"} and len(point["vector"]) == held["vectors"]["size"]
                held["points"][point["id"]] = {"vector": point["vector"], "payload": point["payload"]}
            return ok({"operation_id": 2, "status": "completed"})
        if method == "POST" and rest == "/points/search":
            assert set(body) <= {"vector", "limit", "filter", "with_payload", "with_vector"}, body
            wing = None
            if "filter" in body:
                [condition] = body["filter"]["must"]
                assert condition["key"] == "wing"
                wing = condition["match"]["value"]
            order = _cosine_order(
                held["points"], body["vector"], lambda p: wing is None or p["payload"].get("wing") == wing
            )[: body["limit"]]
            fields = body["with_payload"]
            return ok(
                [
                    {
                        "id": key,
                        "version": 0,
                        "score": 0.5,
                        "payload": {f: held["points"][key]["payload"][f] for f in fields},
                    }
                    for key in order
                ]
            )
        if method == "POST" and rest == "/points/scroll":
            keys = list(held["points"])[: body["limit"]]
            fields = body["with_payload"]
            points = [{"id": k, "payload": {f: held["points"][k]["payload"][f] for f in fields}} for k in keys]
            return ok({"points": points, "next_page_offset": None})
        if method == "POST" and rest == "/points/count":
            assert body == {"exact": True}
            return ok({"count": len(held["points"])})
        if method == "POST" and rest == "/points/delete":
            for key in body["points"]:
                held["points"].pop(key, None)
            return ok({"operation_id": 3, "status": "completed"})
        return 400, {"status": {"error": f"unexpected {method} {path}"}}


class FakeWeaviate:
    """Weaviate's shapes: schema classes, batch objects, object delete, GraphQL Get/nearVector and Aggregate."""

    _GET = re.compile(
        r"\{ Get \{ (\w+)\(nearVector: \{vector: (\[.*?\])\}, limit: (\d+)"
        r'(?:, where: \{path: \["wing"\], operator: Equal, valueText: ("(?:[^"\\]|\\.)*")\})?\) \{ drawer_id \} \} \}'
    )
    _AGGREGATE = re.compile(r"\{ Aggregate \{ (\w+) \{ meta \{ count \} \} \} \}")

    def __init__(self) -> None:
        self.classes: dict[str, dict[str, Any]] = {}
        self.requests: list[tuple[str, str, Any]] = []

    def handle(self, method: str, path: str, body: Any) -> tuple[int, Any]:
        self.requests.append((method, path, body))
        if path.startswith("/v1/schema/") and method in ("GET", "DELETE"):
            name = path.removeprefix("/v1/schema/")
            if name not in self.classes:
                return 404, None
            if method == "DELETE":
                del self.classes[name]
                return 200, None
            return 200, self.classes[name]["schema"]
        if path == "/v1/schema" and method == "POST":
            assert body["vectorizer"] == "none" and body["class"][:1].isupper(), body
            self.classes[body["class"]] = {"schema": body, "objects": {}}
            return 200, body
        if path == "/v1/batch/objects" and method == "POST":
            answers = []
            for item in body["objects"]:
                klass = self.classes[item["class"]]
                klass["objects"][item["id"]] = {"vector": item["vector"], "properties": item["properties"]}
                answers.append({"class": item["class"], "id": item["id"], "result": {}})
            return 200, answers
        if path.startswith("/v1/objects/") and method == "DELETE":
            _, _, klass, key = path.split("/")[1:]
            objects = self.classes[klass]["objects"]
            if key not in objects:
                return 404, None
            del objects[key]
            return 204, None
        if path == "/v1/graphql" and method == "POST":
            query = body["query"]
            if found := self._GET.fullmatch(query):
                klass, vector, limit, wing = found.groups()
                objects = self.classes[klass]["objects"]
                wanted = None if wing is None else json.loads(wing)
                order = _cosine_order(
                    objects, json.loads(vector), lambda o: wanted is None or o["properties"]["wing"] == wanted
                )[: int(limit)]
                rows = [{"drawer_id": objects[key]["properties"]["drawer_id"]} for key in order]
                return 200, {"data": {"Get": {klass: rows}}}
            if found := self._AGGREGATE.fullmatch(query):
                klass = found.group(1)
                return 200, {"data": {"Aggregate": {klass: [{"meta": {"count": len(self.classes[klass]["objects"])}}]}}}
            return 200, {"errors": [{"message": f"unparsed query {query[:80]}"}]}
        return 400, {"error": [{"message": f"unexpected {method} {path}"}]}


def serving(fake: Any) -> AbstractContextManager[str]:
    """Serve ``fake`` on a free loopback port (tests/remote_servers.serving_json); yields its base URL."""
    from remote_servers import serving_json  # tests/ is on sys.path (the root conftest)

    return serving_json(fake)
