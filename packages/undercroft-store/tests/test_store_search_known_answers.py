"""Known answers for the ranking's arithmetic: the fusion formula and each weight, recency by share, the
clamp, the script ceiling, the lexical share, the semantic floor map and the relevance gate.

Each expected number is written out here (or recomputed from the hit's own channels and the write order), never
read back from the module under test, so a swapped weight, a dropped term, an inverted recency or a halved gate
changes an answer. These bugs all survived the suite once (issue 17's mutation gate lists them).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from undercroft_core import HashEmbedder, calibrated_semantic_score
from undercroft_store import Palace, VaultStore
from undercroft_store.search import FusionPolicy, Searcher, SearchRequest
from undercroft_store.search.fusion import recency_by_share, semantic_scores
from undercroft_store.search.gate import admit, resolve_gate

EMBEDDER = HashEmbedder()
#: Written in this order: the k-th (1-based) of N has recency k / N (share of the scope written after it: N-k).
CONTENTS = (
    "The heron nested by the quarry pond.",
    "A grey heron stood in the quarry at dawn, a heron again at dusk.",
    "Quarry blasting is scheduled for Tuesday.",
    "The heron fished; the heron waited; the heron flew over the quarry.",
    "We watched one heron.",
)


@pytest.fixture
def vault(tmp_path: Path) -> VaultStore:
    palace = Palace(tmp_path / "palace")
    palace.init()
    store = palace.open_vault("default", EMBEDDER)
    for content in CONTENTS:
        store.remember(content, wing="nature", room="birds", added_by="t")
    return store


def _recency(hit_content: str) -> float:
    return (CONTENTS.index(hit_content) + 1) / len(CONTENTS)


@pytest.mark.parametrize(("declared", "weight"), [(None, 0.55), (0.95, 0.70), (0.05, 0.20), (0.40, 0.40)])
def test_the_fused_score_is_w_semantic_plus_the_rest_lexical_plus_a_tenth_recency(
    vault: VaultStore, declared: float | None, weight: float
) -> None:
    """score = w·semantic + (0.90 − w)·lexical + 0.10·recency, w clamped to 0.20–0.70, 0.55 by default."""
    fusion = None if declared is None else FusionPolicy(weight=declared)
    hits = Searcher(vault, EMBEDDER, fusion=fusion).search(SearchRequest("heron quarry", limit=10)).hits
    assert len(hits) == len(CONTENTS)
    assert any(abs(hit.semantic - hit.lexical) > 0.05 for hit in hits)  # the channels differ: a swap shows
    for hit in hits:
        expected = weight * hit.semantic + (0.90 - weight) * hit.lexical + 0.10 * _recency(hit.content)
        assert hit.score == pytest.approx(expected, abs=1e-9), (hit.content, hit.score, expected)


def test_the_lexical_channel_is_a_share_of_the_pools_best_and_semantic_is_the_calibrated_cosine(
    vault: VaultStore,
) -> None:
    hits = Searcher(vault, EMBEDDER).search(SearchRequest("heron quarry", limit=10)).hits
    assert max(hit.lexical for hit in hits) == pytest.approx(1.0)
    assert all(0.0 <= hit.lexical <= 1.0 for hit in hits)
    query = EMBEDDER.embed(["heron quarry"])[0]
    for hit in hits:
        content = EMBEDDER.embed([hit.content])[0]
        cosine = float(query @ content / (np.linalg.norm(query) * np.linalg.norm(content)))
        assert 0.0 <= hit.semantic <= 1.0
        assert hit.semantic == pytest.approx(calibrated_semantic_score(cosine, 0.0), abs=0.15)


def test_newer_drawers_rank_above_older_ones_when_nothing_else_differs(tmp_path: Path) -> None:
    palace = Palace(tmp_path / "palace")
    palace.init()
    with palace.open_vault("default", EMBEDDER) as store:
        ids = [
            store.remember(f"Heron sighting number {n}.", wing="nature", room="birds", added_by="t")[0].id
            for n in ("one", "two", "three")
        ]
        hits = Searcher(store, EMBEDDER).search(SearchRequest("heron sighting", limit=3)).hits
    # Near-identical content: recency (newest = 1.0) decides the order, and by exactly its share.
    assert hits[0].id == ids[-1]
    newest, oldest = (next(h for h in hits if h.id == i) for i in (ids[-1], ids[0]))
    gap = (newest.score - 0.55 * newest.semantic - 0.35 * newest.lexical) - (
        oldest.score - 0.55 * oldest.semantic - 0.35 * oldest.lexical
    )
    assert gap == pytest.approx(0.10 * (3 / 3 - 1 / 3))


def test_recency_by_share_known_answers() -> None:
    scope = np.array([10, 20, 30, 40], dtype=np.int64)
    got = recency_by_share(scope, np.array([40, 10, 25, 30], dtype=np.int64))
    assert got.tolist() == pytest.approx([1.0, 0.25, 0.5, 0.75])
    assert recency_by_share(np.array([], dtype=np.int64), np.array([1], dtype=np.int64)).tolist() == [0.0]


def test_fuse_known_answers() -> None:
    policy = FusionPolicy()
    got = policy.fuse(
        np.array([1.0, 0.0, 0.5]), np.array([0.0, 1.0, 0.5]), np.array([0.0, 1.0, 0.5]), np.array([0.55, 0.55, 0.70])
    )
    assert got.tolist() == pytest.approx([0.55, 0.35 + 0.10, 0.35 + 0.10 + 0.05])


def test_the_weight_is_clamped_and_a_script_disjoint_pair_takes_the_ceiling() -> None:
    assert FusionPolicy().weight == 0.55
    assert (FusionPolicy(weight=0.99).weight, FusionPolicy(weight=0.0).weight) == (0.70, 0.20)
    latin, cyrillic = frozenset({"Latin"}), frozenset({"Cyrillic"})
    weights = FusionPolicy(weight=0.30).weights(latin, [latin, cyrillic, frozenset(), latin | cyrillic])
    assert weights.tolist() == [0.30, 0.70, 0.30, 0.30]
    assert FusionPolicy(weight=0.30).weights(frozenset(), [cyrillic]).tolist() == [0.30]


def test_lexical_channel_known_answers() -> None:
    total, coverage = np.array([2.0, 8.0, 0.0]), np.array([0.5, 1.0, 0.0])
    assert FusionPolicy().lexical_channel(total, coverage).tolist() == [0.25, 1.0, 0.0]
    assert FusionPolicy(mode="legacy").lexical_channel(total, coverage).tolist() == [0.5, 1.0, 0.0]
    assert FusionPolicy().lexical_channel(np.zeros(2), np.zeros(2)).tolist() == [0.0, 0.0]


def test_semantic_floor_map_known_answers() -> None:
    cosines = np.array([-1.0, 0.0, 0.2, 0.6, 1.0])
    assert semantic_scores(cosines, 0.0).tolist() == pytest.approx([0.0, 0.5, 0.6, 0.8, 1.0])
    # floor 0.2: the floor maps to 0.5; above it 0.5 + 0.5·(c − 0.2)/0.8, below it 0.5·(c + 1)/1.2
    assert semantic_scores(cosines, 0.2).tolist() == pytest.approx([0.0, 0.5 / 1.2, 0.5, 0.75, 1.0])
    for cosine in cosines:
        assert semantic_scores(np.array([cosine]), 0.2)[0] == pytest.approx(calibrated_semantic_score(cosine, 0.2))


def test_admit_known_answers() -> None:
    exact, morph = np.array([0.0, 0.0, 0.0, 1.0, 0.0]), np.array([0.0, 0.0, 0.0, 0.0, 0.3])
    cosines = np.array([0.55, 0.56, 0.30, 0.0, 0.0])
    assert admit(exact, morph, cosines, 0.56).tolist() == [False, True, False, True, True]
    assert admit(exact, morph, cosines, None).tolist() == [False, False, False, True, True]
    assert resolve_gate(EMBEDDER, None) == 0.56 and resolve_gate(EMBEDDER, "off") is None


def _cosine(a: str, b: str) -> float:
    u, v = EMBEDDER.embed([a, b])
    return float(u @ v / (np.linalg.norm(u) * np.linalg.norm(v)))


def test_the_hash_gate_admits_a_semantic_only_match_at_056_and_nothing_below(tmp_path: Path) -> None:
    """Function words carry no lexical evidence but do move the hashed cosine: a clean semantic-only probe."""
    query = "is it the one that was"
    above, between = "that was it is the", "that was what he had been"
    assert _cosine(query, above) >= 0.56 and 0.28 <= _cosine(query, between) < 0.56
    palace = Palace(tmp_path / "palace")
    palace.init()
    with palace.open_vault("default", EMBEDDER) as store:
        for content in (above, between):
            store.remember(content, wing="w", room="r", added_by="t")
        found = {hit.content: hit for hit in Searcher(store, EMBEDDER).search(SearchRequest(query)).hits}
        assert set(found) == {above}
        assert (found[above].lexical_exact, found[above].lexical_morph) == (0.0, 0.0)  # admitted on its cosine
        assert Searcher(store, EMBEDDER, gate="off").search(SearchRequest(query)).hits == ()
        lowered = Searcher(store, EMBEDDER, gate=0.28).search(SearchRequest(query)).hits
        assert {hit.content for hit in lowered} == {above, between}  # the premise: `between` sits in the gap
