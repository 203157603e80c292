"""Declarations of governance, remote indexes, the server, the LLM, telemetry, the control plane and bench."""

from __future__ import annotations

import re

from undercroft_config._internal import parsers as p
from undercroft_config._internal.build import constant, declare, switches_on
from undercroft_config.capabilities import Capability
from undercroft_config.declaration import Declaration
from undercroft_config.declaration import Doctrine as D
from undercroft_config.values import OFF, Address, Admission, AdmissionAdvisor, LlmApi, ReadAudit, TrustClass

__all__ = ["BENCH", "GOVERNANCE", "LLM", "ORCHESTRATOR", "REMOTE_INDEX", "SERVER", "TELEMETRY"]

_CA_LEGAL = "a readable PEM file with at least one certificate, or off"
_URL_LEGAL = "an https URL, or http to a loopback host"
_BEARER_LEGAL = "a non-empty token not ending in whitespace"


def _without_password(raw: str) -> str:
    # A DSN may carry a password; a message shows where it points, never the credential.
    shown = re.sub(r"(://[^:/@]*:)[^@]*@", r"\1***@", raw)
    return repr(re.sub(r"(password\s*=\s*)\S+", r"\1***", shown))


def _advisor(value: object) -> Capability | None:
    return Capability.ADMISSION_ADVISOR if value is AdmissionAdvisor.ADVISORY else None


GOVERNANCE: tuple[Declaration, ...] = (
    declare(
        "UNDERCROFT_TRUST_FLOOR",
        "governance",
        "enum",
        "unset (no floor)",
        "one of quarantined, standard, trusted, or off",
        D.REFUSE,
        "Vault-level minimum wing trust for every unscoped content read (search, drawer list, wake-up, "
        "closets, check_duplicate, hallways); naming a wing bypasses it; a floor that does not parse would "
        "apply none.",
        p.choice(TrustClass, allow_off=True),
    ),
    declare(
        "UNDERCROFT_ADMIT_TRUSTED_SOURCES",
        "governance",
        "list",
        "empty",
        "a comma-separated list of surfaces",
        D.ACCEPT,
        "Surfaces whose writes bypass the admission screen (matched against the handler-stamped added_by).",
        p.opaque_list,
        constant(()),
    ),
    declare(
        "UNDERCROFT_ADMISSION",
        "governance",
        "enum",
        "off",
        "one of off, quarantine",
        D.REFUSE,
        "Screen every save and divert flagged writes to the quarantine-pending wing.",
        p.choice(Admission),
        constant(Admission.OFF),
    ),
    declare(
        "UNDERCROFT_ADMISSION_LLM",
        "governance",
        "enum",
        "off",
        "one of off, advisory",
        D.REFUSE,
        "Tier-2 advisory classifier (UNDERCROFT_LLM_*), only ever toward quarantine.",
        p.choice(AdmissionAdvisor),
        constant(AdmissionAdvisor.OFF),
        requires=_advisor,
    ),
    declare(
        "UNDERCROFT_ADMISSION_RATE",
        "governance",
        "rate",
        "unset (no rate screen)",
        "<count>/<seconds> with both ≥ 1, or off",
        D.REFUSE,
        "Per-writer rate screen; consulted only when UNDERCROFT_ADMISSION=quarantine.",
        p.rate,
    ),
    declare(
        "UNDERCROFT_READ_AUDIT",
        "governance",
        "enum",
        "off",
        "one of off, chain",
        D.REFUSE,
        "One audit-chain record per content-returning read.",
        p.choice(ReadAudit),
        constant(ReadAudit.OFF),
    ),
    declare(
        "UNDERCROFT_AUDIT_CEILING",
        "governance",
        "int",
        "off",
        "an integer ≥ 1, or off",
        D.WARN,
        "Audit-chain height the vault is expected to stay under: reported, never enforced.",
        p.integer(1, off=True),
    ),
    declare(
        "UNDERCROFT_SEMANTIC_GATE",
        "governance",
        "float",
        "the embedder's own calibration",
        "a number in 0.0..=1.0, or off (no semantic-only admission)",
        D.REFUSE,
        "Semantic score above which a drawer is admitted on cosine evidence alone.",
        p.number(0.0, 1.0, allow_off=True, off=OFF),
    ),
    declare(
        "UNDERCROFT_SEMANTIC_FLOOR",
        "governance",
        "float",
        "the embedder's own",
        "a number in 0.0..=0.98, or off (= 0)",
        D.WARN,
        "Raw cosine of unrelated text: the calibration zero of the cosine→semantic map.",
        p.number(0.0, 0.98, allow_off=True, off=0.0),
    ),
)

REMOTE_INDEX: tuple[Declaration, ...] = (
    *(
        declare(
            f"UNDERCROFT_{backend}_URL",
            "remote-index",
            "URL",
            "unset",
            _URL_LEGAL,
            D.REFUSE,
            f"{label} endpoint (TLS or loopback only, no override).",
            p.outward_url,
            requires=switches_on(Capability(f"index/{backend.lower()}")),
        )
        for backend, label in (
            ("QDRANT", "Qdrant"),
            ("CHROMA", "Chroma"),
            ("MILVUS", "Milvus"),
            ("WEAVIATE", "Weaviate"),
        )
    ),
    declare(
        "UNDERCROFT_PGVECTOR_DSN",
        "remote-index",
        "DSN",
        "unset",
        "a postgres:// URL or key=value DSN; sslmode=require for a non-loopback host",
        D.REFUSE,
        "pgvector connection (the password is never echoed).",
        p.pgvector_dsn,
        display=_without_password,
        requires=switches_on(Capability.INDEX_PGVECTOR),
    ),
    declare(
        "UNDERCROFT_INDEX_CA",
        "remote-index",
        "CA pin",
        "unset (public roots)",
        _CA_LEGAL,
        D.REFUSE,
        "The ONLY trust roots for every remote vector-index connection.",
        p.ca_pin,
    ),
)

SERVER: tuple[Declaration, ...] = (
    declare(
        "UNDERCROFT_MCP_HTTP_TOKEN",
        "server",
        "secret",
        "unset",
        _BEARER_LEGAL,
        D.REFUSE,
        "Palace-wide bearer; mandatory for a non-loopback bind.",
        p.secret(),
        secret=True,
    ),
    declare(
        "UNDERCROFT_ASSERTION_SECRET",
        "server",
        "secret",
        "unset (no per-vault assertions)",
        "a non-empty secret not ending in whitespace",
        D.REFUSE,
        "Enables per-vault X-Vault-Assertion HMACs.",
        p.secret(),
        secret=True,
    ),
    declare(
        "UNDERCROFT_METRICS",
        "server",
        "bool",
        "off",
        "1/true/yes/on or 0/false/no/off",
        D.WARN,
        "Serve /metrics behind the bearer (telemetry builds).",
        p.flag,
        constant(False),
        requires=switches_on(Capability.TELEMETRY_METRICS),
    ),
    declare(
        "UNDERCROFT_SAMPLE_INTERVAL_MS",
        "server",
        "int",
        "2000",
        "an integer in 100..=3600000",
        D.WARN,
        "Live-stream sampler tick.",
        p.integer(100, 3_600_000),
        constant(2000),
    ),
    declare(
        "UNDERCROFT_STREAM_HEARTBEAT_MS",
        "server",
        "int",
        "15000",
        "an integer in 50..=600000",
        D.WARN,
        "Live-stream `: ping` heartbeat interval of an idle stream (a test and operator knob: a proxy with a "
        "shorter idle timeout than 15 s needs it lower).",
        p.integer(50, 600_000),
        constant(15000),
    ),
)

LLM: tuple[Declaration, ...] = (
    declare(
        "UNDERCROFT_LLM_URL",
        "llm",
        "URL",
        "unset",
        _URL_LEGAL,
        D.REFUSE,
        "LLM runtime for refine and the admission advisor (TLS or loopback only, no override).",
        p.outward_url,
    ),
    declare(
        "UNDERCROFT_LLM_MODEL",
        "llm",
        "text",
        "llama3.2",
        "a model name",
        D.ACCEPT,
        "LLM model name.",
        p.opaque_text,
        constant("llama3.2"),
    ),
    declare(
        "UNDERCROFT_LLM_API",
        "llm",
        "enum",
        "ollama",
        "one of ollama, openai",
        D.WARN,
        "LLM request shape.",
        p.choice(LlmApi),
        constant(LlmApi.OLLAMA),
    ),
    declare(
        "UNDERCROFT_LLM_CA",
        "llm",
        "CA pin",
        "unset (public roots)",
        _CA_LEGAL,
        D.REFUSE,
        "The ONLY trust roots for the LLM connection.",
        p.ca_pin,
    ),
    declare(
        "UNDERCROFT_LLM_KEY",
        "llm",
        "secret",
        "unset (no header)",
        "any text; empty sends no header",
        D.ACCEPT,
        "Bearer for an authenticating gateway.",
        lambda raw: raw or None,
    ),
)

TELEMETRY: tuple[Declaration, ...] = (
    declare(
        "UNDERCROFT_LOG",
        "telemetry",
        "text",
        "unset",
        "a log filter, e.g. info",
        D.ACCEPT,
        "Log level/filter.",
        p.opaque_text,
    ),
    declare(
        "UNDERCROFT_LOG_FORMAT",
        "telemetry",
        "text",
        "text",
        "json for structured logs",
        D.ACCEPT,
        "Log format.",
        p.opaque_text,
        constant("text"),
    ),
    declare(
        "UNDERCROFT_OTLP_ENDPOINT",
        "telemetry",
        "URL",
        "unset (nothing leaves the process)",
        _URL_LEGAL,
        D.REFUSE,
        "OTLP/HTTP trace export; a declaration naming no endpoint refuses.",
        p.outward_url,
        requires=switches_on(Capability.TELEMETRY_OTLP),
    ),
    declare(
        "UNDERCROFT_OTLP_CA",
        "telemetry",
        "CA pin",
        "unset (public roots)",
        _CA_LEGAL,
        D.REFUSE,
        "The ONLY trust roots for the collector.",
        p.ca_pin,
    ),
    declare(
        "UNDERCROFT_OTLP_HEADERS",
        "telemetry",
        "secret",
        "unset",
        "comma-separated key=value pairs",
        D.ACCEPT,
        "OTLP export headers (may carry a bearer).",
        p.opaque_text,
    ),
    declare(
        "UNDERCROFT_SERVICE_NAME",
        "telemetry",
        "text",
        "undercroft",
        "a service name",
        D.ACCEPT,
        "Service name on exported spans.",
        p.opaque_text,
        constant("undercroft"),
    ),
)

ORCHESTRATOR: tuple[Declaration, ...] = (
    declare(
        "UNDERCROFT_ORCH_DB",
        "orchestrator",
        "path",
        "unset",
        "a file path",
        D.ACCEPT,
        "Control plane state database.",
        p.opaque_path,
    ),
    declare(
        "UNDERCROFT_ORCH_KEY",
        "orchestrator",
        "secret",
        "required",
        _BEARER_LEGAL,
        D.REFUSE,
        "Sealing key for stored engine credentials.",
        p.secret(),
        secret=True,
    ),
    declare(
        "UNDERCROFT_ORCH_ADMIN_TOKEN",
        "orchestrator",
        "secret",
        "required on the writer",
        "a token of at least 16 characters not ending in whitespace",
        D.REFUSE,
        "Admin plane bearer.",
        p.secret(16),
        secret=True,
    ),
    declare(
        "UNDERCROFT_ORCH_ENGINE_CA",
        "orchestrator",
        "CA pin",
        "unset (public roots)",
        _CA_LEGAL,
        D.REFUSE,
        "The ONLY trust roots for the hop to the engines.",
        p.ca_pin,
    ),
    declare(
        "UNDERCROFT_ORCH_ADDR",
        "orchestrator",
        "address",
        "127.0.0.1:8900",
        "host:port",
        D.WARN,
        "Control plane listen address.",
        p.address,
        constant(Address("127.0.0.1", 8900)),
    ),
    declare(
        "UNDERCROFT_ORCH_METRICS_ADDR",
        "orchestrator",
        "address",
        "unset (no listener)",
        "host:port; a non-loopback host needs UNDERCROFT_ORCH_METRICS_TOKEN",
        D.REFUSE,
        "Separate /metrics listener (telemetry builds).",
        p.address,
    ),
    declare(
        "UNDERCROFT_ORCH_METRICS_TOKEN",
        "orchestrator",
        "secret",
        "unset",
        _BEARER_LEGAL,
        D.REFUSE,
        "Bearer for a non-loopback metrics listener.",
        p.secret(),
        secret=True,
    ),
    declare(
        "UNDERCROFT_ORCH_RATE_LIMIT",
        "orchestrator",
        "int",
        "off",
        "a plain integer (req/min), 0, or off",
        D.REFUSE,
        "Per-tenant request rate limit, per process.",
        p.orchestrator_rate_limit,
    ),
)

BENCH: tuple[Declaration, ...] = (
    declare(
        "UNDERCROFT_VS_URL",
        "bench",
        "URL",
        "unset",
        _URL_LEGAL,
        D.REFUSE,
        "Head-to-head competitor endpoint.",
        p.outward_url,
    ),
    declare(
        "UNDERCROFT_VS_ADD_PATH",
        "bench",
        "text",
        "unset",
        "a URL path",
        D.ACCEPT,
        "Competitor add path.",
        p.opaque_text,
    ),
    declare(
        "UNDERCROFT_VS_SEARCH_PATH",
        "bench",
        "text",
        "unset",
        "a URL path",
        D.ACCEPT,
        "Competitor search path.",
        p.opaque_text,
    ),
    declare(
        "UNDERCROFT_VS_BEARER",
        "bench",
        "secret",
        "unset",
        _BEARER_LEGAL,
        D.REFUSE,
        "Competitor bearer.",
        p.secret(),
        secret=True,
    ),
)
