"""The hmac-only FTS5 BM25 prefilter: when it applies, what it draws, and that it never decides what is returned."""

from __future__ import annotations

import random
import re
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import pytest
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.errors import RecordTampered
from undercroft_store.integrity.repair import repair_vault
from undercroft_store.search import HYDRATION_FLOOR, Searcher, SearchRequest
from undercroft_store.search.errors import InvalidSearch
from undercroft_store.search.fts import cosine_cut, fts_candidates, match_expression, usable_terms

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

EMBEDDER = HashEmbedder()
FILLERS = 600
QUERY = "where does zqxv wqzz keep the lantern"
_WORDS = [f"{a}{b}{c}" for a in "bcdfg" for b in "aeiou" for c in "lmnrst"]
#: A word held by every fourth filler: below half the vault, so it is sent to FTS5 and matches many rows.
_EMBER = "ember"
_TRACE_TIER = re.compile(r" tier=(\S+) ")


def _drawer(index: int, text: str) -> Drawer:
    wing = "a" if index % 2 == 0 else "b"
    return Drawer(
        id=append_drawer_id(wing, f"r{index % 5}", index),
        content=text,
        wing=wing,
        room=f"r{index % 5}",
        chunk_index=index,
        id_recipe="append",
        added_by="test",
        filed_at="2024-01-01T00:00:00Z",
    )


def _corpus(fillers: int = FILLERS) -> list[Drawer]:
    """Fillers echo the query's common words (high cosine); the needle (wing a) buries its rare name among 80
    other words; a decoy (wing b) holds the rare name too, for the scoped tests."""
    rng = random.Random(5)
    drawers = []
    for i in range(fillers):
        extra = [_EMBER] if i % 4 == 0 else []
        drawers.append(_drawer(i, " ".join(["where does she keep the lantern", *extra, *rng.choices(_WORDS, k=4)])))
    drawers.append(_drawer(fillers, "zqxv wqzz " + " ".join(rng.choices(_WORDS, k=80))))
    drawers.append(_drawer(fillers + 1, "zqxv wqzz decoy " + " ".join(rng.choices(_WORDS, k=80))))
    return drawers


def _fill(palace: Palace, name: str, level: str, fillers: int = FILLERS) -> None:
    palace.create_vault(name, level=level)  # type: ignore[arg-type]
    with palace.open_vault(name, EMBEDDER) as store:
        store.write([DrawerWrite(d) for d in _corpus(fillers)], screening=Screen())


@pytest.fixture(scope="module")
def shared(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Palace]:
    with Palace(Path(tmp_path_factory.mktemp("fts"))) as palace:
        _fill(palace, "plain", "hmac-only")
        _fill(palace, "sealed", "sealed")
        yield palace


@pytest.fixture(scope="module")
def plain(shared: Palace) -> Iterator[VaultStore]:
    with shared.open_vault("plain", EMBEDDER) as store:
        yield store


def _needle(store: VaultStore) -> int:
    return int(store.scope_seqs(wing="a")[-1])


def _tier(capsys: pytest.CaptureFixture[str]) -> str:
    found = _TRACE_TIER.findall(capsys.readouterr().err)
    assert len(found) == 1, found
    return str(found[0])


# --- the MATCH expression: user text never becomes FTS5 syntax ------------------------------------------------

HOSTILE = [
    '"zqxv',
    "zqxv NEAR(wqzz lantern, 2)",
    "-keep zqxv",
    "content:zqxv",
    "{content} : zqxv",
    "^zqxv AND (wqzz NOT lantern)",
    'zqxv" OR "lantern',
]


def test_match_expression_quotes_every_term_and_doubles_quotes() -> None:
    assert match_expression(["near", 'a"b', "near", "content"]) == '"near" OR "a""b" OR "content"'
    assert match_expression([]) is None and match_expression(["", " "]) is None
    # The language layer's cut keeps runs of letters or digits only: no operator character survives.
    assert usable_terms('zq* -keep content:zqxv NEAR(a, 2) "x" ^y') == [
        "zq",
        "keep",
        "content",
        "zqxv",
        "near",
        "a",
        "2",
        "x",
        "y",
    ]
    assert usable_terms('"*" - : ^ () {}') == []


def test_the_hostile_queries_are_fts5_syntax(shared: Palace) -> None:
    # Premise: passed through raw, these texts are operators (errors, prefixes, column filters, NEAR groups).
    with sqlite3.connect(shared.vault_dir("plain") / "vault.db") as raw:
        for query in ('"zqxv', "-keep zqxv", "nomatch:zqxv", "zqxv AND"):
            with pytest.raises(sqlite3.OperationalError):
                raw.execute("SELECT rowid FROM drawers_fts WHERE drawers_fts MATCH ?", (query,)).fetchall()
        prefixed = raw.execute("SELECT count(*) FROM drawers_fts WHERE drawers_fts MATCH 'zq* OR wq*'").fetchone()[0]
        assert prefixed == 2


@pytest.mark.parametrize("query", [*HOSTILE, "nomatch:zqxv", "zqxv AND", "keep -lantern zqxv"])
def test_hostile_query_syntax_is_plain_words(plain: VaultStore, query: str) -> None:
    drawn = fts_candidates(plain, query, plain.scope_seqs(), HYDRATION_FLOOR)
    # Quoted terms only: the two holders of the rare name; common words are not sent, nothing raises.
    assert sorted(drawn.tolist()) == [_needle(plain), _needle(plain) + 1]


def test_a_query_with_no_usable_term_draws_nothing(plain: VaultStore) -> None:
    population = plain.scope_seqs()
    assert fts_candidates(plain, '"*" - : ^ ()', population, HYDRATION_FLOOR).tolist() == []
    # A prefix operator is not honoured: "zq" and "wq" are words no drawer holds.
    assert fts_candidates(plain, "zq* OR wq*", population, HYDRATION_FLOOR).tolist() == []
    # Terms held by half the vault or more carry no FTS5 BM25 weight (IDF clamped): not sent, nothing drawn.
    assert fts_candidates(plain, "where does she keep the lantern", population, HYDRATION_FLOOR).tolist() == []
    assert fts_candidates(plain, "zqxv", population[:0], HYDRATION_FLOOR).tolist() == []


# --- what it draws --------------------------------------------------------------------------------------------


def _reference(shared: Palace, term: str, population: np.ndarray, wanted: int) -> list[int]:
    """Brute force: every FTS match by bm25 then rowid, filtered to the population in Python."""
    members = set(population.tolist())
    with sqlite3.connect(shared.vault_dir("plain") / "vault.db") as raw:
        ranked = raw.execute(
            "SELECT rowid FROM drawers_fts WHERE drawers_fts MATCH ? ORDER BY bm25(drawers_fts), rowid", (f'"{term}"',)
        ).fetchall()
    return [row[0] for row in ranked if row[0] in members][:wanted]


@pytest.mark.parametrize("seed", range(6))
def test_fts_candidates_equal_the_filtered_bm25_ranking(plain: VaultStore, shared: Palace, seed: int) -> None:
    rng = random.Random(seed)
    every = plain.scope_seqs()
    # Sparse populations force the over-fetch to grow; budgets below and above the members' match count.
    population = np.sort(rng.sample(every.tolist(), rng.choice([12, 60, 300, len(every)])))
    budget = rng.choice([3, 10, 40, 400])
    drawn = fts_candidates(plain, f"the {_EMBER}", population, budget, pool_div=None)
    expected = _reference(shared, _EMBER, population, budget)
    assert drawn.tolist() == expected and len(expected) > 0
    assert set(drawn.tolist()) <= set(population.tolist())


def test_at_least_population_over_pool_div_are_drawn(plain: VaultStore) -> None:
    population = plain.scope_seqs()
    holders = len(fts_candidates(plain, _EMBER, population, 1000))
    assert holders == FILLERS // 4
    assert len(fts_candidates(plain, _EMBER, population, 10, pool_div=None)) == 10
    assert len(fts_candidates(plain, _EMBER, population, 10, pool_div=8)) == len(population) // 8


def test_cosine_cut_keeps_the_bm25_floor_then_the_best_cosines() -> None:
    ranked = np.array([50, 10, 40, 20, 30, 60], dtype=np.int64)
    cosines = np.array([0.0, 0.1, 0.9, 0.2, 0.8, 0.9], dtype=np.float32)
    # keep 4: the BM25 best two (50, 10) whatever their cosine, then the best cosines (40 and 60 tie: 40 first).
    assert cosine_cut(ranked, cosines, 4).tolist() == [10, 40, 50, 60]
    assert cosine_cut(ranked, cosines, 10).tolist() == sorted(ranked.tolist())


# --- when the engine uses it ----------------------------------------------------------------------------------


def test_threshold_boundary(plain: VaultStore, capsys: pytest.CaptureFixture[str]) -> None:
    size = len(plain.scope_seqs())
    assert size > HYDRATION_FLOOR  # the pool is not exact, so lexical joiners are drawn at all
    at = Searcher(plain, EMBEDDER, fts_prefilter_min=size, trace=True)
    at.search(SearchRequest(QUERY, limit=5))
    assert _tier(capsys) == "full-scan" and at.postings is not None
    above = Searcher(plain, EMBEDDER, fts_prefilter_min=size - 1, trace=True)
    above.search(SearchRequest(QUERY, limit=5))
    assert _tier(capsys) == "full-scan+fts" and above.postings is None


def test_env_off_never_uses_it_and_a_declared_minimum_does(
    plain: VaultStore, capsys: pytest.CaptureFixture[str]
) -> None:
    off = Searcher.from_settings(
        plain, EMBEDDER, env={"UNDERCROFT_FTS_PREFILTER_MIN": "off", "UNDERCROFT_SEARCH_TRACE": "1"}
    )
    off.search(SearchRequest(QUERY, limit=5))
    assert _tier(capsys) == "full-scan" and off.postings is not None
    declared = Searcher.from_settings(
        plain, EMBEDDER, env={"UNDERCROFT_FTS_PREFILTER_MIN": "64", "UNDERCROFT_SEARCH_TRACE": "1"}
    )
    declared.search(SearchRequest(QUERY, limit=5))
    assert _tier(capsys) == "full-scan+fts" and declared.postings is None
    # The default (2048) is above this vault: the postings serve it.
    default = Searcher.from_settings(plain, EMBEDDER, env={"UNDERCROFT_SEARCH_TRACE": "1"})
    default.search(SearchRequest(QUERY, limit=5))
    assert _tier(capsys) == "full-scan"


@pytest.mark.parametrize("bad", [-1, True, 2.5, "64"])
def test_a_bad_minimum_is_refused(plain: VaultStore, bad: object) -> None:
    with pytest.raises(InvalidSearch, match=r"^fts_prefilter_min must be a non-negative integer or None; got "):
        Searcher(plain, EMBEDDER, fts_prefilter_min=bad)  # type: ignore[arg-type]


def test_a_sealed_vault_never_uses_it(shared: Palace, capsys: pytest.CaptureFixture[str]) -> None:
    with shared.open_vault("sealed", EMBEDDER) as store:
        searcher = Searcher(store, EMBEDDER, fts_prefilter_min=0, trace=True)
        result = searcher.search(SearchRequest(QUERY, limit=5))
        assert _tier(capsys) == "full-scan" and searcher.postings is not None
        assert result.hits[0].content.startswith("zqxv wqzz")


def test_a_pinned_ranking_keeps_the_postings(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    # A pinned pool is sized for TILED_DEPTH (3,200 hydrated): only a larger vault draws joiners at all.
    with Palace(tmp_path / "home") as palace:
        _fill(palace, "plain", "hmac-only", fillers=3_300)
        with palace.open_vault("plain", EMBEDDER) as store:
            searcher = Searcher(store, EMBEDDER, fts_prefilter_min=64, trace=True)
            searcher.search(SearchRequest(QUERY, limit=5))
            assert _tier(capsys) == "full-scan+fts" and searcher.postings is None
            pinned = searcher.search(SearchRequest(QUERY, limit=5, ranked_at=datetime(2030, 1, 1, tzinfo=UTC)))
            assert _tier(capsys) == "full-scan" and searcher.postings is not None
            assert pinned.pool > 3_200 and pinned.hits[0].content.startswith("zqxv wqzz")


def _cosine_rank(searcher: Searcher, store: VaultStore, seq: int) -> int:
    """How many drawers beat ``seq`` on cosine to the query (the full-scan cut keeps the hydration size)."""
    seqs, unit = searcher.cache.load(store)
    query = EMBEDDER.embed([QUERY])[0]
    cosines = unit @ (query / np.linalg.norm(query))
    return int(np.sum(cosines > cosines[int(np.searchsorted(seqs, seq))]))


def test_a_needle_answerable_only_lexically_is_found_without_postings(plain: VaultStore) -> None:
    searcher = Searcher(plain, EMBEDDER, fts_prefilter_min=64)
    # Premise: the cosine cut alone (the hydration size of a 5-hit page) misses the needle.
    assert _cosine_rank(searcher, plain, _needle(plain)) > HYDRATION_FLOOR
    result = searcher.search(SearchRequest(QUERY, limit=5))
    assert [hit.content.startswith("zqxv wqzz") for hit in result.hits[:2]] == [True, True]
    assert searcher.postings is None
    assert result.pool == HYDRATION_FLOOR + 2  # the cosine cut and the two FTS holders of the rare name


def test_a_scoped_search_draws_fts_candidates_only_from_its_scope(plain: VaultStore) -> None:
    wing_b = plain.scope_seqs(wing="b")
    assert len(wing_b) > HYDRATION_FLOOR
    needle, decoy = _needle(plain), _needle(plain) + 1
    assert fts_candidates(plain, QUERY, wing_b, HYDRATION_FLOOR).tolist() == [decoy]
    assert fts_candidates(plain, QUERY, plain.scope_seqs(wing="a"), HYDRATION_FLOOR).tolist() == [needle]
    searcher = Searcher(plain, EMBEDDER, fts_prefilter_min=64)
    hits = searcher.search(SearchRequest(QUERY, wing="b", limit=5)).hits
    assert hits[0].content.startswith("zqxv wqzz decoy") and {hit.wing for hit in hits} == {"b"}
    assert searcher.postings is None


def test_a_read_only_handle_serves_it(shared: Palace) -> None:
    with shared.open_vault("plain", EMBEDDER, read_only=True) as store:
        searcher = Searcher(store, EMBEDDER, fts_prefilter_min=64)
        assert searcher.search(SearchRequest(QUERY, limit=5)).hits[0].content.startswith("zqxv wqzz")


# --- the trust boundary: FTS rows are derived plaintext outside the HMAC ----------------------------------------


@pytest.fixture
def fresh(tmp_path: Path) -> Iterator[Palace]:
    with Palace(tmp_path / "home") as palace:
        _fill(palace, "plain", "hmac-only", fillers=300)
        yield palace


def _raw(palace: Palace) -> sqlite3.Connection:
    return sqlite3.connect(palace.vault_dir("plain") / "vault.db", isolation_level=None)


def test_a_tampered_fts_row_changes_what_is_drawn_never_what_is_returned(fresh: Palace) -> None:
    with fresh.open_vault("plain", EMBEDDER) as store:
        needle, decoy = _needle(store), _needle(store) + 1
        filler = int(store.scope_seqs(wing="b")[3])
        raw = _raw(fresh)
        # The filler's FTS row now falsely holds the rare name; the needle's and the decoy's no longer do.
        raw.execute("UPDATE drawers_fts SET content = 'zqxv wqzz zqxv wqzz forged words' WHERE rowid = ?", (filler,))
        raw.execute("UPDATE drawers_fts SET content = 'nothing here' WHERE rowid = ?", (needle,))
        raw.execute("DELETE FROM drawers_fts WHERE rowid = ?", (decoy,))
        raw.close()
        population = store.scope_seqs()
        assert fts_candidates(store, QUERY, population, HYDRATION_FLOOR).tolist() == [filler]
        searcher = Searcher(store, EMBEDDER, fts_prefilter_min=64)
        # Premise: neither holder of the name is in the cosine cut of a 5-hit page; only FTS could draw them.
        assert min(_cosine_rank(searcher, store, seq) for seq in (needle, decoy)) > HYDRATION_FLOOR
        result = searcher.search(SearchRequest(QUERY, limit=5))
        # (a) every hit is the verified drawer, word for word; no forged FTS text is ever returned, and the
        # filler drawn by the forged row scores from its own verified words (no lexical evidence of the name).
        verified = {drawer.id: drawer.content for drawer in store.hydrate([hit.id for hit in result.hits])}
        assert [hit.content for hit in result.hits] == [verified[hit.id] for hit in result.hits]
        assert not any("zqxv" in hit.content or "forged" in hit.content for hit in result.hits)
    # (c) repair heals the index exactly as before (repair.py untouched): the needles come back.
    report = repair_vault(fresh, "plain", EMBEDDER)
    assert report.ok and (report.fts_added, report.fts_removed) == (3, 0)
    with fresh.open_vault("plain", EMBEDDER) as store:
        hits = Searcher(store, EMBEDDER, fts_prefilter_min=64).search(SearchRequest(QUERY, limit=5)).hits
        assert [hit.content.startswith("zqxv wqzz") for hit in hits[:2]] == [True, True]


def test_a_tampered_drawer_drawn_by_fts_is_refused(fresh: Palace) -> None:
    with fresh.open_vault("plain", EMBEDDER) as store:
        needle = _needle(store)
        raw = _raw(fresh)
        # (b) the system of record itself edited: the needle's plaintext, under an unchanged tag.
        raw.execute(
            "UPDATE drawers SET content = CAST(replace(CAST(content AS TEXT), 'wqzz', 'wqzy') AS BLOB) WHERE seq = ?",
            (needle,),
        )
        raw.close()
        searcher = Searcher(store, EMBEDDER, fts_prefilter_min=64)
        assert _cosine_rank(searcher, store, needle) > HYDRATION_FLOOR  # premise: drawn by FTS only
        # A search that does not draw the needle reads only its own candidates: it is served.
        assert searcher.search(SearchRequest("where does she keep the lantern", limit=5)).hits
        with pytest.raises(RecordTampered, match=r"fails its HMAC tag: run undercroft verify$"):
            searcher.search(SearchRequest(QUERY, limit=5))
        assert searcher.postings is None
