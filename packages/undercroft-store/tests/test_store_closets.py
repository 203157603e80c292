"""Closets (the AAAK-style listing), hallways (co-occurrence) and wake-up, all computed on demand."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Bypass, BypassReason, DrawerWrite, Palace, VaultStore
from undercroft_store.memory.closets import build_closets, render_closets
from undercroft_store.memory.hallways import hallways
from undercroft_store.memory.kg.errors import InvalidSurfaceInput
from undercroft_store.memory.wakeup import wake_up

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids


@pytest.fixture
def store(palace: Palace, embedder: HashEmbedder) -> Iterator[VaultStore]:
    with palace.open_vault("default", embedder) as opened:
        opened.remember(
            "We decided to use Postgres. Alice and Bob agreed; Alice owns it.",
            wing="backend",
            room="decisions",
            added_by="t",
            kind="decision",
        )
        opened.remember(
            "Bob and Carol fixed the login bug in Auth Service.",
            wing="backend",
            room="bugs",
            added_by="t",
            kind="problem",
        )
        opened.remember("Alice met Bob for lunch.", wing="backend", room="social", added_by="t")
        opened.remember("Holiday plans with Dana.", wing="life", room="plans", added_by="t")
        yield opened


def _quarantine(store: VaultStore) -> None:
    [saved] = store.remember("Alice Bob secret injected", wing="scratch", room="x", added_by="t")
    drawer = store.get(saved.id)
    from dataclasses import replace

    from undercroft_core.ids import append_drawer_id

    index = store.allocate_append_indices(1)
    moved = replace(
        drawer,
        id=append_drawer_id("quarantine-pending", "x", index),
        wing="quarantine-pending",
        chunk_index=index,
        intended_wing="scratch",
        intended_room="x",
    )
    store.write([DrawerWrite(moved)], screening=Bypass(BypassReason.ALREADY_DIVERTED))
    store.delete(saved.id)


def test_closets_shape_and_packing(store: VaultStore) -> None:
    closets = build_closets(store)
    assert [(c.wing, c.room) for c in closets] == [
        ("backend", "bugs"),
        ("backend", "decisions"),
        ("backend", "social"),
        ("life", "plans"),
    ]
    decisions = next(c for c in closets if c.room == "decisions")
    line = decisions.lines[0]
    topic, entities, date, ids = line.split("|")
    assert topic == "decided to use postgres" and entities == "Alice" and date == "2026-05-01"
    assert ids.startswith("→drawer_")
    text = render_closets(build_closets(store, wing="life"))
    assert text.splitlines()[0] == "## life/plans #01" and "backend" not in text
    small = build_closets(store, wing="backend", max_chars=80)
    assert all(sum(len(x) + 1 for x in c.lines) <= 80 or len(c.lines) == 1 for c in small)


def test_quarantine_is_never_listed(store: VaultStore) -> None:
    _quarantine(store)
    assert "quarantine-pending" not in render_closets(build_closets(store))
    assert "injected" not in wake_up(store).render()
    with pytest.raises(InvalidSurfaceInput, match="has no closets"):
        build_closets(store, wing="quarantine-pending")
    with pytest.raises(InvalidSurfaceInput, match="has no hallways"):
        hallways(store, "quarantine-pending")


def test_hallways_count_co_occurrence_within_one_wing(store: VaultStore) -> None:
    found = hallways(store, "backend")
    pairs = {(h.first, h.second): h.count for h in found}
    assert pairs[("Alice", "Bob")] == 2
    assert pairs[("Bob", "Carol")] == 1
    assert found[0].first == "Alice" and found[0].second == "Bob"
    assert all("Dana" not in (h.first, h.second) for h in found)
    assert [(h.first, h.second) for h in hallways(store, "backend", min_count=2)] == [("Alice", "Bob")]
    with pytest.raises(InvalidSurfaceInput, match="min_count must be a positive integer, got 0"):
        hallways(store, "backend", min_count=0)


def test_wake_up_puts_identity_then_essential_kinds_first(store: VaultStore) -> None:
    woken = wake_up(store, identity="I am Atlas, the ops agent.")
    assert [d.kind for d in woken.essentials[:2]] == ["decision", "problem"]
    text = woken.render()
    assert text.startswith("## L0 — identity\nI am Atlas, the ops agent.")
    assert "## L1 — essential" in text and "[backend/decisions decision 2026-05-01]" in text
    assert len(wake_up(store, limit=1).essentials) == 1
    assert wake_up(store, wing="life").essentials[0].wing == "life"
    with pytest.raises(InvalidSurfaceInput, match="max_chars must be a positive integer, got 0"):
        wake_up(store, max_chars=0)
