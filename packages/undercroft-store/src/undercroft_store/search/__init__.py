"""Hybrid search over one opened vault (issue 7): scope first, verified candidates, calibrated fusion.

``Searcher(store, embedder).search(SearchRequest("query"))`` runs the pipeline: scope resolution before any
candidate is drawn, the decrypt-once full scan (the seam for later tiers), HMAC-verified hydration, BM25 over
the language layer fused with the calibrated cosine and recency-by-share, the relevance gate, then selection
(room cap, paging) into hits that carry their provenance, dates and scores. See docs/search.md.
"""

from undercroft_store.search.candidates import (
    HYDRATION_FLOOR,
    HYDRATION_PER_RANK,
    TILED_DEPTH,
    Candidates,
    CandidateTier,
    EmbeddingCache,
    FullScanTier,
    PoolPlan,
    plan_pool,
)
from undercroft_store.search.engine import Searcher
from undercroft_store.search.errors import InvalidSearch, SearchError
from undercroft_store.search.fusion import (
    FUSION_MODES,
    RECENCY_WEIGHT,
    WEIGHT_CEILING,
    WEIGHT_FLOOR,
    WEIGHT_TOTAL,
    FusionMode,
    FusionPolicy,
    recency_by_share,
    semantic_scores,
)
from undercroft_store.search.gate import admit, resolve_gate
from undercroft_store.search.hits import SearchHit, SearchResult
from undercroft_store.search.lexical import (
    BM25_B,
    BM25_K1,
    MORPH_DISCOUNT,
    TYPO_DISCOUNT,
    LexicalQuery,
    LexicalScores,
    score_lexical,
    score_pool,
)
from undercroft_store.search.lexicon import LexicalEntry, LexicalPool, Lexicon
from undercroft_store.search.request import MAX_LIMIT, MAX_OFFSET, MAX_QUERY_CHARS, SearchRequest
from undercroft_store.search.scope import DEFAULT_TRUST, Scope, ScopeSource, TrustPolicy, resolve_scope
from undercroft_store.search.selection import cap_rooms, page
from undercroft_store.search.trace import SearchTrace

__all__ = [
    "BM25_B",
    "BM25_K1",
    "DEFAULT_TRUST",
    "FUSION_MODES",
    "HYDRATION_FLOOR",
    "HYDRATION_PER_RANK",
    "MAX_LIMIT",
    "MAX_OFFSET",
    "MAX_QUERY_CHARS",
    "MORPH_DISCOUNT",
    "RECENCY_WEIGHT",
    "TILED_DEPTH",
    "TYPO_DISCOUNT",
    "WEIGHT_CEILING",
    "WEIGHT_FLOOR",
    "WEIGHT_TOTAL",
    "CandidateTier",
    "Candidates",
    "EmbeddingCache",
    "FullScanTier",
    "FusionMode",
    "FusionPolicy",
    "InvalidSearch",
    "LexicalEntry",
    "LexicalPool",
    "LexicalQuery",
    "LexicalScores",
    "Lexicon",
    "PoolPlan",
    "Scope",
    "ScopeSource",
    "SearchError",
    "SearchHit",
    "SearchRequest",
    "SearchResult",
    "SearchTrace",
    "Searcher",
    "TrustPolicy",
    "admit",
    "cap_rooms",
    "page",
    "plan_pool",
    "recency_by_share",
    "resolve_gate",
    "resolve_scope",
    "score_lexical",
    "score_pool",
    "semantic_scores",
]
