"""BM25's per-query work (issue 19 item 2): the pool's language vote read from each entry's function-word cells,
and morphological relatives confirmed once per (term, language) as the vocabulary grows. Both equal the
computation they replace, and no memo outlives a write, a delete, a forget or a key rotation: whatever a memo
holds, a search returns only drawers that exist now, read verified."""

from __future__ import annotations

import random
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_core.language import LANGUAGES, same_lexeme
from undercroft_core.language.resolution import _VOTER_WORDS
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.governance.forgetting import forget
from undercroft_store.integrity.rotation import rotate_context
from undercroft_store.search import Searcher, SearchRequest
from undercroft_store.search.lexical import LexicalQuery, _pool_resolution, _relatives, _sampled_resolution, score_pool
from undercroft_store.search.lexicon import VOTER_WORDS, LexicalPool, Lexicon

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

EMBEDDER = HashEmbedder()

# Several languages, scripts that settle a language (Greek, Cyrillic), a mixed line, digits, punctuation only.
SENTENCES = [
    "The children are playing in the garden and the dog is with them.",
    "Die Kinder spielen im Garten und der Hund ist bei ihnen.",
    "Les enfants jouent dans le jardin avec le chien.",
    "Los niños juegan en el jardín con el perro.",
    "Τα παιδιά παίζουν στον κήπο με τον σκύλο.",
    "Дети играют в саду с собакой.",
    "running runner runs ran the race of the runners",
    "Der Läufer lief und die Läuferin läuft weiter.",
    "Kind Kinder Kindern spielen spielte gespielt",
    "12 34 5678",
    "!!! ...",
    "a Greek word λόγος in an English line, and the rest is English.",
    "Ein Satz mit einem Wort: and.",
]


def _drawer(index: int, text: str, wing: str = "w") -> Drawer:
    return Drawer(
        id=append_drawer_id(wing, "r", index),
        content=text,
        wing=wing,
        room="r",
        chunk_index=index,
        id_recipe="append",
        added_by="test",
        filed_at="2024-01-01T00:00:00Z",
    )


def test_the_voter_words_are_the_resolution_tables_own() -> None:
    assert VOTER_WORDS == _VOTER_WORDS


def test_the_pool_vote_read_from_voter_cells_equals_the_vote_read_from_every_term() -> None:
    rng = random.Random(5)
    lexicon = Lexicon()
    entries = [lexicon.add(seq, _drawer(seq, text)) for seq, text in enumerate(SENTENCES)]
    settled_seen = 0
    for _ in range(400):
        rows = [rng.choice(entries) for _ in range(rng.randint(0, 24))]  # repeats: two drawers, same text
        pool = lexicon.pool(rows)
        fast, general = _pool_resolution(pool), _sampled_resolution(pool)
        assert fast == general
        settled_seen += fast.source == "script"
    assert settled_seen > 0  # premise: the draw reached the general path too


def _voter_counts_by_loop(pool: LexicalPool, rows: int) -> dict[str, int]:
    """The per-cell walk `LexicalPool.voter_counts` replaced (issue 19, searchcost3): its reference."""
    totals: dict[int, int] = {}
    for entry in pool.entries[:rows]:
        for cell in np.frombuffer(entry.voters, dtype=np.int64).tolist():
            totals[cell >> 32] = totals.get(cell >> 32, 0) + (cell & 0xFFFFFFFF)
    return {pool.lexicon.terms[term_id]: total for term_id, total in totals.items()}


def test_voter_counts_equal_the_per_cell_walk_in_values_and_order() -> None:
    rng = random.Random(9)
    lexicon = Lexicon()
    entries = [lexicon.add(seq, _drawer(seq, text)) for seq, text in enumerate(SENTENCES)]
    voted = 0
    for _ in range(300):
        pool = lexicon.pool([rng.choice(entries) for _ in range(rng.randint(0, 24))])
        for rows in (0, 1, 16, 30):
            assert list(pool.voter_counts(rows).items()) == list(_voter_counts_by_loop(pool, rows).items())
        voted += len(pool.voter_counts(16)) > 1
    assert voted > 100  # premise: most samples hold several function words


def test_relatives_from_the_memo_equal_a_pairwise_confirmation_as_the_vocabulary_grows() -> None:
    lexicon = Lexicon()
    terms = ["run", "kind", "spielen", "garten", "läufer", "the"]
    for seq, text in enumerate(SENTENCES):
        entry = lexicon.add(seq, _drawer(seq, text))
        pool = lexicon.pool([entry])
        everything = set(range(len(lexicon.terms)))
        for term in terms:
            for language in LANGUAGES:
                own = lexicon.term_id(term)
                expected = sorted(
                    (lexicon.terms[other], other)
                    for other in lexicon.near(term)
                    if other != own and same_lexeme(term, lexicon.terms[other], language) is not None
                )
                assert _relatives(term, pool, everything, language) == expected
    assert any(held[2] for held in lexicon.relative_memo.values())  # premise: relatives were found
    lexicon.clear()
    assert lexicon.relative_memo == {} and lexicon.typo_memo == {}


def test_a_pool_scores_the_same_whatever_the_memos_hold() -> None:
    warm = Lexicon()
    everything = [warm.add(seq, _drawer(seq, text)) for seq, text in enumerate(SENTENCES)]
    queries = [LexicalQuery.parse(q) for q in ("runners racing", "Kinder im Garten", "the dog", "λόγος")]
    for query in queries:
        score_pool(query, warm.pool(everything))  # memos now hold the whole vocabulary's relatives
    for query in queries:
        for first in range(0, len(SENTENCES), 3):
            fresh = Lexicon()
            subset = [fresh.add(seq, _drawer(seq, text)) for seq, text in enumerate(SENTENCES[first : first + 3])]
            expected = score_pool(query, fresh.pool(subset))
            got = score_pool(query, warm.pool(everything[first : first + 3]))
            assert got.total.tolist() == expected.total.tolist()
            assert got.exact.tolist() == expected.exact.tolist()
            assert got.language == expected.language


# --- the memos across a vault's changes -------------------------------------------------------------------

FILLER = [f"filler note {i} about orchards and harvest weather" for i in range(40)]
SECRET = "The lighthouse keeper hides the brass telescope under the floorboards."
# Exact, morphological (telescopes, keepers) and typo (telescpe) routes to the secret drawer.
PROBES = ["brass telescope", "telescopes keepers", "telescpe floorboards", "lighthouse"]


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[tuple[Palace, VaultStore]]:
    with Palace(tmp_path) as palace:
        palace.create_vault("v", level="sealed")
        with palace.open_vault("v", EMBEDDER) as store:
            store.write([DrawerWrite(_drawer(i, text)) for i, text in enumerate([*FILLER, SECRET])], screening=Screen())
            yield palace, store


def _ids(searcher: Searcher, query: str) -> list[str]:
    return [hit.id for hit in searcher.search(SearchRequest(query, limit=50)).hits]


SECRET_ID = append_drawer_id("w", "r", len(FILLER))


def _warmed(store: VaultStore) -> Searcher:
    searcher = Searcher(store, EMBEDDER, gate="off")
    for probe in PROBES:
        assert SECRET_ID in _ids(searcher, probe)  # premise: every route reaches it, and the memos are filled
    assert searcher.lexicon.relative_memo and searcher.lexicon.typo_memo
    return searcher


def _delete(palace: Palace, store: VaultStore) -> None:
    store.delete(SECRET_ID)


def _forget(palace: Palace, store: VaultStore) -> None:
    forget(store, [SECRET_ID], reason="data subject request")


@pytest.mark.parametrize("remove", [_delete, _forget], ids=["delete", "forget"])
def test_a_removed_drawer_is_never_returned_through_a_warm_memo(
    vault: tuple[Palace, VaultStore], remove: Callable[[Palace, VaultStore], None]
) -> None:
    palace, store = vault
    searcher = _warmed(store)
    remove(palace, store)
    for probe in PROBES:
        hits = searcher.search(SearchRequest(probe, limit=50)).hits
        assert SECRET_ID not in [hit.id for hit in hits]
        assert all("telescope" not in hit.content for hit in hits)


def test_a_write_reaches_new_words_through_warm_memos(vault: tuple[Palace, VaultStore]) -> None:
    _, store = vault
    searcher = _warmed(store)
    fresh_id = append_drawer_id("w", "r", 99)
    store.write(
        [DrawerWrite(_drawer(99, "A zeppelinist moored the zeppelins beside the harbour."))], screening=Screen()
    )
    # the exact form, a relative and a typo of words the memos have never seen
    for probe in ("zeppelins", "zeppelin", "zepellins"):
        assert fresh_id in _ids(searcher, probe), probe


def test_a_rotation_re_keys_under_a_live_searcher_and_its_memos_follow(vault: tuple[Palace, VaultStore]) -> None:
    palace, store = vault
    searcher = _warmed(store)
    before = {probe: _ids(searcher, probe) for probe in PROBES}
    epoch = searcher.lexicon.epoch
    rotate_context(store._context, palace._master_key())
    after = {probe: _ids(searcher, probe) for probe in PROBES}
    assert after == before
    assert searcher.lexicon.epoch > epoch  # every tag moved: the entries, vocabulary and memos were dropped
    store.delete(SECRET_ID)  # and the re-keyed vault's caches still follow a delete
    assert all(SECRET_ID not in _ids(searcher, probe) for probe in PROBES)
