"""Exact dedup by keyed fingerprint, check-dup, and semantic dedup-refresh on save (every date kept)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace, VaultStore
from undercroft_store.memory.dedup import check_duplicate, dedup, find_duplicates, save_with_dedup
from undercroft_store.memory.kg.errors import InvalidSurfaceInput


@pytest.fixture
def store(palace: Palace, embedder: HashEmbedder) -> Iterator[VaultStore]:
    with palace.open_vault("default", embedder) as opened:
        yield opened


def test_dry_run_finds_and_apply_removes_keeping_every_date(store: VaultStore) -> None:
    [a] = store.remember("We chose GraphQL for the API", wing="backend", room="decisions", added_by="t")
    [b] = store.remember("We chose GraphQL for the API", wing="backend", room="decisions", added_by="t")
    [c] = store.remember("We chose GraphQL for the API", wing="backend", room="decisions", added_by="t")
    store.remember("We chose GraphQL for the API", wing="frontend", room="decisions", added_by="t")
    dates = sorted(d.filed_at for d in store.hydrate([a.id, b.id, c.id]))
    [group] = find_duplicates(store)
    assert (group.keep, group.duplicates) == (a.id, (b.id, c.id))
    dry = dedup(store)
    assert not dry.applied and dry.removed == 0 and store.count() == 4
    assert "dry run" in dry.render()
    done = dedup(store, apply=True)
    assert done.removed == 2 and store.count() == 2
    survivor = store.get(a.id)
    kept = sorted([survivor.filed_at, *(o.filed_at for o in survivor.occurrences)])
    assert set(dates) <= set(kept)
    assert find_duplicates(store) == []
    assert store.verify().ok


def test_check_duplicate_exact_and_semantic(store: VaultStore) -> None:
    [a] = store.remember("Deploys run every Friday at noon", wing="ops", room="deploys", added_by="t")
    exact = check_duplicate(store, "Deploys run every Friday at noon")
    assert (exact.duplicate, exact.id, exact.exact) == (True, a.id, True)
    assert not check_duplicate(store, "Deploys run every Friday at noon", wing="other").duplicate
    assert not check_duplicate(store, "Cats sleep most of the day").duplicate
    near = check_duplicate(store, "Deploys run every Friday at noon!", threshold=0.5)
    assert near.duplicate and near.id == a.id and not near.exact and near.similarity is not None
    with pytest.raises(InvalidSurfaceInput, match=r"dedup threshold must be a number in \(0, 1\], got 1.5"):
        check_duplicate(store, "x y z", threshold=1.5)
    with pytest.raises(InvalidSurfaceInput, match="nothing to check"):
        check_duplicate(store, "   ")


def test_save_with_dedup_refreshes_in_place_and_keeps_the_displaced_date(store: VaultStore) -> None:
    [a] = store.remember("The staging database lives on host db-7", wing="ops", room="hosts", added_by="t")
    before = store.get(a.id)
    height = store.stats().chain_records
    outcome = save_with_dedup(
        store, "The staging database lives on host db-7 now", wing="ops", room="hosts", added_by="t", threshold=0.6
    )
    assert outcome.deduped and outcome.id == a.id and outcome.results[0].outcome == "updated"
    after = store.get(a.id)
    assert after.content.endswith("now") and after.updated_at is not None
    assert before.filed_at in [o.filed_at for o in after.occurrences]
    assert store.count() == 1 and store.stats().chain_records == height + 1
    other = save_with_dedup(store, "Lunch is at one", wing="ops", room="hosts", added_by="t", threshold=0.99)
    assert not other.deduped and store.count() == 2
    elsewhere = save_with_dedup(
        store, "The staging database lives on host db-7 now", wing="ops", room="other", added_by="t", threshold=0.6
    )
    assert not elsewhere.deduped
    assert store.verify().ok
