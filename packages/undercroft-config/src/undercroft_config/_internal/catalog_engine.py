"""Declarations of the engine's core, model and retrieval settings."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from undercroft_config._internal import parsers as p
from undercroft_config._internal.build import constant, declare, selects
from undercroft_config.declaration import Adjusted, Declaration
from undercroft_config.declaration import Doctrine as D
from undercroft_config.values import EmbedApi, Embedder, Fusion, Reranker, Retrieval

__all__ = ["CORE", "MODELS", "RETRIEVAL"]

LANGUAGES = ("en", "de", "es", "fr", "it", "pt", "ru", "zh", "ko", "hi")


def _home_default(_env: Mapping[str, str]) -> object:
    return Path("~/.undercroft").expanduser()


def _home(raw: str) -> object:
    if raw == "":
        return Adjusted(_home_default({}), "declared empty; using the default ~/.undercroft")
    return p.opaque_path(raw)


def _force_embedder(raw: str) -> object:
    # Opaque switch: only an explicit yes allows the identity swap; anything else keeps the refusal.
    return raw.strip().lower() in ("1", "true", "yes", "on")


def _cores(_env: Mapping[str, str]) -> object:
    return os.cpu_count() or 1


def _late_top_n_default(env: Mapping[str, str]) -> object:
    # A deployment that pinned the old single knob keeps the depth it pinned, even an unparsable one
    # (which resolves to the cross-encoder default, not to the late default 4x deeper).
    if "UNDERCROFT_RERANK_TOP_N" in env:
        try:
            value = p.integer(1)(env["UNDERCROFT_RERANK_TOP_N"])
        except p.Unparsable:
            return 50
        return value
    return 200


def _fusion(raw: str) -> object:
    if raw.strip().lower() == "rrf":
        return Adjusted(Fusion.BM25, "rrf was removed (measured 7.3pp worse than bm25); falling back to bm25")
    return p.choice(Fusion)(raw)


CORE: tuple[Declaration, ...] = (
    declare(
        "UNDERCROFT_HOME",
        "core",
        "path",
        "~/.undercroft",
        "a directory path",
        D.ACCEPT,
        "Palace directory: master key, vaults, backups.",
        _home,
        _home_default,
    ),
    declare(
        "UNDERCROFT_PASSPHRASE",
        "core",
        "secret",
        "unset (key file)",
        "a non-empty passphrase not ending in whitespace",
        D.REFUSE,
        "Derive the master key with Argon2id from this passphrase instead of a key file; an installation "
        "refuses the key source it was not created with.",
        p.secret(),
        secret=True,
    ),
    declare(
        "UNDERCROFT_LANG",
        "core",
        "text",
        "en",
        "one of " + ", ".join(LANGUAGES),
        D.ACCEPT,
        "CLI result-string language (errors, help and exit codes stay English); a language with no catalogue "
        "falls back to English with a note on stderr.",
        p.opaque_text,
        constant("en"),
    ),
)

MODELS: tuple[Declaration, ...] = (
    declare(
        "UNDERCROFT_EMBEDDER",
        "models",
        "enum",
        "hash",
        "one of hash, onnx, ort, http",
        D.REFUSE,
        "Which embedder, and so which vector space, the vault is in.",
        p.choice(Embedder),
        constant(Embedder.HASH),
        requires=selects("embedder"),
    ),
    declare(
        "UNDERCROFT_EMBED_URL",
        "models",
        "URL",
        "unset",
        "an https URL, or http to a loopback host",
        D.REFUSE,
        "Served embedder endpoint (TLS or loopback only, no override).",
        p.outward_url,
    ),
    declare(
        "UNDERCROFT_EMBED_MODEL",
        "models",
        "text",
        "unset",
        "a model name",
        D.ACCEPT,
        "Served embedder model name; recorded as http:<model>.",
        p.opaque_text,
    ),
    declare(
        "UNDERCROFT_EMBED_API",
        "models",
        "enum",
        "probed",
        "one of ollama, openai, tei",
        D.WARN,
        "Endpoint shape when probing cannot tell.",
        p.choice(EmbedApi),
    ),
    declare(
        "UNDERCROFT_EMBED_KEY",
        "models",
        "secret",
        "unset (no header)",
        "any text",
        D.ACCEPT,
        "Bearer credential for the served embedder.",
        lambda raw: raw or None,
    ),
    declare(
        "UNDERCROFT_EMBED_DIM",
        "models",
        "int",
        "probed",
        "an integer in 1..=65536",
        D.REFUSE,
        "Overrides the dimension otherwise probed from the endpoint.",
        p.integer(1, 65536),
    ),
    declare(
        "UNDERCROFT_EMBED_CA",
        "models",
        "CA pin",
        "unset (public roots)",
        "a readable PEM file with at least one certificate, or off",
        D.REFUSE,
        "Pins the served embedder's trust roots (replaces the public ones).",
        p.ca_pin,
    ),
    declare(
        "UNDERCROFT_ONNX_MODEL",
        "models",
        "path",
        "unset",
        "a model.onnx path",
        D.ACCEPT,
        "In-process embedder model file (onnx and ort).",
        p.opaque_path,
    ),
    declare(
        "UNDERCROFT_ONNX_TOKENIZER",
        "models",
        "path",
        "unset",
        "a tokenizer.json path",
        D.ACCEPT,
        "In-process embedder tokenizer.",
        p.opaque_path,
    ),
    declare(
        "UNDERCROFT_ONNX_NAME",
        "models",
        "text",
        "unset",
        "a model name",
        D.ACCEPT,
        "Recorded as the vault's embedder identity.",
        p.opaque_text,
    ),
    declare(
        "UNDERCROFT_RERANKER",
        "models",
        "enum",
        "unset (no second stage)",
        "one of onnx, ort, colbert, colbert-ort, or off",
        D.WARN,
        "Second retrieval stage: cross-encoder or late interaction.",
        p.choice(Reranker, allow_off=True),
        requires=selects("reranker"),
    ),
    declare(
        "UNDERCROFT_RERANK_MODEL",
        "models",
        "path",
        "unset",
        "a cross-encoder .onnx path",
        D.ACCEPT,
        "Cross-encoder model file.",
        p.opaque_path,
    ),
    declare(
        "UNDERCROFT_RERANK_TOKENIZER",
        "models",
        "path",
        "unset",
        "a tokenizer.json path",
        D.ACCEPT,
        "Cross-encoder tokenizer.",
        p.opaque_path,
    ),
    declare(
        "UNDERCROFT_RERANK_NAME",
        "models",
        "text",
        "onnx-reranker",
        "a model name",
        D.ACCEPT,
        "Identity the cross-encoder records for itself.",
        p.opaque_text,
        constant("onnx-reranker"),
    ),
    declare(
        "UNDERCROFT_RERANK_TOP_N",
        "models",
        "int",
        "50",
        "an integer ≥ 1",
        D.WARN,
        "Cross-encoder latency cap: one forward per candidate.",
        p.integer(1),
        constant(50),
    ),
    declare(
        "UNDERCROFT_LATE_TOP_N",
        "models",
        "int",
        "200 (or UNDERCROFT_RERANK_TOP_N when that is set)",
        "an integer ≥ 1",
        D.WARN,
        "Late-interaction rescore depth.",
        p.integer(1),
        _late_top_n_default,
    ),
    declare(
        "UNDERCROFT_COLBERT_MODEL",
        "models",
        "path",
        "unset",
        "a document-encoder .onnx path",
        D.ACCEPT,
        "ColBERT document encoder.",
        p.opaque_path,
    ),
    declare(
        "UNDERCROFT_COLBERT_QUERY_MODEL",
        "models",
        "path",
        "unset",
        "a query-encoder .onnx path",
        D.ACCEPT,
        "ColBERT query encoder.",
        p.opaque_path,
    ),
    declare(
        "UNDERCROFT_COLBERT_TOKENIZER",
        "models",
        "path",
        "unset",
        "a tokenizer.json path",
        D.ACCEPT,
        "ColBERT tokenizer.",
        p.opaque_path,
    ),
    declare(
        "UNDERCROFT_COLBERT_NAME",
        "models",
        "text",
        "colbert",
        "a model name",
        D.ACCEPT,
        "Identity the ColBERT encoder records for itself.",
        p.opaque_text,
        constant("colbert"),
    ),
    declare(
        "UNDERCROFT_ORT_POOL",
        "models",
        "int",
        "number of cores",
        "an integer in 1..=1024",
        D.WARN,
        "ONNX Runtime session pool size.",
        p.integer(1, 1024),
        _cores,
    ),
    declare(
        "UNDERCROFT_FORCE_EMBEDDER",
        "models",
        "bool",
        "unset (refuse a swap)",
        "1 to allow",
        D.ACCEPT,
        "Allow an embedder identity swap, then re-embed with repair.",
        _force_embedder,
        constant(False),
    ),
)

RETRIEVAL: tuple[Declaration, ...] = (
    declare(
        "UNDERCROFT_RETRIEVAL",
        "retrieval",
        "enum",
        "unset (full scan + FTS prefilter)",
        "one of pq, fde, hnsw, or off",
        D.WARN,
        "Candidate tier.",
        p.choice(Retrieval, allow_off=True),
        requires=selects("retrieval"),
    ),
    declare(
        "UNDERCROFT_SEARCH_TRACE",
        "retrieval",
        "bool",
        "unset (off)",
        "any value turns it on",
        D.PRESENCE,
        "Per-phase search timing trace to stderr; 0 and off turn it ON too.",
        p.presence,
        constant(False),
    ),
    declare(
        "UNDERCROFT_FUSION",
        "retrieval",
        "enum",
        "bm25",
        "one of bm25, legacy (rrf was removed)",
        D.WARN,
        "Lexical/semantic fusion.",
        _fusion,
        constant(Fusion.BM25),
    ),
    declare(
        "UNDERCROFT_FUSION_WEIGHT",
        "retrieval",
        "float",
        "0.55",
        "a number, clamped to 0.20–0.70",
        D.WARN,
        "Semantic weight w in w·semantic + (0.90−w)·lexical + 0.10·recency.",
        p.number(0.20, 0.70, clamp=True),
        constant(0.55),
    ),
    declare(
        "UNDERCROFT_TRAIN_SOURCE_CAP",
        "retrieval",
        "int",
        "4",
        "an integer ≥ 1, or off (uncapped)",
        D.WARN,
        "Per-wing cap divisor on codebook training draws.",
        p.integer(1, off=True),
        constant(4),
    ),
    declare(
        "UNDERCROFT_FTS_PREFILTER_MIN",
        "retrieval",
        "int",
        "2048",
        "an integer ≥ 1, or off",
        D.WARN,
        "hmac-only vaults above this many drawers use the FTS5 BM25 prefilter.",
        p.integer(1, off=True),
        constant(2048),
    ),
    declare(
        "UNDERCROFT_IVF_MIN",
        "retrieval",
        "int",
        "8192",
        "an integer ≥ 1",
        D.WARN,
        "IVF lists on top of PQ above this many drawers.",
        p.integer(1),
        constant(8192),
    ),
    declare(
        "UNDERCROFT_IVF_NPROBE",
        "retrieval",
        "int",
        "engine's own",
        "an integer ≥ 1",
        D.WARN,
        "IVF lists probed per query.",
        p.integer(1),
    ),
    declare(
        "UNDERCROFT_WING_PQ_MIN",
        "retrieval",
        "int",
        "4096",
        "an integer ≥ 1, or off",
        D.WARN,
        "Not built yet (validated, changes nothing): wings at least this large would carry their own PQ index; "
        "a declared scope is drawn through the whole index's id selector instead.",
        p.integer(1, off=True),
        constant(4096),
        unbuilt="the per-wing PQ tier",
    ),
    declare(
        "UNDERCROFT_POOL_DIV",
        "retrieval",
        "int",
        "64",
        "an integer ≥ 1, or off (fixed floor)",
        D.WARN,
        "Stage-1 candidates are at least live/div.",
        p.integer(1, off=True),
        constant(64),
    ),
    declare(
        "UNDERCROFT_PQ_PAGE_MIN",
        "retrieval",
        "int",
        "off",
        "an integer ≥ 1, or off",
        D.WARN,
        "Not built yet (validated, changes nothing): the sealed page tier, one AEAD page per IVF list above this "
        "size; every code row is sealed on its own.",
        p.integer(1, off=True),
        unbuilt="the sealed page tier",
    ),
    declare(
        "UNDERCROFT_TOK_PQ_MIN",
        "retrieval",
        "int",
        "256",
        "an integer ≥ 1",
        D.WARN,
        "Token matrices PQ-compressed above this many.",
        p.integer(1),
        constant(256),
    ),
    declare(
        "UNDERCROFT_FDE_PQ_MIN",
        "retrieval",
        "int",
        "256",
        "an integer ≥ 1",
        D.WARN,
        "FDE rows PQ-compressed in RAM at or above this many (the tier trains its codebook from them).",
        p.integer(1),
        constant(256),
    ),
    declare(
        "UNDERCROFT_FDE_IVF_MIN",
        "retrieval",
        "int",
        "off",
        "an integer ≥ 1, or off",
        D.WARN,
        "Opt-in inverted FDE tier (√N lists) at or above this many rows.",
        p.integer(1, off=True),
    ),
    declare(
        "UNDERCROFT_FDE_NPROBE",
        "retrieval",
        "int",
        "max(8, nlist/4)",
        "an integer ≥ 1",
        D.WARN,
        "FDE IVF lists probed per query (a scoped draw short of its pool probes every list).",
        p.integer(1),
    ),
    declare(
        "UNDERCROFT_FDE_REPS",
        "retrieval",
        "int",
        "engine's own",
        "an integer in 1..=64",
        D.WARN,
        "FDE repetitions (first build only, then persisted per vault).",
        p.integer(1, 64),
    ),
    declare(
        "UNDERCROFT_FDE_KSIM",
        "retrieval",
        "int",
        "engine's own",
        "an integer in 1..=12",
        D.WARN,
        # 12 is undercroft_core.fde's bound (2**12 buckets per repetition): a wider value would pass here and
        # then fail when the tier builds.
        "FDE SimHash bits (first build only).",
        p.integer(1, 12),
    ),
    declare(
        "UNDERCROFT_FDE_DPROJ",
        "retrieval",
        "int",
        "engine's own",
        "an integer in 1..=4096",
        D.WARN,
        "FDE projection dimension (first build only).",
        p.integer(1, 4096),
    ),
    declare(
        "UNDERCROFT_FDE_SEED",
        "retrieval",
        "int",
        "engine's own",
        "an integer in 0..=2^64−1",
        D.WARN,
        "FDE random seed (first build only).",
        p.integer(0, 2**64 - 1),
    ),
)
