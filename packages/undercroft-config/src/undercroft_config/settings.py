"""Typed accessors the store and the CLI call: one per setting they read, each raising `Refused` on refusal.

Every accessor takes the environment mapping explicitly (default `os.environ`) so tests inject one.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import TypeVar, cast

from undercroft_config._internal.catalog_engine import LANGUAGES
from undercroft_config.resolution import value
from undercroft_config.values import (
    Admission,
    Embedder,
    Fusion,
    Off,
    Rate,
    ReadAudit,
    Reranker,
    Retrieval,
    Secret,
    TrustClass,
)

__all__ = [
    "admission",
    "admission_rate",
    "assertion_secret",
    "audit_ceiling",
    "embedder",
    "force_embedder",
    "fts_prefilter_min",
    "fusion",
    "fusion_weight",
    "home",
    "http_token",
    "ivf_min",
    "ivf_nprobe",
    "language",
    "late_top_n",
    "log_filter",
    "log_format",
    "metrics",
    "passphrase",
    "pool_div",
    "read_audit",
    "rerank_top_n",
    "reranker",
    "retrieval",
    "search_trace",
    "semantic_floor",
    "semantic_gate",
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


def log_filter(env: Env = None) -> str | None:
    """UNDERCROFT_LOG: the log level/filter (``info``, ``warning``…), or None when undeclared."""
    return _typed("UNDERCROFT_LOG", env, (str, type(None)))


def log_format(env: Env = None) -> str:
    """UNDERCROFT_LOG_FORMAT: ``text`` (default) or ``json``."""
    return _typed("UNDERCROFT_LOG_FORMAT", env, str)
