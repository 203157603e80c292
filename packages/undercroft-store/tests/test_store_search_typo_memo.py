"""The typo neighbours of a query term are remembered per lexicon and extended as its vocabulary grows (issue 19):
the forms a pool scores are exactly those a scan of the pool's own vocabulary finds."""

from __future__ import annotations

from undercroft_core import Drawer, append_drawer_id
from undercroft_store.search.lexical import LexicalQuery, _typo_ids, _typos, score_pool
from undercroft_store.search.lexicon import Lexicon


def _drawer(index: int, text: str) -> Drawer:
    return Drawer(
        id=append_drawer_id("life", "r", index),
        content=text,
        wing="life",
        room="r",
        chunk_index=index,
        id_recipe="append",
        added_by="test",
        filed_at="2024-01-01T00:00:00Z",
    )


TEXTS = [
    "the lighthouse keeper logs every storm",
    "a lighthouses tour along the coast",
    "the ferry leaves the harbour at nine",
    "storms closed the lighthuse road",
]


def _names(lexicon: Lexicon, ids: frozenset[int]) -> set[str]:
    return {lexicon.terms[i] for i in ids}


def test_the_memo_equals_a_scan_and_follows_a_growing_vocabulary() -> None:
    lexicon = Lexicon()
    entries = [lexicon.add(seq, _drawer(seq, text)) for seq, text in enumerate(TEXTS[:3])]
    first = _typo_ids("lighthuose", lexicon)
    assert _names(lexicon, first) == set(_typos("lighthuose", set(lexicon.terms))) == {"lighthouse"}
    entries.append(lexicon.add(3, _drawer(3, TEXTS[3])))  # a new term within the budget arrives
    grown = _typo_ids("lighthuose", lexicon)
    assert _names(lexicon, grown) == set(_typos("lighthuose", set(lexicon.terms))) == {"lighthouse", "lighthuse"}
    assert lexicon.typo_memo["lighthuose"][1] == len(lexicon.terms)
    lexicon.clear()
    assert lexicon.typo_memo == {}


def test_a_pool_scores_only_its_own_typos_when_the_memo_holds_more() -> None:
    query = LexicalQuery.parse("lighthuose storm")
    warm = Lexicon()
    everything = [warm.add(seq, _drawer(seq, text)) for seq, text in enumerate(TEXTS)]
    score_pool(query, warm.pool(everything))  # the memo now holds "lighthuse" too
    assert _names(warm, warm.typo_memo["lighthuose"][2]) == {"lighthouse", "lighthuse"}
    fresh = Lexicon()
    subset = [fresh.add(seq, _drawer(seq, text)) for seq, text in enumerate(TEXTS[:3])]
    expected = score_pool(query, fresh.pool(subset))
    got = score_pool(query, warm.pool(everything[:3]))
    assert got.total.tolist() == expected.total.tolist()
    assert got.morph.tolist() == expected.morph.tolist()
    assert expected.total[0] > 0.0  # premise: the typo reaches the lighthouse drawer at all


def test_a_term_the_vocabulary_holds_but_the_pool_does_not_still_takes_the_pools_typos() -> None:
    """The query's own form is absent from this pool (another drawer of the lexicon holds it): its typo
    neighbours in the pool count, as they do in a lexicon that never saw the form."""
    query = LexicalQuery.parse("lighthouse")
    warm = Lexicon()
    everything = [warm.add(seq, _drawer(seq, text)) for seq, text in enumerate(TEXTS)]
    assert warm.term_id("lighthouse") is not None  # premise: the vocabulary holds the form
    fresh = Lexicon()
    only = [fresh.add(3, _drawer(3, TEXTS[3]))]  # "storms closed the lighthuse road"
    expected = score_pool(query, fresh.pool(only))
    got = score_pool(query, warm.pool(everything[3:]))
    assert expected.morph.tolist()[0] > 0.0  # the typo counts
    assert got.total.tolist() == expected.total.tolist()
    assert got.morph.tolist() == expected.morph.tolist()
