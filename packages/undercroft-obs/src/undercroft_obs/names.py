"""Every event, counter, histogram and gauge name the engine and the control plane emit.

Producers import these constants instead of spelling strings, and the shim refuses a name that is not
listed here: a metric nobody registered would look live at the call site and never reach /metrics.
Each metric also declares the exact label keys it carries, and the closed vocabularies of those labels
that have one (an outcome, a backend kind) are listed beside it.
"""

from __future__ import annotations

from types import MappingProxyType
from typing import Final

__all__ = [
    "AUTH_REJECTIONS_TOTAL",
    "CHAIN_COMMITS_TOTAL",
    "CHAIN_REPLAYS_TOTAL",
    "CODEBOOK_GENERATION_FDE_CODEBOOK",
    "CODEBOOK_GENERATION_FDE_IVF",
    "CODEBOOK_GENERATION_PQ_CODEBOOK",
    "CODEBOOK_GENERATION_PQ_IVF",
    "CODEBOOK_GENERATION_TOK_CODEBOOK",
    "COUNTER_LABELS",
    "COUNTER_NAMES",
    "DRAWER_DELETES_TOTAL",
    "DRAWER_WRITES_TOTAL",
    "DRAWER_WRITE_OUTCOMES",
    "EMBED_BACKENDS",
    "EMBED_FAILURES_TOTAL",
    "EVENT_CHAIN_COMMIT",
    "EVENT_DRAWER_DELETED",
    "EVENT_DRAWER_QUARANTINED",
    "EVENT_DRAWER_SAVED",
    "EVENT_HMAC_FAIL",
    "EVENT_KG_TRIPLE",
    "EVENT_NAMES",
    "EVENT_SAMPLE",
    "EVENT_SEARCH",
    "GAUGE_AUDIT_CHAIN_HEIGHT",
    "GAUGE_DRAWERS",
    "GAUGE_KG_ENTITIES",
    "GAUGE_KG_TRIPLES",
    "GAUGE_LABELS",
    "GAUGE_NAMES",
    "GAUGE_STORE_BYTES",
    "HISTOGRAM_LABELS",
    "HISTOGRAM_NAMES",
    "HMAC_SURFACES",
    "HMAC_VERIFY_FAILURES_TOTAL",
    "HTTP_REQUESTS_TOTAL",
    "HTTP_REQUEST_DURATION_SECONDS",
    "KG_WRITES_TOTAL",
    "KG_WRITE_KINDS",
    "LABEL_VOCABULARIES",
    "LATE_FAILURES_TOTAL",
    "LATE_SIDES",
    "ORCH_ENGINE_CALLS_TOTAL",
    "ORCH_RATE_SCREEN_TOTAL",
    "ORCH_REFUSED_CREDENTIALS_TOTAL",
    "ORCH_REQUESTS_TOTAL",
    "ORCH_REQUEST_DURATION_SECONDS",
    "OUTCOME_CREATED",
    "OUTCOME_DEDUPED",
    "OUTCOME_QUARANTINED",
    "RERANK_BACKENDS",
    "RERANK_FAILURES_TOTAL",
    "SEARCH_DURATION_SECONDS",
    "SEARCH_HITS",
    "SEARCH_PREFILTERED_TOTAL",
    "SEARCH_TOTAL",
    "SEARCH_WINGS_PROBED_TOTAL",
    "SPAN_ATTRIBUTES",
    "SPAN_DEDUP",
    "SPAN_KG_WRITE",
    "SPAN_MCP_CALL",
    "SPAN_NAMES",
    "SPAN_SAVE",
    "SPAN_SEARCH",
    "SPAN_V1_REQUEST",
    "VAULT_OPENS_TOTAL",
]

# --- Live-stream events (the SSE frames the Palace Monitor renders) -------------------------------------
EVENT_SAMPLE: Final = "sample"
EVENT_DRAWER_SAVED: Final = "drawer-saved"
EVENT_DRAWER_QUARANTINED: Final = "drawer-quarantined"
EVENT_DRAWER_DELETED: Final = "drawer-deleted"
EVENT_SEARCH: Final = "search"
EVENT_KG_TRIPLE: Final = "kg-triple"
EVENT_CHAIN_COMMIT: Final = "chain-commit"
EVENT_HMAC_FAIL: Final = "hmac-fail"

#: Every event name `emit` accepts.
EVENT_NAMES: Final = frozenset(
    {
        EVENT_SAMPLE,
        EVENT_DRAWER_SAVED,
        EVENT_DRAWER_QUARANTINED,
        EVENT_DRAWER_DELETED,
        EVENT_SEARCH,
        EVENT_KG_TRIPLE,
        EVENT_CHAIN_COMMIT,
        EVENT_HMAC_FAIL,
    }
)

# --- Counters (Prometheus series, all undercroft_*) -----------------------------------------------------
SEARCH_TOTAL: Final = "undercroft_search_total"
SEARCH_PREFILTERED_TOTAL: Final = "undercroft_search_prefiltered_total"
#: How many per-wing indexes served one query's candidates: a count, never a wing name.
SEARCH_WINGS_PROBED_TOTAL: Final = "undercroft_search_wings_probed_total"
DRAWER_WRITES_TOTAL: Final = "undercroft_drawer_writes_total"
DRAWER_DELETES_TOTAL: Final = "undercroft_drawer_deletes_total"
#: An embed degraded to a zero vector (the drawer is stored, semantically invisible until re-embedded).
EMBED_FAILURES_TOTAL: Final = "undercroft_embed_failures_total"
RERANK_FAILURES_TOTAL: Final = "undercroft_rerank_failures_total"
LATE_FAILURES_TOTAL: Final = "undercroft_late_failures_total"
KG_WRITES_TOTAL: Final = "undercroft_kg_writes_total"
#: Audit-chain RECORDS committed, not manifest anchors.
CHAIN_COMMITS_TOTAL: Final = "undercroft_chain_commits_total"
#: Full audit-chain replays by the label guard; no labels on purpose.
CHAIN_REPLAYS_TOTAL: Final = "undercroft_chain_replays_total"
#: The headline tamper signal: any non-zero value means an HMAC failed on read.
HMAC_VERIFY_FAILURES_TOTAL: Final = "undercroft_hmac_verify_failures_total"
VAULT_OPENS_TOTAL: Final = "undercroft_vault_opens_total"
HTTP_REQUESTS_TOTAL: Final = "undercroft_http_requests_total"
AUTH_REJECTIONS_TOTAL: Final = "undercroft_auth_rejections_total"
# The control plane's four counters: no tenant, vault or tenant-name label, ever.
ORCH_REQUESTS_TOTAL: Final = "undercroft_orch_requests_total"
ORCH_REFUSED_CREDENTIALS_TOTAL: Final = "undercroft_orch_refused_credentials_total"
ORCH_RATE_SCREEN_TOTAL: Final = "undercroft_orch_rate_screen_total"
ORCH_ENGINE_CALLS_TOTAL: Final = "undercroft_orch_engine_calls_total"

#: Counter name -> the exact label keys it carries (a sample with other keys is refused).
COUNTER_LABELS: Final = MappingProxyType(
    {
        SEARCH_TOTAL: frozenset({"fusion"}),
        SEARCH_PREFILTERED_TOTAL: frozenset(),
        SEARCH_WINGS_PROBED_TOTAL: frozenset(),
        DRAWER_WRITES_TOTAL: frozenset({"outcome"}),
        DRAWER_DELETES_TOTAL: frozenset(),
        EMBED_FAILURES_TOTAL: frozenset({"backend"}),
        RERANK_FAILURES_TOTAL: frozenset({"backend"}),
        LATE_FAILURES_TOTAL: frozenset({"backend", "side"}),
        KG_WRITES_TOTAL: frozenset({"kind"}),
        CHAIN_COMMITS_TOTAL: frozenset(),
        CHAIN_REPLAYS_TOTAL: frozenset(),
        HMAC_VERIFY_FAILURES_TOTAL: frozenset({"surface"}),
        VAULT_OPENS_TOTAL: frozenset(),
        HTTP_REQUESTS_TOTAL: frozenset({"route", "status"}),
        AUTH_REJECTIONS_TOTAL: frozenset({"kind"}),
        ORCH_REQUESTS_TOTAL: frozenset({"route_class"}),
        ORCH_REFUSED_CREDENTIALS_TOTAL: frozenset({"kind"}),
        ORCH_RATE_SCREEN_TOTAL: frozenset(),
        ORCH_ENGINE_CALLS_TOTAL: frozenset({"outcome"}),
    }
)
#: Every counter name `increment` accepts.
COUNTER_NAMES: Final = frozenset(COUNTER_LABELS)

# --- Histograms ------------------------------------------------------------------------------------------
SEARCH_DURATION_SECONDS: Final = "undercroft_search_duration_seconds"
SEARCH_HITS: Final = "undercroft_search_hits"
HTTP_REQUEST_DURATION_SECONDS: Final = "undercroft_http_request_duration_seconds"
ORCH_REQUEST_DURATION_SECONDS: Final = "undercroft_orch_request_duration_seconds"

#: Histogram name -> the exact label keys it carries.
HISTOGRAM_LABELS: Final = MappingProxyType(
    {
        SEARCH_DURATION_SECONDS: frozenset(),
        SEARCH_HITS: frozenset(),
        HTTP_REQUEST_DURATION_SECONDS: frozenset({"route"}),
        ORCH_REQUEST_DURATION_SECONDS: frozenset({"route_class"}),
    }
)
#: Every histogram name `observe` and `timer` accept.
HISTOGRAM_NAMES: Final = frozenset(HISTOGRAM_LABELS)

# --- Gauges (per vault; the server suppresses them when per-vault assertions are declared) ---------------
GAUGE_DRAWERS: Final = "undercroft_drawers"
GAUGE_AUDIT_CHAIN_HEIGHT: Final = "undercroft_audit_chain_height"
GAUGE_KG_TRIPLES: Final = "undercroft_kg_triples"
GAUGE_KG_ENTITIES: Final = "undercroft_kg_entities"
GAUGE_STORE_BYTES: Final = "undercroft_store_bytes"
CODEBOOK_GENERATION_PQ_CODEBOOK: Final = "undercroft_codebook_generation_pq_codebook"
CODEBOOK_GENERATION_PQ_IVF: Final = "undercroft_codebook_generation_pq_ivf"
CODEBOOK_GENERATION_FDE_CODEBOOK: Final = "undercroft_codebook_generation_fde_codebook"
CODEBOOK_GENERATION_FDE_IVF: Final = "undercroft_codebook_generation_fde_ivf"
CODEBOOK_GENERATION_TOK_CODEBOOK: Final = "undercroft_codebook_generation_tok_codebook"

#: Gauge name -> the exact label keys it carries (every gauge is per vault).
GAUGE_LABELS: Final = MappingProxyType(
    {
        name: frozenset({"vault"})
        for name in (
            GAUGE_DRAWERS,
            GAUGE_AUDIT_CHAIN_HEIGHT,
            GAUGE_KG_TRIPLES,
            GAUGE_KG_ENTITIES,
            GAUGE_STORE_BYTES,
            CODEBOOK_GENERATION_PQ_CODEBOOK,
            CODEBOOK_GENERATION_PQ_IVF,
            CODEBOOK_GENERATION_FDE_CODEBOOK,
            CODEBOOK_GENERATION_FDE_IVF,
            CODEBOOK_GENERATION_TOK_CODEBOOK,
        )
    }
)
#: Every gauge name `set_gauge` accepts; public so producers can pin what they emit against it.
GAUGE_NAMES: Final = frozenset(GAUGE_LABELS)

# --- Closed label vocabularies ----------------------------------------------------------------------------
OUTCOME_CREATED: Final = "created"
OUTCOME_DEDUPED: Final = "deduped"
OUTCOME_QUARANTINED: Final = "quarantined"
#: The one outcome label of drawer_writes_total: a diverted write is never counted as created.
DRAWER_WRITE_OUTCOMES: Final = frozenset({OUTCOME_CREATED, OUTCOME_DEDUPED, OUTCOME_QUARANTINED})
#: Model-role backends: a kind, never a model name.
EMBED_BACKENDS: Final = frozenset({"http", "onnx", "ort"})
#: side=doc is a durable hole at rest; side=query retires the late stage for one search.
LATE_SIDES: Final = frozenset({"doc", "query"})
#: Where an HMAC verification can fail on read.
HMAC_SURFACES: Final = frozenset({"drawer", "kg", "tunnel", "manifest", "chain", "label"})

#: Rerank and late-interaction backends (the two other model roles).
RERANK_BACKENDS: Final = frozenset({"onnx", "ort"})
#: What one knowledge-graph write call did.
KG_WRITE_KINDS: Final = frozenset({"add", "invalidate", "supersede"})

# --- Trace spans (OTLP; attributes are metadata only, validated like labels) ----------------------------
#: A request root span: one per /v1 request (attributes: route template, method, status, vault).
SPAN_V1_REQUEST: Final = "v1.request"
#: A request root span: one per MCP tool call (attributes: tool name, outcome).
SPAN_MCP_CALL: Final = "mcp.call"
SPAN_SEARCH: Final = "search"
SPAN_SAVE: Final = "save"
SPAN_DEDUP: Final = "dedup"
SPAN_KG_WRITE: Final = "kg.write"
#: Span name -> the attribute keys it may carry (a subset; never content, query, wing/room names or ids).
SPAN_ATTRIBUTES: Final = MappingProxyType(
    {
        SPAN_V1_REQUEST: frozenset({"route", "method", "status", "vault"}),
        SPAN_MCP_CALL: frozenset({"tool", "vault", "outcome"}),
        SPAN_SEARCH: frozenset({"vault", "fusion", "hits", "scoped"}),
        SPAN_SAVE: frozenset({"vault", "drawers", "created", "deduped", "quarantined"}),
        SPAN_DEDUP: frozenset({"vault", "deduped"}),
        SPAN_KG_WRITE: frozenset({"kind", "written"}),
    }
)
#: Every span name `span` accepts.
SPAN_NAMES: Final = frozenset(SPAN_ATTRIBUTES)

#: Metric name -> {label key -> its closed vocabulary}; labels not listed here are free short scalars.
LABEL_VOCABULARIES: Final = MappingProxyType(
    {
        DRAWER_WRITES_TOTAL: {"outcome": DRAWER_WRITE_OUTCOMES},
        EMBED_FAILURES_TOTAL: {"backend": EMBED_BACKENDS},
        RERANK_FAILURES_TOTAL: {"backend": RERANK_BACKENDS},
        LATE_FAILURES_TOTAL: {"backend": RERANK_BACKENDS, "side": LATE_SIDES},
        HMAC_VERIFY_FAILURES_TOTAL: {"surface": HMAC_SURFACES},
        KG_WRITES_TOTAL: {"kind": KG_WRITE_KINDS},
    }
)
