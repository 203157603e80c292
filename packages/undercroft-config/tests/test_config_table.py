"""Table-driven: every registered declaration with a good value and a bad value, judged by its doctrine."""

from __future__ import annotations

from pathlib import Path

import pytest
import undercroft_config as config
from undercroft_config import Doctrine, Status

CA = "@CA@"  # replaced by the fixture's PEM path
NO_BAD = None  # opaque or presence-triggered: no parse exists, so no value is illegal

TABLE: dict[str, tuple[str, str | None]] = {
    "UNDERCROFT_HOME": ("/srv/palace", NO_BAD),
    "UNDERCROFT_PASSPHRASE": ("correct horse battery", "secret\n"),
    "UNDERCROFT_LANG": ("de", NO_BAD),
    "UNDERCROFT_EMBEDDER": ("onnx", "openai"),
    "UNDERCROFT_EMBED_URL": ("https://embed.internal/v1", "http://embed.internal"),
    "UNDERCROFT_EMBED_MODEL": ("bge-m3", NO_BAD),
    "UNDERCROFT_EMBED_API": ("openai", "tei2"),
    "UNDERCROFT_EMBED_KEY": ("k-123", NO_BAD),
    "UNDERCROFT_EMBED_DIM": ("1024", "0"),
    "UNDERCROFT_EMBED_CA": (CA, "/nonexistent/root.crt"),
    "UNDERCROFT_ONNX_MODEL": ("/models/model.onnx", NO_BAD),
    "UNDERCROFT_ONNX_TOKENIZER": ("/models/tokenizer.json", NO_BAD),
    "UNDERCROFT_ONNX_NAME": ("bge-m3", NO_BAD),
    "UNDERCROFT_RERANKER": ("colbert-ort", "colbert_ort"),
    "UNDERCROFT_RERANK_MODEL": ("/models/r.onnx", NO_BAD),
    "UNDERCROFT_RERANK_TOKENIZER": ("/models/r.json", NO_BAD),
    "UNDERCROFT_RERANK_NAME": ("bge-reranker-v2", NO_BAD),
    "UNDERCROFT_RERANK_TOP_N": ("30", "1_000"),
    "UNDERCROFT_LATE_TOP_N": ("400", "-1"),
    "UNDERCROFT_COLBERT_MODEL": ("/m/c.onnx", NO_BAD),
    "UNDERCROFT_COLBERT_QUERY_MODEL": ("/m/q.onnx", NO_BAD),
    "UNDERCROFT_COLBERT_TOKENIZER": ("/m/t.json", NO_BAD),
    "UNDERCROFT_COLBERT_NAME": ("colbertv2", NO_BAD),
    "UNDERCROFT_ORT_POOL": ("2", "two"),
    "UNDERCROFT_FORCE_EMBEDDER": ("1", NO_BAD),
    "UNDERCROFT_RETRIEVAL": ("pq", "ivf"),
    "UNDERCROFT_SEARCH_TRACE": ("1", NO_BAD),
    "UNDERCROFT_FUSION": ("legacy", "hybrid"),
    "UNDERCROFT_FUSION_WEIGHT": ("0.6", "heavy"),
    "UNDERCROFT_TRAIN_SOURCE_CAP": ("8", "0"),
    "UNDERCROFT_FTS_PREFILTER_MIN": ("off", "2k"),
    "UNDERCROFT_IVF_MIN": ("16384", "8192.0"),
    "UNDERCROFT_IVF_NPROBE": ("16", "many"),
    "UNDERCROFT_WING_PQ_MIN": ("2048", "-5"),
    "UNDERCROFT_POOL_DIV": ("32", "1/64"),
    "UNDERCROFT_PQ_PAGE_MIN": ("65536", "yes"),
    "UNDERCROFT_TOK_PQ_MIN": ("512", ""),
    "UNDERCROFT_FDE_PQ_MIN": ("512", "x"),
    "UNDERCROFT_FDE_IVF_MIN": ("100000", "1e5"),
    "UNDERCROFT_FDE_NPROBE": ("8", "0"),
    "UNDERCROFT_FDE_REPS": ("20", "65"),
    "UNDERCROFT_FDE_KSIM": ("5", "13"),
    "UNDERCROFT_FDE_DPROJ": ("16", "0"),
    "UNDERCROFT_FDE_SEED": ("42", "-1"),
    "UNDERCROFT_TRUST_FLOOR": ("standard", "trustd"),
    "UNDERCROFT_ADMIT_TRUSTED_SOURCES": ("cli,import", NO_BAD),
    "UNDERCROFT_ADMISSION": ("quarantine", "on"),
    "UNDERCROFT_ADMISSION_LLM": ("advisory", "auto"),
    "UNDERCROFT_ADMISSION_RATE": ("20/60", "20 per minute"),
    "UNDERCROFT_READ_AUDIT": ("chain", "1"),
    "UNDERCROFT_AUDIT_CEILING": ("1000000", "1M"),
    "UNDERCROFT_SEMANTIC_GATE": ("0.42", "1.5"),
    "UNDERCROFT_SEMANTIC_FLOOR": ("0.5", "0.99"),
    "UNDERCROFT_QDRANT_URL": ("https://qdrant-tls:6334", "http://qdrant:6333"),
    "UNDERCROFT_CHROMA_URL": ("http://127.0.0.1:8000", "ftp://chroma"),
    "UNDERCROFT_MILVUS_URL": ("http://[::1]:19530", "http://10.0.0.5:19530"),
    "UNDERCROFT_WEAVIATE_URL": ("https://weaviate.internal", ""),
    "UNDERCROFT_PGVECTOR_DSN": ("postgresql://u:pw@db.internal/v?sslmode=require", "postgresql://u:pw@db/v"),
    "UNDERCROFT_INDEX_CA": (CA, "/etc/passwd-nonexistent"),
    "UNDERCROFT_MCP_HTTP_TOKEN": ("0123456789abcdef", ""),
    "UNDERCROFT_ASSERTION_SECRET": ("s3cret", "s3cret "),
    "UNDERCROFT_METRICS": ("1", "enabled"),
    "UNDERCROFT_SAMPLE_INTERVAL_MS": ("5000", "0"),
    "UNDERCROFT_STREAM_HEARTBEAT_MS": ("200", "10"),
    "UNDERCROFT_LLM_URL": ("http://localhost:11434", "http://llm.lan:11434"),
    "UNDERCROFT_LLM_MODEL": ("llama3.2", NO_BAD),
    "UNDERCROFT_LLM_API": ("openai", "anthropic"),
    "UNDERCROFT_LLM_CA": (CA, "garbage"),
    "UNDERCROFT_LLM_KEY": ("sk-1", NO_BAD),
    "UNDERCROFT_LOG": ("debug", NO_BAD),
    "UNDERCROFT_LOG_FORMAT": ("json", NO_BAD),
    "UNDERCROFT_OTLP_ENDPOINT": ("https://collector.internal", ""),
    "UNDERCROFT_OTLP_CA": (CA, ""),
    "UNDERCROFT_OTLP_HEADERS": ("authorization=Bearer t", NO_BAD),
    "UNDERCROFT_SERVICE_NAME": ("undercroft", NO_BAD),
    "UNDERCROFT_ORCH_DB": ("/var/lib/orch.db", NO_BAD),
    "UNDERCROFT_ORCH_KEY": ("k" * 32, "k" * 32 + "\n"),
    "UNDERCROFT_ORCH_ADMIN_TOKEN": ("a" * 16, "a" * 15),
    "UNDERCROFT_ORCH_ENGINE_CA": (CA, "/nonexistent"),
    "UNDERCROFT_ORCH_ADDR": ("0.0.0.0:9000", "0.0.0.0"),
    "UNDERCROFT_ORCH_METRICS_ADDR": ("127.0.0.1:9100", "127.0.0.1:99999"),
    "UNDERCROFT_ORCH_METRICS_TOKEN": ("m" * 20, " "),
    "UNDERCROFT_ORCH_RATE_LIMIT": ("100", "100/min"),
    "UNDERCROFT_VS_URL": ("http://127.0.0.1:7000", "http://mempalace.example"),
    "UNDERCROFT_VS_ADD_PATH": ("/add", NO_BAD),
    "UNDERCROFT_VS_SEARCH_PATH": ("/search", NO_BAD),
    "UNDERCROFT_VS_BEARER": ("b" * 10, "b\t"),
}


def test_the_table_covers_every_registered_declaration() -> None:
    assert set(TABLE) == set(config.REGISTRY)


def _env(name: str, raw: str, ca_file: Path) -> dict[str, str]:
    return {name: str(ca_file) if raw == CA else raw}


@pytest.mark.parametrize("name", sorted(TABLE))
def test_good_value_is_validated_or_accepted(name: str, ca_file: Path) -> None:
    entry = config.declaration(name)
    outcome = config.resolve(name, _env(name, TABLE[name][0], ca_file))
    expected = Status.ACCEPTED if entry.doctrine in (Doctrine.ACCEPT, Doctrine.PRESENCE) else Status.VALIDATED
    assert outcome.status is expected, outcome.message
    assert outcome.message is None


@pytest.mark.parametrize("name", sorted(n for n, (_, bad) in TABLE.items() if bad is not None))
def test_bad_value_warns_or_refuses_as_its_doctrine_says(name: str, ca_file: Path) -> None:
    entry = config.declaration(name)
    bad = TABLE[name][1]
    assert bad is not None
    env = _env(name, bad, ca_file)
    if entry.doctrine is Doctrine.REFUSE:
        with pytest.raises(config.Refused) as caught:
            config.resolve(name, env)
        assert caught.value.name == name
        message = str(caught.value)
        assert message.startswith(f"{name}=")
        assert "refuses to start" in message
        assert f"legal: {entry.legal}" in message
    else:
        assert entry.doctrine is Doctrine.WARN
        outcome = config.resolve(name, env)
        assert outcome.status is Status.WARNED
        assert outcome.message is not None and outcome.message.startswith(f"{name}={bad!r}")
        assert f"legal: {entry.legal}" in outcome.message
        assert outcome.value == entry.fallback({}), "a warning keeps the default"


@pytest.mark.parametrize("name", sorted(n for n, (_, bad) in TABLE.items() if bad is None))
def test_opaque_declarations_have_no_refuse_or_warn_doctrine(name: str) -> None:
    assert config.declaration(name).declaration_class is config.DeclarationClass.OPAQUE


# Declarations that turn a protection on or pin a path: declining is declarable. (Endpoints, credentials
# and the embedder are declined by leaving them unset; there is always some vector space.)
DECLINABLE = sorted(
    n
    for n, d in config.REGISTRY.items()
    if d.doctrine is Doctrine.REFUSE and d.type in ("enum", "rate", "CA pin", "float") and n != "UNDERCROFT_EMBEDDER"
)


def test_the_documented_protections_are_all_declinable() -> None:
    documented = {
        "UNDERCROFT_TRUST_FLOOR",
        "UNDERCROFT_ADMISSION",
        "UNDERCROFT_SEMANTIC_GATE",
        "UNDERCROFT_READ_AUDIT",
        "UNDERCROFT_ADMISSION_RATE",
        "UNDERCROFT_EMBED_CA",
        "UNDERCROFT_INDEX_CA",
        "UNDERCROFT_LLM_CA",
        "UNDERCROFT_OTLP_CA",
        "UNDERCROFT_ORCH_ENGINE_CA",
    }
    assert documented <= set(DECLINABLE)
    assert len([n for n in config.REGISTRY if n.endswith("_CA")]) == 5


@pytest.mark.parametrize("name", DECLINABLE)
def test_off_is_legal_for_every_protection(name: str) -> None:
    assert config.resolve(name, {name: "off"}).status is Status.VALIDATED
    assert config.resolve(name, {name: "OFF"}).status is Status.VALIDATED


@pytest.mark.parametrize("name", sorted(n for n, d in config.REGISTRY.items() if d.secret))
def test_refusal_messages_never_echo_a_secret(name: str) -> None:
    with pytest.raises(config.Refused) as caught:
        config.resolve(name, {name: "hunter2-but-long \n"})
    assert "hunter2" not in str(caught.value)
    assert "<18 characters, ends in whitespace>" in str(caught.value)


def test_unset_resolves_to_the_default_with_status_unset() -> None:
    for name, entry in config.REGISTRY.items():
        outcome = config.evaluate(name, {})
        assert outcome.status is Status.UNSET
        assert outcome.value == entry.fallback({})
