"""Equivalence, pinned (issue 19 item 5): a warm searcher — every memo filled (lexicon, postings, typo and
relative memos, term shapes, the analysis memo and its per-drawer readings, the store's verified rows) and
following writes through the change feed — returns byte for byte what a from-scratch search returns (a new
searcher, the store's verified-row memo dropped), over a synthetic corpus of 700 drawers in three wings and two
languages, with scopes, pages, a room cap, declared and query-read windows, two date conventions and typos.

The comparison is the `repr` of every hit (ids, content, all scores and channels, time mentions, entities,
elapsed days) plus the result's scope, population, pool and admitted counts.
"""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import date

import pytest
from undercroft_core import Drawer, HashEmbedder
from undercroft_core.language import ReadingConventions
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.search import Searcher, SearchRequest, SearchResult

from .conftest import appended_drawer

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

EMBEDDER = HashEmbedder()
DRAWERS = 700  # above the hydration floor (256): the pool is a cut, and the rare-term joiners join it
ENGLISH = (
    "harbour harbours lighthouse lighthouses keeper keepers storm storms stormy ferry ferries run runs running "
    "painted painting paints marathon marathons shelter adopted dog dogs garden gardens deploy deployed runbook "
    "handbook summit flew flight coast coastal"
).split()
GERMAN = "Kind Kinder spielen spielt Garten Gärten Hafen Häfen Sturm Stürme Fähre Fähren".split()
NAMES = ("Caroline", "Melanie", "John", "Dana", "Priya", "Tomasz")
DATES = ("on 03/04/2023", "yesterday", "two weeks ago", "last Tuesday", "on 12/05/2022", "in March 2023", "")


def _text(rng: random.Random, index: int) -> str:
    name = rng.choice(NAMES)
    when = rng.choice(DATES)
    if index % 5 == 0:
        words = " ".join(rng.choices(GERMAN, k=rng.randrange(5, 12)))
        return f"Die {words} mit {name} {when}".strip()
    words = " ".join(rng.choices(ENGLISH, k=rng.randrange(5, 16)))
    return f"{name} saw the {words} {when} (entry {index})".strip()


def _drawer(index: int, text: str) -> Drawer:
    wing = ("life", "work", "trips")[index % 3]
    room = f"r{index % 4}"
    return appended_drawer(
        index,
        text,
        wing=wing,
        room=room,
        filed_at="2024-01-01T00:00:00Z",
        content_date=f"2023-{1 + index % 12:02d}-15" if index % 2 else None,
    )


@pytest.fixture
def vault(palace: Palace) -> Iterator[VaultStore]:
    palace.create_vault("g", level="sealed")
    store = palace.open_vault("g", EMBEDDER)
    rng = random.Random(19)
    store.write([DrawerWrite(_drawer(i, _text(rng, i))) for i in range(DRAWERS)], screening=Screen())
    yield store
    store.close()


def _requests() -> list[SearchRequest]:
    mdy = ReadingConventions(date_order="mdy")
    queries = [
        "lighthouse keeper storm",
        "the harbours and the ferries",
        "running marathon Caroline",
        "lighthuose stromy",  # typos: neighbours from the vocabulary, not the query's own forms
        "Kinder spielen im Garten",
        "Häfen Stürme",
        "deploy runbook handbook",
        "what did Priya paint two weeks ago",
        "dog shelter adopted yesterday",
        "coastal flight summit",
    ]
    out: list[SearchRequest] = []
    for n, query in enumerate(queries):
        out.append(SearchRequest(query, limit=10))
        out.append(SearchRequest(query, limit=10, offset=10))  # the next page of the same ranking
        out.append(SearchRequest(query, limit=25, wing=("life", "work", "trips")[n % 3]))
        out.append(SearchRequest(query, limit=10, wing="work", room=f"r{n % 4}"))
        out.append(SearchRequest(query, limit=20, room_cap=2))
        out.append(SearchRequest(query, limit=15, when="2023", conventions=mdy if n % 2 else ReadingConventions()))
        out.append(SearchRequest(query, limit=10, when_from_query=True, as_of=date(2024, 2, 1)))
    return out


def _digest(result: SearchResult) -> str:
    head = (result.scope, result.searched, result.pool, result.admitted, repr(result.window))
    return repr((head, result.hits))


def _scratch(store: VaultStore, request: SearchRequest) -> str:
    store._context.verified_rows.clear()  # no row served from the handle's memo either
    return _digest(Searcher(store, EMBEDDER).search(request))


def test_warm_searches_equal_searches_from_scratch_before_and_after_writes(vault: VaultStore) -> None:
    warm = Searcher(vault, EMBEDDER)
    requests = _requests()
    expected = [_scratch(vault, request) for request in requests]
    for _ in range(2):  # the second pass is served from every memo
        for request, digest in zip(requests, expected, strict=True):
            assert _digest(warm.search(request)) == digest, request
    assert warm.lexicon.typo_memo and warm.lexicon.relative_memo and len(warm.lexicon.shapes)  # premise: in use
    # Writes the warm searcher follows through its change feed: a typo neighbour and a relative arrive, a
    # returned drawer goes.
    vault.remember("the lighthuse keeper logged a stormier night", wing="life", room="r0", added_by="test")
    vault.remember("Die Kinder spielten im Hafen", wing="work", room="r1", added_by="test")
    gone = warm.search(SearchRequest("lighthouse keeper storm", limit=1)).hits[0].id
    vault.delete(gone)
    for request in requests:
        assert _digest(warm.search(request)) == _scratch(vault, request), request


def test_the_golden_requests_return_something(vault: VaultStore) -> None:
    """The equality above is not one of empty pages: most requests return hits, some with mentions."""
    searcher = Searcher(vault, EMBEDDER)
    results = [searcher.search(request) for request in _requests()]
    assert sum(bool(result.hits) for result in results) >= len(results) * 3 // 4
    assert any(hit.time_mentions for result in results for hit in result.hits)
    assert any(result.pool < result.searched for result in results)  # a cut, not the whole scope
