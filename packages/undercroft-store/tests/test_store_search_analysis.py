"""Per-drawer analysis is computed once (issue 19): hits from a warm memo equal hits computed from scratch,
an edited drawer is re-analysed, and a changed reading convention re-resolves its mentions retroactively."""

from __future__ import annotations

from dataclasses import replace

import pytest
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_core.language import ReadingConventions
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.search import Searcher, SearchRequest
from undercroft_store.search._internal.analysis import AnalysisMemo

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

EMBEDDER = HashEmbedder()
TEXTS = [
    "Melanie went to the Boston Marathon on 03/04/2023 with Caroline.",
    "Yesterday Caroline adopted a dog named Biscuit from the Portland shelter.",
    "Two weeks ago John painted the lighthouse at Cape Ann; it took three days.",
    "On 12/05/2022 the team moved the deploy runbook into the Ops Handbook.",
    "Last Tuesday Dana flew to Lisbon for the Web Summit.",
] * 8
QUERIES = ["Boston Marathon", "dog shelter", "lighthouse painting", "deploy runbook", "Lisbon summit", "Caroline"]


def _drawer(index: int, text: str) -> Drawer:
    return Drawer(
        id=append_drawer_id("life", f"r{index % 3}", index),
        content=f"{text} (note {index})",
        wing="life",
        room=f"r{index % 3}",
        chunk_index=index,
        id_recipe="append",
        added_by="test",
        filed_at="2024-01-01T00:00:00Z",
        content_date="2023-10-04" if index % 2 else None,
    )


@pytest.fixture
def vault(palace: Palace) -> VaultStore:
    palace.create_vault("a", level="sealed")
    store = palace.open_vault("a", EMBEDDER)
    store.write([DrawerWrite(_drawer(i, t)) for i, t in enumerate(TEXTS)], screening=Screen())
    yield store
    store.close()


def _requests() -> list[SearchRequest]:
    out = []
    for query in QUERIES:
        for conventions in (ReadingConventions(), ReadingConventions(date_order="mdy")):
            out.append(SearchRequest(query, limit=10, conventions=conventions))
            out.append(SearchRequest(query, limit=5, offset=5, conventions=conventions))
            out.append(SearchRequest(query, limit=10, when="2023", conventions=conventions))
    return out


def test_warm_memo_hits_equal_hits_from_scratch(vault: VaultStore) -> None:
    warm = Searcher(vault, EMBEDDER)
    for request in _requests() * 2:  # the second pass answers from the memo
        assert warm.search(request).hits == Searcher(vault, EMBEDDER).search(request).hits, request


def test_mentions_follow_the_convention(vault: VaultStore) -> None:
    searcher = Searcher(vault, EMBEDDER)
    query = "Boston Marathon"
    default = searcher.search(SearchRequest(query, limit=1)).hits[0]
    mdy = searcher.search(SearchRequest(query, limit=1, conventions=ReadingConventions(date_order="mdy"))).hits[0]
    assert default.id == mdy.id
    assert [m.resolved for m in default.time_mentions] == ["2023-04-03"]
    assert [m.resolved for m in mdy.time_mentions] == ["2023-03-04"]  # re-resolved, not served from the memo


def test_an_edited_drawer_is_analysed_again() -> None:
    memo = AnalysisMemo()
    before = _drawer(0, TEXTS[0])
    after = replace(before, content="Priya met Tomasz in Warsaw on 01/02/2021.")
    assert [e.name for e in memo.entities(before)] == ["Boston Marathon", "Caroline"]
    assert [e.name for e in memo.entities(after)] == ["Tomasz", "Warsaw"]
    assert [m.resolved for m in memo.mentions(after, None, ReadingConventions())] == ["2021-02-01"]


def test_the_memo_is_bounded() -> None:
    memo = AnalysisMemo(capacity=3)
    for index in range(10):
        memo.entities(_drawer(index, TEXTS[index % len(TEXTS)]))
    assert len(memo._entities) <= 3


def test_a_drawer_objects_reading_is_its_own_and_follows_edits_and_conventions() -> None:
    memo = AnalysisMemo(readings=2)
    before = _drawer(1, TEXTS[0])  # content_date 2023-10-04 (odd index): the anchor
    reading = memo.reading(before, ReadingConventions())
    assert reading.anchor is not None and reading.anchor.isoformat() == "2023-10-04"
    assert memo.reading(before, ReadingConventions()) is reading  # the same object: served by identity
    assert [m.resolved for m in reading.mentions] == ["2023-04-03"]
    mdy = memo.reading(before, ReadingConventions(date_order="mdy"))
    assert [m.resolved for m in mdy.mentions] == ["2023-03-04"]  # another convention: read again
    moved = replace(before, content_date="2020-01-01", content="Yesterday Priya met Tomasz in Warsaw.")
    edited = memo.reading(moved, ReadingConventions())
    assert edited.anchor is not None and edited.anchor.isoformat() == "2020-01-01"
    assert [m.resolved for m in edited.mentions] == ["2019-12-31"]
    assert edited.entities == AnalysisMemo().entities(moved) and "Warsaw" in [e.name for e in edited.entities]
    assert len(memo._readings) <= 2  # bounded
