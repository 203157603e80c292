"""Search pipeline: pure stages over in-memory candidates, then the pipeline over a real sealed vault."""

from __future__ import annotations

import sqlite3
from datetime import UTC, date, datetime
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from undercroft_core import Drawer, HashEmbedder, calibrated_semantic_score
from undercroft_core.language import terms
from undercroft_store import DrawerWrite, Palace, RecordTampered, Screen, VaultStore
from undercroft_store.search import (
    FusionPolicy,
    InvalidSearch,
    LexicalQuery,
    Searcher,
    SearchRequest,
    TrustPolicy,
    cap_rooms,
    plan_pool,
    recency_by_share,
    score_lexical,
    semantic_scores,
)
from undercroft_store.search._internal.term_bags import term_bag, term_list

from .conftest import appended_drawer

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

EMBEDDER = HashEmbedder()


# --- pure stages ---------------------------------------------------------------------------------------
def test_recency_is_the_share_written_after() -> None:
    scope = np.array([1, 2, 5, 9], dtype=np.int64)
    assert recency_by_share(scope, np.array([9, 5, 1], dtype=np.int64)).tolist() == [1.0, 0.75, 0.25]
    assert recency_by_share(np.zeros(0, dtype=np.int64), np.array([3], dtype=np.int64)).tolist() == [0.0]


def test_hash_floor_reproduces_the_shipped_map_bit_for_bit() -> None:
    cosines = np.array([-1.0, -0.3, 0.0, 0.2, 0.77, 1.0])
    assert semantic_scores(cosines, 0.0).tolist() == [calibrated_semantic_score(c, 0.0) for c in cosines]
    assert semantic_scores(cosines, 0.5).tolist() == pytest.approx([calibrated_semantic_score(c, 0.5) for c in cosines])
    with pytest.raises(InvalidSearch, match=r"semantic floor must be in \[0.0, 0.98\], got 0.99"):
        semantic_scores(cosines, 0.99)


def test_fusion_weight_is_clamped_and_rrf_refused() -> None:
    assert FusionPolicy(weight=0.95).weight == 0.70
    assert FusionPolicy(weight=0.01).weight == 0.20
    with pytest.raises(InvalidSearch, match="fusion must be one of bm25, legacy; got 'rrf' \\(rrf was removed\\)"):
        FusionPolicy(mode="rrf")  # type: ignore[arg-type]


def test_script_disjoint_pair_takes_the_ceiling() -> None:
    policy = FusionPolicy(weight=0.40)
    weights = policy.weights(frozenset({"latin"}), [frozenset({"arabic"}), frozenset({"latin", "arabic"}), frozenset()])
    assert weights.tolist() == [0.70, 0.40, 0.40]


def test_room_cap_is_soft_and_never_short() -> None:
    ranked = ["a1", "a2", "a3", "b1", "c1"]
    rooms = ["a", "a", "a", "b", "c"]
    assert cap_rooms(ranked, rooms, 1, 4) == ["a1", "b1", "c1", "a2"]
    assert cap_rooms(ranked, rooms, None, 4) == ["a1", "a2", "a3", "b1"]
    assert cap_rooms(ranked, ["a"] * 5, 1, 3) == ["a1", "a2", "a3"]


def test_pool_plan_scans_small_scopes_exactly_and_sizes_large_ones() -> None:
    assert plan_pool(100, 100_000, 10, 64).exact
    big = plan_pool(50_000, 100_000, 10, 64)
    assert (big.stage_one, big.hydrate, big.exact) == (100_000 // 64, 320, False)
    assert plan_pool(50_000, 100_000, 10, None).stage_one == 320


def test_lexical_channels_exact_morph_and_typo() -> None:
    bags = [term_bag("Running is fun and I ran five miles."), term_bag("The cat sat on the mat."), term_bag("A run.")]
    scores = score_lexical(LexicalQuery.parse("run", "en"), bags)
    assert scores.exact[2] > 0 and scores.morph[0] > 0 and scores.total[1] == 0
    typo = score_lexical(LexicalQuery.parse("databse", "en"), [term_bag("the database migrated"), term_bag("cats")])
    assert typo.exact.tolist() == [0.0, 0.0] and typo.morph[0] > 0


def test_each_candidate_reads_the_query_under_its_own_language() -> None:
    # One pool, two languages: the pool's joint vote is English, yet Kind must still reach Kinder in the German
    # drawer (its own function words say German) and run reach running in the English ones.
    bags = [
        term_bag("Die Kinder spielen im Garten und der Hund schläft."),
        term_bag("She was running to the station and the train was late."),
        term_bag("The report was filed and the team has moved on to the next thing."),
    ]
    kind = score_lexical(LexicalQuery.parse("Kind"), bags)
    assert kind.morph[0] > 0 and kind.total[1:].tolist() == [0.0, 0.0]
    run = score_lexical(LexicalQuery.parse("run"), bags)
    assert run.morph[1] > 0 and run.total[0] == 0.0
    # a declaration applies to every drawer: under English's table Kind/Kinder is no pair
    assert score_lexical(LexicalQuery.parse("Kind", "en"), bags).total[0] == 0.0


def test_a_drawer_that_says_nothing_takes_the_request_language() -> None:
    bags = [term_bag("Kinder"), term_bag("Der Hund und die Katze sind nicht im Haus, aber der Vogel ist da.")]
    assert term_bag("Kinder").resolution().language is None
    # the pool votes German, so the silent drawer is read under German too
    assert score_lexical(LexicalQuery.parse("Kind"), bags).morph[0] > 0


@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=200))
def test_ascii_fast_path_equals_the_language_tokenizer(text: str) -> None:
    assert term_list(text)[0] == terms(text)


@given(st.text(alphabet="ab “”—🙂’.,", max_size=60))
def test_separator_fast_path_equals_the_language_tokenizer(text: str) -> None:
    assert term_list(text)[0] == terms(text)


@pytest.mark.parametrize(
    ("fields", "message"),
    [
        ({"query": "  "}, "query must be a non-empty string"),
        ({"limit": 0}, "limit must be an integer from 1 to 1000; got 0"),
        ({"offset": -1}, "offset must be an integer from 0 to 1000000; got -1"),
        ({"room_cap": 0}, "room_cap must be an integer from 1 to 1000; got 0"),
        ({"kind": "gossip"}, "unknown kind 'gossip'"),
        ({"min_trust": "high"}, "unknown trust class 'high'"),
        ({"wing": "../etc"}, "invalid wing name"),
        ({"ranked_at": datetime(2024, 1, 1)}, "ranked_at must be a timezone-aware datetime"),
    ],
)
def test_bad_requests_are_refused_precisely(fields: dict[str, object], message: str) -> None:
    arguments: dict[str, object] = {"query": "hello"} | fields
    with pytest.raises(InvalidSearch, match=message.replace("(", r"\(").replace(")", r"\)")):
        SearchRequest(**arguments)  # type: ignore[arg-type]


# --- the pipeline over a sealed vault ---------------------------------------------------------------------
def _drawer(index: int, text: str, wing: str = "w", room: str = "r", day: int = 1, kind: str | None = None) -> Drawer:
    return appended_drawer(
        index,
        text,
        wing=wing,
        room=room,
        filed_at=f"2024-01-{day:02d}T00:00:00Z",
        content_date=f"2023-10-{day:02d}",
        kind=kind,
    )


@pytest.fixture
def vault(tmp_path: Path) -> VaultStore:
    palace = Palace(tmp_path)
    palace.create_vault("v")
    store = palace.open_vault("v", EMBEDDER)
    yield store
    store.close()
    palace.close()


def _write(store: VaultStore, drawers: list[Drawer]) -> None:
    store.write([DrawerWrite(d) for d in drawers], screening=Screen())


def test_the_only_relevant_drawer_survives_recency(vault: VaultStore) -> None:
    _write(vault, [_drawer(0, "The heron nests by the quarry lake.")])
    _write(vault, [_drawer(i, f"Meeting notes number {i} about budgets.", day=2) for i in range(1, 40)])
    hits = Searcher(vault, EMBEDDER).search(SearchRequest("heron quarry", limit=5)).hits
    assert [h.content for h in hits] == ["The heron nests by the quarry lake."]
    assert hits[0].lexical_exact > 0 and hits[0].time_mentions == ()


def test_gate_off_refuses_semantic_only_admission(vault: VaultStore) -> None:
    _write(vault, [_drawer(0, "alpha beta gamma"), _drawer(1, "delta epsilon")])
    assert Searcher(vault, EMBEDDER, gate=0.0).search(SearchRequest("zzz qqq")).hits
    assert Searcher(vault, EMBEDDER, gate="off").search(SearchRequest("zzz qqq")).hits == ()


def test_wing_scope_is_not_starved_by_the_unscoped_top_k(vault: VaultStore) -> None:
    _write(vault, [_drawer(i, f"Invoice {i} for the roof repair is due on Friday.", wing="crowd") for i in range(300)])
    _write(vault, [_drawer(0, "The roof repair invoice went to the landlord.", wing="small")])
    searcher = Searcher(vault, EMBEDDER)
    unscoped = searcher.search(SearchRequest("roof repair invoice due Friday", limit=10))
    assert all(h.wing == "crowd" for h in unscoped.hits)  # premise: the unscoped page misses the wing entirely
    scoped = searcher.search(SearchRequest("roof repair invoice due Friday", limit=10, wing="small"))
    assert [h.wing for h in scoped.hits] == ["small"]


def test_disclosures_are_none_without_a_filter(vault: VaultStore) -> None:
    _write(vault, [_drawer(0, "apples", kind="fact"), _drawer(1, "apples again"), _drawer(2, "apples", wing="low")])
    searcher = Searcher(vault, EMBEDDER, trust=TrustPolicy({"low": "quarantined"}))
    plain = searcher.search(SearchRequest("apples"))
    assert (plain.unlabeled_excluded, plain.trust_excluded_wings) == (None, None)
    filtered = searcher.search(SearchRequest("apples", kind="fact", min_trust="standard"))
    assert filtered.unlabeled_excluded == 1 and filtered.trust_excluded_wings == ("low",)
    assert [h.kind for h in filtered.hits] == ["fact"]
    floored = searcher.search(SearchRequest("apples", min_trust="standard"))
    assert {h.wing for h in floored.hits} == {"w"}


def test_pages_tile_the_deeper_call(vault: VaultStore) -> None:
    _write(
        vault,
        [_drawer(i, f"garden note {i} about tomatoes {'and basil' * (i % 3)}", room=f"r{i % 4}") for i in range(40)],
    )
    searcher = Searcher(vault, EMBEDDER)
    pinned = datetime(2030, 1, 1, tzinfo=UTC)
    deep = searcher.search(SearchRequest("tomatoes basil", limit=20, ranked_at=pinned, room_cap=2))
    tail = searcher.search(SearchRequest("tomatoes basil", limit=10, offset=10, ranked_at=pinned, room_cap=2))
    assert [h.to_dict() for h in tail.hits] == [h.to_dict() for h in deep.hits[10:]]


def test_ranked_at_pins_the_population(vault: VaultStore) -> None:
    _write(vault, [_drawer(0, "kiwi early", day=1), _drawer(1, "kiwi late", day=9)])
    hits = Searcher(vault, EMBEDDER).search(SearchRequest("kiwi", ranked_at=datetime(2024, 1, 5, tzinfo=UTC))).hits
    assert [h.content for h in hits] == ["kiwi early"]


def test_hit_carries_dates_mentions_and_elapsed(vault: VaultStore) -> None:
    _write(vault, [_drawer(0, "Yesterday Calvin met the artists in Boston.", day=4)])
    hit = Searcher(vault, EMBEDDER).search(SearchRequest("artists Boston", as_of=date(2023, 10, 14))).hits[0]
    assert hit.content_date == "2023-10-04" and hit.elapsed_days == 10 and hit.elapsed == "10 days ago"
    assert [m.resolved for m in hit.time_mentions] == ["2023-10-03"]
    assert "Boston" in [e.name for e in hit.entities]
    assert "added_by" not in hit.to_dict() and "source_file" not in hit.to_dict()


def test_declared_window_filters_and_query_window_promotes(vault: VaultStore) -> None:
    _write(vault, [_drawer(0, "concert in the park", day=3), _drawer(1, "concert downtown tonight", day=9)])
    searcher = Searcher(vault, EMBEDDER)
    declared = searcher.search(SearchRequest("concert", when="2023-10-03"))
    assert [h.content for h in declared.hits] == ["concert in the park"] and declared.window is not None
    read = searcher.search(SearchRequest("concert on 2023-10-09", when_from_query=True))
    assert read.hits[0].content == "concert downtown tonight" and len(read.hits) == 2
    assert searcher.search(SearchRequest("concert")).window is None


def test_cache_follows_writes(vault: VaultStore) -> None:
    searcher = Searcher(vault, EMBEDDER)
    _write(vault, [_drawer(0, "first walnut")])
    assert len(searcher.search(SearchRequest("walnut")).hits) == 1
    _write(vault, [_drawer(1, "second walnut")])
    assert len(searcher.search(SearchRequest("walnut")).hits) == 2
    assert searcher.cache.rebuilds == 2


def test_a_tampered_candidate_is_an_integrity_verdict(tmp_path: Path) -> None:
    with Palace(tmp_path) as palace:
        palace.create_vault("v")
        with palace.open_vault("v", EMBEDDER) as store:
            _write(store, [_drawer(0, "the secret plum recipe")])
        database = tmp_path / "vaults" / "v" / "vault.db"
        with sqlite3.connect(database) as raw:
            blob = bytearray(raw.execute("SELECT content FROM drawers").fetchone()[0])
            blob[-1] ^= 0x01
            raw.execute("UPDATE drawers SET content = ?", (bytes(blob),))
        with palace.open_vault("v", EMBEDDER) as store, pytest.raises(RecordTampered):
            Searcher(store, EMBEDDER).search(SearchRequest("plum recipe"))


def test_settings_drive_the_policy(vault: VaultStore) -> None:
    env = {"UNDERCROFT_FUSION": "legacy", "UNDERCROFT_FUSION_WEIGHT": "0.9", "UNDERCROFT_SEMANTIC_GATE": "off"}
    searcher = Searcher.from_settings(vault, EMBEDDER, env=env)
    assert searcher.gate is None
    _write(vault, [_drawer(0, "pear tart")])
    assert searcher.search(SearchRequest("pear")).fusion == "legacy"
