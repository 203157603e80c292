"""Dated candidates: a date window draws the drawers it names into the pool, whatever their cosine rank."""

from __future__ import annotations

from datetime import date
from pathlib import Path

import numpy as np
import pytest
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_core.language import WhenWindow
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.search import Searcher, SearchRequest
from undercroft_store.search.dated import DatedIndex, _spans, dated_candidates, dated_joiners

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

EMBEDDER = HashEmbedder()
NEEDLE = "Calvin: yesterday I met the artists in Boston."
QUESTION = "Which city was Calvin at on October 3, 2023?"
DECOYS = 600


def _drawer(index: int, text: str, content_date: str | None, wing: str = "w") -> Drawer:
    return Drawer(
        id=append_drawer_id(wing, "r", index),
        content=text,
        wing=wing,
        room="r",
        chunk_index=index,
        id_recipe="append",
        added_by="test",
        filed_at="2024-01-01T00:00:00Z",
        content_date=content_date,
    )


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> VaultStore:
    palace = Palace(tmp_path_factory.mktemp("dated"))
    palace.create_vault("v", level="sealed")
    store = palace.open_vault("v", EMBEDDER)
    text = "Calvin wrote notes about which city budget item {} was at in October."
    decoys = [_drawer(i, text.format(i), f"2023-01-{1 + i % 28:02d}") for i in range(DECOYS)]
    store.write([DrawerWrite(d) for d in decoys], screening=Screen())
    store.write([DrawerWrite(_drawer(DECOYS, NEEDLE, "2023-10-04"))], screening=Screen())
    undated = _drawer(DECOYS + 1, "Undated: Calvin in Boston.", None, wing="other")
    store.write([DrawerWrite(undated)], screening=Screen())
    yield store
    store.close()
    palace.close()


def _contents(store: VaultStore, request: SearchRequest) -> list[str]:
    return [hit.content for hit in Searcher(store, EMBEDDER).search(request).hits]


def test_premise_the_cosine_cut_alone_never_draws_the_needle(vault: VaultStore) -> None:
    population = vault.scope_seqs()
    unit = Searcher(vault, EMBEDDER).cache.load(vault)[1]
    query = EMBEDDER.embed([QUESTION])[0]
    rank = int(np.argsort(-(unit @ (query / np.linalg.norm(query))), kind="stable").tolist().index(DECOYS))
    assert len(population) > 256 and rank > 320  # beyond every hydration size below
    assert NEEDLE not in _contents(vault, SearchRequest(QUESTION, limit=10))


def test_a_window_read_from_the_question_draws_and_promotes_the_dated_drawer(vault: VaultStore) -> None:
    hits = _contents(vault, SearchRequest(QUESTION, limit=10, when_from_query=True))
    assert hits[0] == NEEDLE


def test_a_declared_window_is_not_starved_by_the_cosine_cut(vault: VaultStore) -> None:
    assert _contents(vault, SearchRequest("Calvin city", limit=10, when="2023-10-03..2023-10-04")) == [NEEDLE]


def test_dated_candidates_read_the_day_then_the_filing_day_and_stay_in_the_population(vault: VaultStore) -> None:
    population = vault.scope_seqs()
    october = WhenWindow(date(2023, 10, 4), date(2023, 10, 4), "declared", 0)
    (needle,) = dated_candidates(vault, october, population).tolist()
    assert vault.hydrate([needle])[0].content == NEEDLE
    # A content_date wins over the filing day; with none, the filing day anchors the drawer.
    filed = WhenWindow(date(2024, 1, 1), date(2024, 1, 1), "declared", 0)
    (undated,) = dated_candidates(vault, filed, population).tolist()
    assert vault.hydrate([undated])[0].content == "Undated: Calvin in Boston."
    # Only members of the population are drawn.
    assert dated_candidates(vault, filed, vault.scope_seqs(wing="w")).tolist() == []
    assert dated_candidates(vault, filed, vault.scope_seqs(wing="other")).tolist() == [undated]
    assert len(dated_candidates(vault, october, np.zeros(0, dtype=np.int64))) == 0


def test_dated_joiners_keep_the_best_cosines_when_the_window_names_too_many(vault: VaultStore) -> None:
    population = vault.scope_seqs(wing="w")
    january = WhenWindow(date(2023, 1, 1), date(2023, 1, 31), "declared", 0)
    scores = {int(seq): float(seq % 97) for seq in population}
    kept = dated_joiners(vault, january, population, 50, lambda seqs: np.array([scores[int(s)] for s in seqs]))
    assert len(kept) == 50 and list(kept) == sorted(kept)
    assert min(scores[int(s)] for s in kept) >= sorted(scores.values(), reverse=True)[49]


def test_the_index_follows_the_store_generation(tmp_path: Path) -> None:
    with Palace(tmp_path) as palace:
        palace.create_vault("g", level="sealed")
        with palace.open_vault("g", EMBEDDER) as store:
            store.write([DrawerWrite(_drawer(0, "First.", "2023-05-01"))], screening=Screen())
            index = DatedIndex()
            may = WhenWindow(date(2023, 5, 1), date(2023, 5, 31), "declared", 0)
            assert len(dated_candidates(store, may, store.scope_seqs(), index)) == 1
            store.write([DrawerWrite(_drawer(1, "Second.", "2023-05-20"))], screening=Screen())
            assert len(dated_candidates(store, may, store.scope_seqs(), index)) == 2


def test_spans_read_the_anchor_and_the_stored_mentions_and_skip_what_is_not_a_day() -> None:
    mentions = (
        '[{"resolved": "2023-10-03", "resolved_end": null}, {"resolved": "2023-11-01", "resolved_end": "2023-11-30"},'
        ' {"resolved": "garbage"}, 7]'
    )
    spans = [(seq, str(first), str(last)) for seq, first, last in _spans(5, "2023-10-04T09:00:00Z", mentions)]
    assert spans == [
        (5, "2023-10-04", "2023-10-04"),
        (5, "2023-10-03", "2023-10-03"),
        (5, "2023-11-01", "2023-11-30"),
        (5, "NaT", "NaT"),
    ]
    assert [str(span[1]) for span in _spans(6, None, "[]")] == ["NaT"]
    assert [str(span[1]) for span in _spans(7, "2023-02-30", None)] == ["NaT"]
