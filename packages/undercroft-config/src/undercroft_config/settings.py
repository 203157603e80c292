"""Typed accessors the store and the CLI call: one per setting they read, each raising `Refused` on refusal.

Every accessor takes the environment mapping explicitly (default `os.environ`) so tests inject one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TypeVar, cast

from undercroft_config._internal.catalog_engine import LANGUAGES
from undercroft_config.resolution import value
from undercroft_config.values import (
    Admission,
    AdmissionAdvisor,
    CaPin,
    EmbedApi,
    Embedder,
    Fusion,
    LlmApi,
    Off,
    Rate,
    ReadAudit,
    Reranker,
    Retrieval,
    Secret,
    TrustClass,
)

__all__ = [
    "ServedEndpoint",
    "admission",
    "admission_advisor",
    "admission_rate",
    "assertion_secret",
    "audit_ceiling",
    "embed_endpoint",
    "embedder",
    "fde_compression",
    "fde_parameters",
    "force_embedder",
    "fts_prefilter_min",
    "fusion",
    "fusion_weight",
    "home",
    "http_token",
    "index_ca",
    "index_location",
    "ivf_min",
    "ivf_nprobe",
    "language",
    "late_top_n",
    "llm_endpoint",
    "log_filter",
    "log_format",
    "metrics",
    "otlp_ca",
    "otlp_endpoint",
    "otlp_headers",
    "passphrase",
    "pool_div",
    "read_audit",
    "rerank_top_n",
    "reranker",
    "retrieval",
    "sample_interval_ms",
    "search_trace",
    "semantic_floor",
    "semantic_gate",
    "service_name",
    "stream_heartbeat_ms",
    "train_source_cap",
    "trust_floor",
    "wing_pq_min",
]

Env = Mapping[str, str] | None
T = TypeVar("T")


def _typed(name: str, env: Env, kind: type[T] | tuple[type, ...]) -> T:
    resolved = value(name, env)
    # A registry/accessor mismatch is a programming error, caught by the accessor tests.
    assert isinstance(resolved, kind), f"{name} resolved to {type(resolved).__name__}"
    return cast(T, resolved)


def home(env: Env = None) -> Path:
    """UNDERCROFT_HOME: the palace directory (default ~/.undercroft)."""
    return _typed("UNDERCROFT_HOME", env, Path)


def passphrase(env: Env = None) -> Secret | None:
    """UNDERCROFT_PASSPHRASE: the declared passphrase, or None for key-file mode."""
    return _typed("UNDERCROFT_PASSPHRASE", env, (Secret, type(None)))


def language(env: Env = None) -> str:
    """UNDERCROFT_LANG, falling back to English for a language the CLI does not ship."""
    declared = _typed("UNDERCROFT_LANG", env, str).strip().lower()
    return declared if declared in LANGUAGES else "en"


def embedder(env: Env = None) -> Embedder:
    """UNDERCROFT_EMBEDDER (default hash)."""
    return _typed("UNDERCROFT_EMBEDDER", env, Embedder)


def force_embedder(env: Env = None) -> bool:
    """UNDERCROFT_FORCE_EMBEDDER: True only for an explicit 1/true/yes/on."""
    return _typed("UNDERCROFT_FORCE_EMBEDDER", env, bool)


def reranker(env: Env = None) -> Reranker | None:
    """UNDERCROFT_RERANKER, None for no second stage."""
    return _typed("UNDERCROFT_RERANKER", env, (Reranker, type(None)))


def rerank_top_n(env: Env = None) -> int:
    """UNDERCROFT_RERANK_TOP_N (default 50)."""
    return _typed("UNDERCROFT_RERANK_TOP_N", env, int)


def late_top_n(env: Env = None) -> int:
    """UNDERCROFT_LATE_TOP_N (default 200, or UNDERCROFT_RERANK_TOP_N's value whenever that is set)."""
    return _typed("UNDERCROFT_LATE_TOP_N", env, int)


def retrieval(env: Env = None) -> Retrieval | None:
    """UNDERCROFT_RETRIEVAL, None for the full scan with the FTS prefilter."""
    return _typed("UNDERCROFT_RETRIEVAL", env, (Retrieval, type(None)))


def search_trace(env: Env = None) -> bool:
    """UNDERCROFT_SEARCH_TRACE: presence-triggered."""
    return _typed("UNDERCROFT_SEARCH_TRACE", env, bool)


def fusion(env: Env = None) -> Fusion:
    """UNDERCROFT_FUSION (default bm25; rrf warns and falls back to bm25)."""
    return _typed("UNDERCROFT_FUSION", env, Fusion)


def fusion_weight(env: Env = None) -> float:
    """UNDERCROFT_FUSION_WEIGHT (default 0.55, clamped to 0.20–0.70)."""
    return float(_typed("UNDERCROFT_FUSION_WEIGHT", env, (int, float)))


def fts_prefilter_min(env: Env = None) -> int | None:
    """UNDERCROFT_FTS_PREFILTER_MIN (default 2048; None when off)."""
    return _typed("UNDERCROFT_FTS_PREFILTER_MIN", env, (int, type(None)))


def pool_div(env: Env = None) -> int | None:
    """UNDERCROFT_POOL_DIV (default 64; None when off, the fixed floor)."""
    return _typed("UNDERCROFT_POOL_DIV", env, (int, type(None)))


def ivf_min(env: Env = None) -> int:
    """UNDERCROFT_IVF_MIN (default 8192)."""
    return _typed("UNDERCROFT_IVF_MIN", env, int)


def ivf_nprobe(env: Env = None) -> int | None:
    """UNDERCROFT_IVF_NPROBE (None: the engine's own, a quarter of the lists)."""
    return _typed("UNDERCROFT_IVF_NPROBE", env, (int, type(None)))


def fde_parameters(env: Env = None) -> dict[str, int]:
    """The declared ``UNDERCROFT_FDE_REPS`` / ``_KSIM`` / ``_DPROJ`` / ``_SEED`` as the FDE encoder's field names
    (repetitions, bits, projection, seed); an unset one is absent (the engine's own)."""
    fields = {"REPS": "repetitions", "KSIM": "bits", "DPROJ": "projection", "SEED": "seed"}
    declared: dict[str, int | None] = {
        field: _typed(f"UNDERCROFT_FDE_{suffix}", env, (int, type(None))) for suffix, field in fields.items()
    }
    return {field: value for field, value in declared.items() if value is not None}


def fde_compression(env: Env = None) -> dict[str, int | None]:
    """The declared ``UNDERCROFT_FDE_PQ_MIN`` (default 256), ``_FDE_IVF_MIN`` (off: None) and ``_FDE_NPROBE``
    (None: the engine's own, max(8, nlist/4)) as the FDE tier's option names (pq_min, ivf_min, nprobe)."""
    return {
        "pq_min": _typed("UNDERCROFT_FDE_PQ_MIN", env, int),
        "ivf_min": _typed("UNDERCROFT_FDE_IVF_MIN", env, (int, type(None))),
        "nprobe": _typed("UNDERCROFT_FDE_NPROBE", env, (int, type(None))),
    }


def wing_pq_min(env: Env = None) -> int | None:
    """UNDERCROFT_WING_PQ_MIN (default 4096; None when off)."""
    return _typed("UNDERCROFT_WING_PQ_MIN", env, (int, type(None)))


def train_source_cap(env: Env = None) -> int | None:
    """UNDERCROFT_TRAIN_SOURCE_CAP (default 4; None when off, uncapped)."""
    return _typed("UNDERCROFT_TRAIN_SOURCE_CAP", env, (int, type(None)))


def semantic_gate(env: Env = None) -> float | Off | None:
    """UNDERCROFT_SEMANTIC_GATE: a declared gate, "off" (no semantic-only admission), or None (embedder's own)."""
    return cast("float | Off | None", _typed("UNDERCROFT_SEMANTIC_GATE", env, (float, str, type(None))))


def semantic_floor(env: Env = None) -> float | None:
    """UNDERCROFT_SEMANTIC_FLOOR: a declared floor (off = 0.0), or None (embedder's own)."""
    return _typed("UNDERCROFT_SEMANTIC_FLOOR", env, (float, type(None)))


def trust_floor(env: Env = None) -> TrustClass | None:
    """UNDERCROFT_TRUST_FLOOR: the vault-wide floor, or None (unset or off)."""
    return _typed("UNDERCROFT_TRUST_FLOOR", env, (TrustClass, type(None)))


def admission(env: Env = None) -> Admission:
    """UNDERCROFT_ADMISSION (default off)."""
    return _typed("UNDERCROFT_ADMISSION", env, Admission)


def admission_rate(env: Env = None) -> Rate | None:
    """UNDERCROFT_ADMISSION_RATE: the per-writer rate screen, or None."""
    return _typed("UNDERCROFT_ADMISSION_RATE", env, (Rate, type(None)))


def read_audit(env: Env = None) -> ReadAudit:
    """UNDERCROFT_READ_AUDIT (default off)."""
    return _typed("UNDERCROFT_READ_AUDIT", env, ReadAudit)


def audit_ceiling(env: Env = None) -> int | None:
    """UNDERCROFT_AUDIT_CEILING: the expected chain-height bound, or None."""
    return _typed("UNDERCROFT_AUDIT_CEILING", env, (int, type(None)))


def http_token(env: Env = None) -> Secret | None:
    """UNDERCROFT_MCP_HTTP_TOKEN: the palace-wide bearer of serve-http, or None when undeclared."""
    return _typed("UNDERCROFT_MCP_HTTP_TOKEN", env, (Secret, type(None)))


def assertion_secret(env: Env = None) -> Secret | None:
    """UNDERCROFT_ASSERTION_SECRET: the per-vault assertion HMAC key, or None (assertions off)."""
    return _typed("UNDERCROFT_ASSERTION_SECRET", env, (Secret, type(None)))


def metrics(env: Env = None) -> bool:
    """UNDERCROFT_METRICS: serve /metrics behind the bearer (telemetry builds)."""
    return _typed("UNDERCROFT_METRICS", env, bool)


def sample_interval_ms(env: Env = None) -> int:
    """UNDERCROFT_SAMPLE_INTERVAL_MS: the live-stream sampler tick in milliseconds (default 2000)."""
    return _typed("UNDERCROFT_SAMPLE_INTERVAL_MS", env, int)


def stream_heartbeat_ms(env: Env = None) -> int:
    """UNDERCROFT_STREAM_HEARTBEAT_MS: the live stream's idle ``: ping`` interval in milliseconds (default 15000)."""
    return _typed("UNDERCROFT_STREAM_HEARTBEAT_MS", env, int)


def otlp_endpoint(env: Env = None) -> str | None:
    """UNDERCROFT_OTLP_ENDPOINT: the OTLP/HTTP collector (TLS or loopback), or None: nothing leaves the process."""
    return _typed("UNDERCROFT_OTLP_ENDPOINT", env, (str, type(None)))


def otlp_ca(env: Env = None) -> CaPin | None:
    """UNDERCROFT_OTLP_CA: the pin the collector's certificate verifies against, or None (public roots)."""
    return _typed("UNDERCROFT_OTLP_CA", env, (CaPin, type(None)))


def otlp_headers(env: Env = None) -> dict[str, str]:
    """UNDERCROFT_OTLP_HEADERS: ``key=value`` export headers, comma-separated (may carry a bearer)."""
    resolved = value("UNDERCROFT_OTLP_HEADERS", env)
    if resolved is None:
        return {}
    text = resolved.reveal() if isinstance(resolved, Secret) else str(resolved)
    headers: dict[str, str] = {}
    for item in text.split(","):
        key, sep, val = item.partition("=")
        if not sep or not key.strip():
            raise ValueError("UNDERCROFT_OTLP_HEADERS: each item is key=value (the value is not shown)")
        headers[key.strip().lower()] = val.strip()
    return headers


def service_name(env: Env = None) -> str:
    """UNDERCROFT_SERVICE_NAME: the service name on exported spans (default ``undercroft``)."""
    return _typed("UNDERCROFT_SERVICE_NAME", env, str)


def log_filter(env: Env = None) -> str | None:
    """UNDERCROFT_LOG: the log level/filter (``info``, ``warning``…), or None when undeclared."""
    return _typed("UNDERCROFT_LOG", env, (str, type(None)))


def log_format(env: Env = None) -> str:
    """UNDERCROFT_LOG_FORMAT: ``text`` (default) or ``json``."""
    return _typed("UNDERCROFT_LOG_FORMAT", env, str)


#: The remote-index backends and the declaration that locates each.
_INDEX_VARIABLES = {
    "chroma": "UNDERCROFT_CHROMA_URL",
    "milvus": "UNDERCROFT_MILVUS_URL",
    "qdrant": "UNDERCROFT_QDRANT_URL",
    "pgvector": "UNDERCROFT_PGVECTOR_DSN",
    "weaviate": "UNDERCROFT_WEAVIATE_URL",
}


def index_location(backend: str, env: Env = None) -> tuple[str, str | None]:
    """``(variable, value)`` locating a remote-index backend: its URL (pgvector: the DSN), None when unset.

    The value is only syntax-checked here (TLS or loopback; sslmode off loopback); the client that uses it
    polices it again through undercroft_net.
    """
    variable = _INDEX_VARIABLES.get(backend)
    if variable is None:
        raise KeyError(f"no remote-index backend {backend!r}")
    resolved = value(variable, env)
    if resolved is None:
        return variable, None
    return variable, resolved.reveal() if isinstance(resolved, Secret) else str(resolved)


def index_ca(env: Env = None) -> CaPin | None:
    """UNDERCROFT_INDEX_CA: the pin every remote-index connection verifies against, or None (public roots)."""
    return _typed("UNDERCROFT_INDEX_CA", env, (CaPin, type(None)))


@dataclass(frozen=True)
class ServedEndpoint:
    """A served model's declaration (UNDERCROFT_EMBED_* or UNDERCROFT_LLM_*), resolved but not yet policed.

    ``url`` is None when undeclared; the transport policy (undercroft_net) rules on it where the client is
    built. ``api`` is None when the shape is to be probed. ``key`` never shows in a repr.
    """

    url: str | None
    model: str | None
    api: str | None
    ca: CaPin | None
    key: Secret | None = field(default=None, repr=False)
    dimension: int | None = None
    url_variable: str = "UNDERCROFT_EMBED_URL"
    ca_variable: str = "UNDERCROFT_EMBED_CA"


def _secret(name: str, env: Env) -> Secret | None:
    raw: str | None = _typed(name, env, (str, type(None)))
    return Secret(raw) if raw else None


def embed_endpoint(env: Env = None) -> ServedEndpoint:
    """UNDERCROFT_EMBED_URL/_MODEL/_API/_KEY/_DIM/_CA: the served embedder's declaration."""
    api: EmbedApi | None = _typed("UNDERCROFT_EMBED_API", env, (EmbedApi, type(None)))
    return ServedEndpoint(
        url=_typed("UNDERCROFT_EMBED_URL", env, (str, type(None))),
        model=_typed("UNDERCROFT_EMBED_MODEL", env, (str, type(None))),
        api=None if api is None else str(api),
        ca=_typed("UNDERCROFT_EMBED_CA", env, (CaPin, type(None))),
        key=_secret("UNDERCROFT_EMBED_KEY", env),
        dimension=_typed("UNDERCROFT_EMBED_DIM", env, (int, type(None))),
    )


def llm_endpoint(env: Env = None) -> ServedEndpoint:
    """UNDERCROFT_LLM_URL/_MODEL/_API/_KEY/_CA: the LLM runtime of refine and the admission advisor."""
    return ServedEndpoint(
        url=_typed("UNDERCROFT_LLM_URL", env, (str, type(None))),
        model=_typed("UNDERCROFT_LLM_MODEL", env, str),
        api=str(_typed("UNDERCROFT_LLM_API", env, LlmApi)),
        ca=_typed("UNDERCROFT_LLM_CA", env, (CaPin, type(None))),
        key=_secret("UNDERCROFT_LLM_KEY", env),
        url_variable="UNDERCROFT_LLM_URL",
        ca_variable="UNDERCROFT_LLM_CA",
    )


def admission_advisor(env: Env = None) -> bool:
    """UNDERCROFT_ADMISSION_LLM: True when the tier-2 advisor is declared (advisory)."""
    return _typed("UNDERCROFT_ADMISSION_LLM", env, AdmissionAdvisor) is AdmissionAdvisor.ADVISORY
