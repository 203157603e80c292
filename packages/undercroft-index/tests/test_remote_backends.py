"""The backend contract, run against each of the five: a real Chroma server, Milvus Lite, a real PostgreSQL
with pgvector (the ``pgserver`` wheel), and (protocol level) Qdrant and Weaviate fakes speaking their
documented shapes.

Push, count, describe, wing-filtered query, delete, re-push (idempotent), another-space refusal and drop —
the same assertions for every backend, so no adapter can quietly differ from the others.
"""

from __future__ import annotations

import base64
import uuid
from collections.abc import Iterator

import numpy as np
import pytest
from protocol_fakes import FakeQdrant, FakeWeaviate, serving
from undercroft_index import (
    BackendFailed,
    IndexRefused,
    MilvusIndex,
    MirrorMismatch,
    MirrorRecord,
    PgvectorIndex,
    RemoteIndex,
    collection_name,
    open_backend,
    record_uuid,
)

pytestmark = pytest.mark.loopback

SPACE = "hash@8"
DIM = 8


def _records(count: int = 12) -> list[MirrorRecord]:
    rng = np.random.default_rng(7)
    out = []
    for i in range(count):
        vector = rng.normal(size=DIM)
        out.append(
            MirrorRecord(
                id=f"drawer_{i:04d}",
                content=b"\x01sealed" + bytes([i]) * 5,
                sealed=True,
                embedding=tuple(float(v) for v in vector / np.linalg.norm(vector)),
                wing="alpha" if i % 2 == 0 else "beta",
                room="r",
            )
        )
    return out


@pytest.fixture(scope="module")
def milvus_lite(milvus_lite_path: str) -> Iterator[MilvusIndex]:
    index = MilvusIndex.lite(milvus_lite_path)
    yield index
    index.close()


@pytest.fixture(params=["chroma", "milvus_lite", "pgvector", "qdrant_protocol_level", "weaviate_protocol_level"])
def backend(request: pytest.FixtureRequest) -> Iterator[RemoteIndex]:
    kind = request.param
    if kind == "chroma":
        index = open_backend("chroma", request.getfixturevalue("chroma_url"), variable="UNDERCROFT_CHROMA_URL")
        yield index
        index.close()
    elif kind == "milvus_lite":
        yield request.getfixturevalue("milvus_lite")
    elif kind == "pgvector":
        index = PgvectorIndex.connect(request.getfixturevalue("pgvector_dsn"))
        yield index
        index.close()
    else:
        fake = FakeQdrant() if kind.startswith("qdrant") else FakeWeaviate()
        with serving(fake) as url:
            name = kind.split("_")[0]
            index = open_backend(name, url, variable=f"UNDERCROFT_{name.upper()}_URL")
            yield index
            index.close()


def test_push_query_delete_and_describe(backend: RemoteIndex) -> None:
    collection = collection_name(f"contract-{uuid.uuid4().hex[:6]}")
    assert backend.describe(collection) is None  # no mirror is not a mirror of zero
    records = _records()
    backend.ensure(collection, space=SPACE, dimension=DIM)
    backend.push(collection, records[:5], space=SPACE)
    backend.push(collection, records[5:], space=SPACE)
    backend.push(collection, records[:3], space=SPACE)  # a re-push converges (idempotent by id)
    backend.settle(collection)  # (Milvus: a real flush)
    info = backend.describe(collection)
    assert info is not None and (info.records, info.space) == (12, SPACE)
    target = records[4]
    found = backend.query(collection, target.embedding, 3)
    assert found[0] == target.id and len(found) == 3
    in_beta = backend.query(collection, target.embedding, 12, wing="beta")
    assert target.id not in in_beta and in_beta and all(int(i[-4:]) % 2 == 1 for i in in_beta)
    backend.delete(collection, [target.id, "drawer_9999"])  # an absent id is not an error
    assert backend.count(collection) == 11
    assert target.id not in backend.query(collection, target.embedding, 12)
    with pytest.raises(MirrorMismatch, match=r"holds embeddings of hash@8"):
        backend.ensure(collection, space="other@8", dimension=DIM)
    backend.drop(collection)
    assert backend.describe(collection) is None
    backend.drop(collection)  # dropping what is absent is nothing to do


def test_chroma_holds_the_sealed_bytes_labels_and_embedding_only(chroma_url: str) -> None:
    """What the real Chroma server stores for a record, read back through its own API."""
    import httpx

    index = open_backend("chroma", chroma_url, variable="UNDERCROFT_CHROMA_URL")
    collection = collection_name("what-chroma-holds")
    index.ensure(collection, space=SPACE, dimension=DIM)
    [record] = _records(1)
    index.push(collection, [record], space=SPACE)
    base = f"{chroma_url}/api/v2/tenants/default_tenant/databases/default_database/collections"
    cid = httpx.get(f"{base}/{collection}").json()["id"]
    got = httpx.post(f"{base}/{cid}/get", json={"ids": [record.id], "include": ["documents", "metadatas"]}).json()
    assert base64.b64decode(got["documents"][0]) == record.content
    assert got["metadatas"][0] == {"wing": "alpha", "room": "r", "sealed": True, "space": SPACE}
    index.drop(collection)
    index.close()


def test_pgvector_holds_the_sealed_bytes_labels_and_embedding_only(pgvector_dsn: str) -> None:
    """What the real PostgreSQL stores for a record, read back with SQL of our own (not the adapter's)."""
    import psycopg

    index = PgvectorIndex.connect(pgvector_dsn)
    collection = collection_name("what-pgvector-holds")
    index.ensure(collection, space=SPACE, dimension=DIM)
    [record] = _records(1)
    index.push(collection, [record], space=SPACE)
    index.close()
    with psycopg.connect(pgvector_dsn) as raw:
        columns = [
            r[0]
            for r in raw.execute(
                "SELECT column_name FROM information_schema.columns WHERE table_name = %s ORDER BY ordinal_position",
                (collection,),
            )
        ]
        [row] = raw.execute(
            f"SELECT id, content, sealed, wing, room, space, embedding::text FROM {collection}"
        ).fetchall()
        [(space,)] = raw.execute("SELECT space FROM undercroft_mirrors WHERE collection = %s", (collection,)).fetchall()
    assert columns == ["id", "content", "sealed", "wing", "room", "space", "embedding"]
    assert row[:6] == (record.id, record.content, True, "alpha", "r", SPACE) and space == SPACE
    stored = [float(v) for v in row[6].strip("[]").split(",")]
    assert np.allclose(stored, record.embedding, atol=1e-6)
    index = PgvectorIndex.connect(pgvector_dsn)
    index.drop(collection)
    assert index.describe(collection) is None
    index.close()


def test_pgvector_a_hostile_table_name_or_wing_reaches_no_sql(pgvector_dsn: str) -> None:
    """A collection name is checked before it is formatted into SQL; a wing is always a bound parameter."""
    index = PgvectorIndex.connect(pgvector_dsn)
    try:
        with pytest.raises(IndexRefused, match="not a safe table name"):
            index.ensure("x; DROP TABLE undercroft_mirrors", space=SPACE, dimension=DIM)
        collection = collection_name("hostile-wing")
        index.ensure(collection, space=SPACE, dimension=DIM)
        index.push(collection, _records(4), space=SPACE)
        assert index.query(collection, _records(1)[0].embedding, 4, wing="alpha' OR '1'='1") == []
        assert index.count(collection) == 4
        index.drop(collection)
    finally:
        index.close()


def test_qdrant_protocol_level_points_are_uuids_carrying_the_drawer_id() -> None:
    fake = FakeQdrant()
    with serving(fake) as url:
        index = open_backend("qdrant", url, variable="UNDERCROFT_QDRANT_URL")
        collection = collection_name("uuid-shape")
        index.ensure(collection, space=SPACE, dimension=DIM)
        [record] = _records(1)
        index.push(collection, [record], space=SPACE)
        index.close()
    [(method, _path, body)] = [r for r in fake.requests if r[1].endswith("/points?wait=true")]
    [point] = body["points"]
    assert method == "PUT" and point["id"] == record_uuid(record.id) and str(uuid.UUID(point["id"])) == point["id"]
    assert point["payload"]["drawer_id"] == record.id and set(point["payload"]) == {
        "drawer_id",
        "wing",
        "room",
        "sealed",
        "space",
        "content",
    }


def test_weaviate_protocol_level_a_hostile_wing_stays_a_string_literal() -> None:
    fake = FakeWeaviate()
    with serving(fake) as url:
        index = open_backend("weaviate", url, variable="UNDERCROFT_WEAVIATE_URL")
        collection = collection_name("graphql-escape")
        index.ensure(collection, space=SPACE, dimension=DIM)
        index.push(collection, _records(4), space=SPACE)
        hostile = 'alpha"}) { drawer_id } } Aggregate { X'
        assert index.query(collection, _records(1)[0].embedding, 4, wing=hostile) == []
        index.close()
    [query] = [b["query"] for m, p, b in fake.requests if p == "/v1/graphql" and "nearVector" in b["query"]]
    assert '\\"}) { drawer_id }' in query  # escaped inside the literal, not closing it


@pytest.mark.parametrize("name", ["chroma", "qdrant", "weaviate", "milvus"])
def test_cleartext_to_a_non_loopback_host_is_refused_before_anything_is_sent(name: str) -> None:
    with pytest.raises(BackendFailed, match="cleartext http is allowed only to loopback"):
        open_backend(name, "http://10.1.2.3:6333", variable=f"UNDERCROFT_{name.upper()}_URL")


def test_pgvector_a_remote_host_without_tls_is_refused() -> None:
    with pytest.raises(BackendFailed, match="needs sslmode=require"):
        PgvectorIndex.connect("postgresql://u:pw@db.example.com/mirror")
    with pytest.raises(BackendFailed, match=r"refused"):
        PgvectorIndex.connect("host=127.1 dbname=x")  # a non-canonical numeric host, as the URL policy says


def test_a_hanging_backend_is_cut_off_by_the_timeout() -> None:
    import socket
    import time

    listener = socket.create_server(("127.0.0.1", 0))  # accepts, never answers
    port = listener.getsockname()[1]
    try:
        index = open_backend("chroma", f"http://127.0.0.1:{port}", variable="UNDERCROFT_CHROMA_URL", timeout=0.5)
        started = time.monotonic()
        with pytest.raises(BackendFailed, match=r"no answer .* in time"):
            index.describe(collection_name("hang"))
        assert time.monotonic() - started < 5
        index.close()
    finally:
        listener.close()


def test_milvus_over_grpc_takes_no_proxy_from_the_environment(milvus_url: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """gRPC honours http_proxy/grpc_proxy by default; the policy takes no proxy from the environment."""
    for name in ("http_proxy", "https_proxy", "grpc_proxy", "HTTP_PROXY"):
        monkeypatch.setenv(name, "http://127.0.0.1:9")  # a dead proxy: using it would fail the connection
    index = open_backend(
        "milvus", milvus_url, variable="UNDERCROFT_MILVUS_URL", timeout=30
    )  # generous: a used dead proxy is refused at once; a loaded box is slow
    try:
        assert index.describe(collection_name("no-proxy")) is None
    finally:
        index.close()


def test_milvus_never_borrows_a_channel_another_client_opened(milvus_url: str) -> None:
    """pymilvus shares one channel per address in a process: a channel opened by another client (without the
    policy's options) would carry its own proxy and size settings. Ours is dedicated, and closing it leaves
    the other client working."""
    from pymilvus import MilvusClient

    other = MilvusClient(uri=milvus_url, timeout=30)  # shared, the pymilvus default, no options of ours
    try:
        index = open_backend("milvus", milvus_url, variable="UNDERCROFT_MILVUS_URL", timeout=30)
        handler = index._client._get_connection()
        assert handler is not other._get_connection()
        assert handler._grpc_options["grpc.enable_http_proxy"] == 0
        index.close()
        other.list_collections()  # our close did not close a channel someone else uses
    finally:
        other.close()
