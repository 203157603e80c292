"""The start-up resolver: `config check`'s report enforced, over one `Build` of capabilities."""

from __future__ import annotations

import pytest
import undercroft_config as config
from undercroft_config import Build, Capability, Status

HASH_ONLY = Build.of([Capability.EMBEDDER_HASH])
EVERYTHING = Build.of(Capability)

#: One declaration per capability, with a value selecting it.
SELECTING = {
    Capability.EMBEDDER_HASH: ("UNDERCROFT_EMBEDDER", "hash"),
    Capability.EMBEDDER_ONNX: ("UNDERCROFT_EMBEDDER", "onnx"),
    Capability.EMBEDDER_ORT: ("UNDERCROFT_EMBEDDER", "ort"),
    Capability.EMBEDDER_HTTP: ("UNDERCROFT_EMBEDDER", "HTTP "),
    Capability.RERANKER_ONNX: ("UNDERCROFT_RERANKER", "onnx"),
    Capability.RERANKER_ORT: ("UNDERCROFT_RERANKER", "ort"),
    Capability.RERANKER_COLBERT: ("UNDERCROFT_RERANKER", "colbert"),
    Capability.RERANKER_COLBERT_ORT: ("UNDERCROFT_RERANKER", "colbert-ort"),
    Capability.RETRIEVAL_PQ: ("UNDERCROFT_RETRIEVAL", "pq"),
    Capability.RETRIEVAL_FDE: ("UNDERCROFT_RETRIEVAL", "fde"),
    Capability.RETRIEVAL_HNSW: ("UNDERCROFT_RETRIEVAL", "hnsw"),
    Capability.ADMISSION_ADVISOR: ("UNDERCROFT_ADMISSION_LLM", "advisory"),
    Capability.INDEX_QDRANT: ("UNDERCROFT_QDRANT_URL", "https://index.example:6333"),
    Capability.INDEX_CHROMA: ("UNDERCROFT_CHROMA_URL", "http://127.0.0.1:8000"),
    Capability.INDEX_MILVUS: ("UNDERCROFT_MILVUS_URL", "https://index.example"),
    Capability.INDEX_WEAVIATE: ("UNDERCROFT_WEAVIATE_URL", "https://index.example"),
    Capability.INDEX_PGVECTOR: ("UNDERCROFT_PGVECTOR_DSN", "postgres://u:secret@db.example/x?sslmode=require"),
    Capability.TELEMETRY_OTLP: ("UNDERCROFT_OTLP_ENDPOINT", "https://otel.example:4318"),
    Capability.TELEMETRY_METRICS: ("UNDERCROFT_METRICS", "1"),
}


def test_every_capability_has_a_selecting_declaration() -> None:
    assert set(SELECTING) == set(Capability)


@pytest.mark.parametrize("capability", list(Capability), ids=str)
def test_a_value_selecting_a_missing_capability_refuses_and_wiring_it_flips_the_verdict(
    capability: Capability,
) -> None:
    name, value = SELECTING[capability]
    env = {name: value}
    wired = [capability]
    if capability is Capability.RETRIEVAL_FDE:  # the tier reads ColBERT token matrices: it needs the encoder too
        env["UNDERCROFT_RERANKER"] = "colbert"
        wired.append(Capability.RERANKER_COLBERT)
    [entry] = [e for e in config.check(env, build=Build.of(wired[1:])).entries if e.name == name]
    assert entry.status is Status.REFUSED
    assert entry.message is not None and entry.message.startswith(f"{name}=")
    assert f"this build has no {capability.description} ({capability.value})" in entry.message
    assert "secret" not in entry.message  # a DSN's password is never echoed
    assert config.check(env, build=Build.of(wired)).starts
    assert config.check(env, build=EVERYTHING).starts


def test_fde_without_a_colbert_encoder_refuses_naming_the_variable_to_set() -> None:
    [entry] = config.check({"UNDERCROFT_RETRIEVAL": "fde"}, build=EVERYTHING).entries
    assert entry.status is Status.REFUSED and entry.message is not None
    assert "no ColBERT encoder is configured; declare UNDERCROFT_RERANKER=colbert" in entry.message
    for reranker in ("colbert", "colbert-ort"):
        assert config.check({"UNDERCROFT_RETRIEVAL": "fde", "UNDERCROFT_RERANKER": reranker}, build=EVERYTHING).starts
    assert not config.check({"UNDERCROFT_RETRIEVAL": "fde", "UNDERCROFT_RERANKER": "onnx"}, build=EVERYTHING).starts


def test_declining_selects_nothing() -> None:
    env = {
        "UNDERCROFT_RERANKER": "off",
        "UNDERCROFT_RETRIEVAL": "off",
        "UNDERCROFT_ADMISSION_LLM": "off",
        "UNDERCROFT_METRICS": "0",
    }
    assert config.check(env, build=Build.of([])).starts


def test_the_remedy_offers_off_only_where_off_is_legal() -> None:
    [retrieval] = config.check({"UNDERCROFT_RETRIEVAL": "pq"}, build=HASH_ONLY).entries
    [embedder] = config.check({"UNDERCROFT_EMBEDDER": "http"}, build=HASH_ONLY).entries
    assert "unset it or declare off" in (retrieval.message or "")
    assert "unset it (default: hash)" in (embedder.message or "")


def test_start_raises_every_refusal_at_once_and_returns_warnings_to_print() -> None:
    env = {"UNDERCROFT_TRUST_FLOOR": "bogus", "UNDERCROFT_RETRIEVAL": "pq", "UNDERCROFT_FUSION": "rrf"}
    with pytest.raises(config.StartRefused) as refused:
        config.start(env, build=HASH_ONLY)
    assert refused.value.names == ("UNDERCROFT_RETRIEVAL", "UNDERCROFT_TRUST_FLOOR")
    assert "2 declarations" in str(refused.value) and "UNDERCROFT_TRUST_FLOOR='bogus' refuses" in str(refused.value)
    assert isinstance(refused.value, ValueError) and isinstance(refused.value, config.Error)
    lines = config.start({"UNDERCROFT_FUSION": "rrf", "UNDERCROFT_POOL_DVI": "8"}, build=HASH_ONLY)
    assert lines == (
        "UNDERCROFT_FUSION='rrf': rrf was removed (measured 7.3pp worse than bm25); falling back to bm25",
        "UNDERCROFT_POOL_DVI is not a known declaration; did you mean UNDERCROFT_POOL_DIV?",
    )
    assert config.start({}, build=HASH_ONLY) == ()
