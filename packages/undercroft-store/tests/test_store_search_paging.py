"""Pages pinned by one ``ranked_at`` tile ONE ranking byte for byte, on a vault larger than the pool."""

from __future__ import annotations

import random
from collections.abc import Iterator
from datetime import UTC, date, datetime
from pathlib import Path

import pytest
from undercroft_core import Drawer, HashEmbedder
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.search import (
    HYDRATION_FLOOR,
    HYDRATION_PER_RANK,
    TILED_DEPTH,
    Searcher,
    SearchHit,
    SearchRequest,
)

from .conftest import appended_drawer

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

EMBEDDER = HashEmbedder()
DRAWERS = 5_000
QUERY = "lantern harbour ledger"
PINNED = datetime(2024, 2, 1, tzinfo=UTC)
_WORDS = [f"{stem}{suffix}" for stem in ("mar", "vel", "tor", "quin", "bra", "sel") for suffix in "aeiouy"]
_WORDS += ["lantern", "harbour", "ledger"]


def _drawer(index: int, text: str, filed_at: str) -> Drawer:
    wing, room = f"w{index % 4}", f"r{index % 6}"
    return appended_drawer(index, text, wing=wing, room=room, filed_at=filed_at)


@pytest.fixture(scope="module")
def vault(tmp_path_factory: pytest.TempPathFactory) -> Iterator[VaultStore]:
    rng = random.Random(7)
    drawers = [
        _drawer(i, " ".join(rng.choices(_WORDS, k=rng.randint(6, 14))), "2024-01-01T00:00:00Z") for i in range(DRAWERS)
    ]
    with Palace(Path(tmp_path_factory.mktemp("paging"))) as palace:
        palace.create_vault("v")
        with palace.open_vault("v", EMBEDDER) as store:
            store.write([DrawerWrite(d) for d in drawers], screening=Screen())
            yield store


def _rows(hits: tuple[object, ...]) -> list[dict[str, object]]:
    rows = []
    for hit in hits:
        row = hit.to_dict()  # type: ignore[attr-defined]
        row["rank"] = hit.rank  # type: ignore[attr-defined]
        rows.append(row)
    return rows


def _pages(searcher: Searcher, ranked_at: datetime | None) -> list[SearchHit]:
    hits: list[SearchHit] = []
    for number in range(10):
        hits.extend(searcher.search(SearchRequest(QUERY, limit=10, offset=10 * number, ranked_at=ranked_at)).hits)
    return hits


def test_unpinned_pages_draw_a_pool_sized_by_the_page_and_do_not_tile(vault: VaultStore) -> None:
    """The premise: a pool sized ``max(256, depth·32)`` ranks a shallow page differently from the deep call."""
    searcher = Searcher(vault, EMBEDDER)
    deep = searcher.search(SearchRequest(QUERY, limit=TILED_DEPTH))
    assert len(deep.hits) == TILED_DEPTH and searcher.search(SearchRequest(QUERY)).pool == max(
        HYDRATION_FLOOR, 10 * HYDRATION_PER_RANK
    )
    assert _rows(tuple(_pages(searcher, None))) != _rows(deep.hits)


def test_pages_concatenate_to_the_deep_ranking_and_ignore_a_later_write(vault: VaultStore) -> None:
    searcher = Searcher(vault, EMBEDDER)
    deep = searcher.search(SearchRequest(QUERY, limit=TILED_DEPTH, ranked_at=PINNED))
    # Premise: the pool is a strict subset of the scope, and the ranking is 100 deep.
    assert TILED_DEPTH * HYDRATION_PER_RANK <= deep.pool < deep.searched == DRAWERS
    assert len(deep.hits) == TILED_DEPTH
    pages = []
    for number in range(10):
        if number == 4:
            # A write after the pinned clock: it would rank first unpinned, and must not move the pages.
            late = _drawer(DRAWERS, " ".join([QUERY] * 4), "2024-03-01T00:00:00Z")
            vault.write([DrawerWrite(late)], screening=Screen())
            assert searcher.search(SearchRequest(QUERY, limit=1)).hits[0].id == late.id
        page = searcher.search(SearchRequest(QUERY, limit=10, offset=10 * number, ranked_at=PINNED))
        assert page.searched == DRAWERS
        pages.extend(page.hits)
    assert _rows(tuple(pages)) == _rows(deep.hits)
    assert [hit.score for hit in pages] == [hit.score for hit in deep.hits]


def test_a_pinned_ranking_reads_relative_dates_against_its_own_clock(tmp_path: Path) -> None:
    """``when="yesterday"`` under ``ranked_at`` is the day before ranked_at, whatever the searcher's clock says."""
    filed = datetime(2026, 5, 1, 9, 0, 0, tzinfo=UTC)
    with Palace(tmp_path / "palace", clock=lambda: filed) as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            store.remember("On 2026-04-30 we chose the heron logo.", wing="w", room="r", added_by="t")
            store.remember("On 2026-05-30 we chose the heron logo again.", wing="w", room="r", added_by="t")
            searcher = Searcher(store, HashEmbedder(), clock=lambda: datetime(2026, 5, 31, 12, tzinfo=UTC))
            pinned = searcher.search(
                SearchRequest("heron logo", when="yesterday", ranked_at=datetime(2026, 5, 1, 12, tzinfo=UTC))
            )
            assert pinned.window is not None and pinned.window.read_start == date(2026, 4, 30)
            assert [hit.content for hit in pinned.hits] == ["On 2026-04-30 we chose the heron logo."]
            unpinned = searcher.search(SearchRequest("heron logo", when="yesterday"))
            assert unpinned.window is not None and unpinned.window.read_start == date(2026, 5, 30)
            assert [hit.content for hit in unpinned.hits] == ["On 2026-05-30 we chose the heron logo again."]
