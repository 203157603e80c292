"""Batched verified hydration, the lexical RAM cache and the vectorised BM25 (issue 7 speed)."""

from __future__ import annotations

import math
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_core.language import Token, resolve_language
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.errors import InvalidDrawer, RecordTampered
from undercroft_store.kernel._internal.hydration import trusted_drawer
from undercroft_store.search import Searcher, SearchRequest
from undercroft_store.search._internal.term_bags import TermBag, term_bag
from undercroft_store.search.lexical import BM25_B, BM25_K1, LexicalQuery, _pool_resolution, score_lexical
from undercroft_store.search.lexicon import Lexicon

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

EMBEDDER = HashEmbedder()


def _drawer(index: int, content: str, *, room: str = "r") -> Drawer:
    return Drawer(
        id=append_drawer_id("w", room, index),
        content=content,
        wing="w",
        room=room,
        chunk_index=index,
        id_recipe="append",
        added_by="test",
        filed_at="2024-01-02T00:00:00Z",
        content_date="2023-10-02",
    )


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[VaultStore]:
    palace = Palace(tmp_path)
    palace.create_vault("v")
    store = palace.open_vault("v", EMBEDDER)
    yield store
    store.close()
    palace.close()


def _write(store: VaultStore, drawers: list[Drawer]) -> None:
    store.write([DrawerWrite(d) for d in drawers], screening=Screen())


def _tamper(database: Path, column: str, edit: bytes | None = None) -> None:
    with sqlite3.connect(database) as raw:
        seq, blob = raw.execute(f"SELECT seq, {column} FROM drawers ORDER BY seq LIMIT 1").fetchone()
        changed = bytearray(blob)
        changed[-1] ^= 0x01
        raw.execute(f"UPDATE drawers SET {column} = ? WHERE seq = ?", (edit or bytes(changed), seq))


# --- batched hydration -----------------------------------------------------------------------------------
def test_hydrate_many_equals_the_strict_read_in_the_order_given(vault: VaultStore) -> None:
    _write(vault, [_drawer(i, f"note {i} on the 3rd of May") for i in range(5)])
    seqs = vault.scope_seqs().tolist()
    asked = [seqs[3], 10_000, seqs[0], seqs[3], seqs[1]]
    found = vault.hydrate_many(asked)
    assert list(found) == [seqs[3], seqs[0], seqs[1]]  # absent skipped, repeats once, order kept
    assert list(found.values()) == vault.hydrate([seqs[3], seqs[0], seqs[1]])
    assert vault.hydrate_many([]) == {}


def test_hydrate_many_refuses_what_is_not_a_seq(vault: VaultStore) -> None:
    with pytest.raises(InvalidDrawer, match="hydrate_many takes seq numbers, got str"):
        vault.hydrate_many(["w-r-0"])  # type: ignore[list-item]
    with pytest.raises(InvalidDrawer, match="got bool"):
        vault.hydrate_many([True])


@pytest.mark.parametrize("column", ["content", "meta_json", "tag"])
def test_hydrate_many_refuses_a_tampered_row(tmp_path: Path, column: str) -> None:
    with Palace(tmp_path) as palace:
        palace.create_vault("v")
        with palace.open_vault("v", EMBEDDER) as store:
            _write(store, [_drawer(0, "the plum recipe"), _drawer(1, "the pear recipe")])
        _tamper(tmp_path / "vaults" / "v" / "vault.db", column)
        with palace.open_vault("v", EMBEDDER) as store, pytest.raises(RecordTampered, match="fails its HMAC tag"):
            store.hydrate_many(store.scope_seqs().tolist())


def test_trusted_rebuild_equals_the_validating_rebuild(vault: VaultStore) -> None:
    drawer = _drawer(0, "Yesterday we met on 2023-10-01.")
    assert trusted_drawer(drawer.id, drawer.content, drawer.meta_at_rest()) == drawer


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda m: m.replace(b'"room":"r"', b'"room":"r","room":"r"'), "repeats a key"),
        (lambda m: m.replace(b'"hall":null,', b""), "exactly the at-rest keys"),
        (lambda m: m.replace(b'"chunk_index":0', b'"chunk_index":"0"'), "chunk_index must be an integer"),
        (lambda m: m.replace(b'"chunk_index":0', b'"chunk_index":true'), "chunk_index must be an integer"),
        (lambda m: m.replace(b'"room":"r"', b'"room":7'), "room must be a string"),
        (lambda m: m.replace(b'"meta_version":1', b'"meta_version":2'), "unsupported meta_version 2"),
        (lambda m: m.replace(b'"occurrences":[]', b'"occurrences":[{"filed_at":"x"}]'), "exactly the keys"),
        (lambda m: m[:-1], "not JSON"),
    ],
)
def test_trusted_rebuild_keeps_the_parse_strict(edit: object, message: str) -> None:
    drawer = _drawer(0, "a plain note")
    with pytest.raises(ValueError, match=message):
        trusted_drawer(drawer.id, drawer.content, edit(drawer.meta_at_rest()))  # type: ignore[operator]


# --- the lexical cache -------------------------------------------------------------------------------------
def test_lexicon_fills_once_and_follows_the_generation(vault: VaultStore) -> None:
    _write(vault, [_drawer(i, f"walnut harvest {i}") for i in range(4)])
    searcher = Searcher(vault, EMBEDDER)
    searcher.search(SearchRequest("walnut"))
    assert (searcher.lexicon.filled, len(searcher.lexicon)) == (4, 4)
    searcher.search(SearchRequest("harvest"))
    assert searcher.lexicon.filled == 4  # scored from the cache: nothing read again but the page
    _write(vault, [_drawer(9, "walnut cake")])
    hits = searcher.search(SearchRequest("walnut cake")).hits
    assert hits[0].content == "walnut cake"
    assert (searcher.lexicon.resets, searcher.lexicon.filled, len(searcher.lexicon)) == (1, 9, 5)


def test_warm_fills_the_whole_vault_verified(tmp_path: Path) -> None:
    with Palace(tmp_path) as palace:
        palace.create_vault("v")
        with palace.open_vault("v", EMBEDDER) as store:
            _write(store, [_drawer(i, f"fig {i}") for i in range(6)])
            searcher = Searcher(store, EMBEDDER)
            assert searcher.warm() == 6 and searcher.warm() == 0
        _tamper(tmp_path / "vaults" / "v" / "vault.db", "content")
        with palace.open_vault("v", EMBEDDER) as store, pytest.raises(RecordTampered):
            Searcher(store, EMBEDDER).warm()


def test_a_cached_candidate_is_read_verified_again_when_returned(tmp_path: Path) -> None:
    with Palace(tmp_path) as palace:
        palace.create_vault("v")
        with palace.open_vault("v", EMBEDDER) as store:
            _write(store, [_drawer(0, "the plum recipe"), _drawer(1, "a pear")])
            searcher = Searcher(store, EMBEDDER)
            searcher.warm()
            database = tmp_path / "vaults" / "v" / "vault.db"
            _tamper(database, "content")  # another connection commits: the generation moves
            with pytest.raises(RecordTampered):
                searcher.search(SearchRequest("plum recipe"))


def test_a_drawer_deleted_mid_search_restarts_the_search(vault: VaultStore) -> None:
    _write(vault, [_drawer(0, "quince jam"), _drawer(1, "quince tart"), _drawer(2, "apple pie")])
    searcher = Searcher(vault, EMBEDDER)
    searcher.search(SearchRequest("quince"))
    real = vault.hydrate_many
    calls = []

    def deleting(seqs: object) -> object:
        if not calls:
            vault.delete(_drawer(0, "x").id)
        calls.append(seqs)
        return real(seqs)  # type: ignore[arg-type]

    vault.hydrate_many = deleting  # type: ignore[method-assign]
    hits = searcher.search(SearchRequest("quince")).hits
    assert [h.content for h in hits] == ["quince tart"] and len(calls) >= 2


def test_scope_answers_are_memoised_per_generation(vault: VaultStore) -> None:
    _write(vault, [_drawer(0, "olive oil")])
    searcher = Searcher(vault, EMBEDDER)
    real = vault.scope_seqs
    calls = []

    def counting(**kwargs: object) -> object:
        calls.append(kwargs)
        return real(**kwargs)  # type: ignore[arg-type]

    vault.scope_seqs = counting  # type: ignore[method-assign]
    searcher.search(SearchRequest("olive"))
    first = len(calls)
    searcher.search(SearchRequest("oil"))
    assert len(calls) == first
    _write(vault, [_drawer(1, "olive branch")])
    # the handle's change feed names the new drawer: the answer is patched, not read again
    assert len(searcher.search(SearchRequest("olive")).hits) == 2 and len(calls) == first


# --- vectorised BM25 against the textbook loop ---------------------------------------------------------
def _reference(terms: list[str], bags: list[TermBag]) -> list[float]:
    count = len(bags)
    average = sum(bag.length for bag in bags) / count or 1.0
    totals = [0.0] * count
    for term in dict.fromkeys(terms):
        holding = sum(1 for bag in bags if bag.counts.get(term))
        if not holding:
            continue
        idf = math.log(1.0 + (count - holding + 0.5) / (holding + 0.5))
        for row, bag in enumerate(bags):
            tf = bag.counts.get(term, 0)
            norm = BM25_K1 * (1.0 - BM25_B + BM25_B * bag.length / average)
            totals[row] += idf * (BM25_K1 + 1.0) * terms.count(term) * tf / (tf + norm)
    return totals


_WORDS = st.sampled_from(["qa", "zb", "xc", "wd", "vq", "uf", "tg", "sh"])  # none an English stop word


@settings(max_examples=60, deadline=None)
@given(st.lists(st.lists(_WORDS, min_size=1, max_size=12), min_size=1, max_size=8), st.lists(_WORDS, min_size=1))
def test_vectorised_bm25_equals_the_textbook_formula(texts: list[list[str]], query: list[str]) -> None:
    # Two-letter nonsense words: no morphological relative and no typo budget, so only the exact channel runs.
    bags = [term_bag(" ".join(words)) for words in texts]
    scores = score_lexical(LexicalQuery.parse(" ".join(query), "en"), bags)
    assert scores.total.tolist() == pytest.approx(_reference(query, bags), rel=1e-12, abs=1e-12)
    assert scores.morph.tolist() == pytest.approx([0.0] * len(bags), abs=1e-12)


# --- query term handling -------------------------------------------------------------------------------------
def test_function_words_of_the_query_language_are_not_scored() -> None:
    bags = [term_bag("the the the the of the"), term_bag("a heron by the lake"), term_bag("cats and dogs")]
    scores = score_lexical(LexicalQuery.parse("what is the heron", "en"), bags)
    assert scores.total[0] == 0.0 and scores.total[1] > 0.0  # "the"/"what" are English function words
    only = score_lexical(LexicalQuery.parse("the", "en"), bags)
    assert only.total[0] > 0.0  # a query of function words only keeps them
    german = score_lexical(LexicalQuery.parse("the heron", "de"), bags)
    assert german.total[0] > 0.0  # under another language's table "the" is an ordinary word


@settings(max_examples=80, deadline=None)
@given(
    st.lists(
        st.sampled_from(["the", "and", "of", "der", "und", "nicht", "het", "een", "le", "et", "zq", "42"]), max_size=30
    )
)
def test_pool_resolution_reads_ascii_terms_as_text_exactly(words: list[str]) -> None:

    _, pool = Lexicon.of_bags([term_bag(" ".join(words) or "zq")])
    sample = sorted(pool.row_counts(16).items())
    tokens = [Token(t, 0, len(t), "number" if t.isdigit() else "latin") for t, n in sample for _ in range(min(n, 3))]
    assert _pool_resolution(pool) == resolve_language(tokens)
