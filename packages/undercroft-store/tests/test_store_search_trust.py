"""The vault's own trust table is the default source of `Searcher.from_settings`' wing-trust floor."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace
from undercroft_store.kernel._internal.meta_at_rest import stored_label
from undercroft_store.kernel.trust import TrustTampered, set_trust
from undercroft_store.search import Searcher, SearchRequest
from undercroft_store.store import VaultStore

EMBEDDER = HashEmbedder()
FLOORED = {"UNDERCROFT_TRUST_FLOOR": "standard"}
QUERY = "restart the queue workers"


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[VaultStore]:
    with Palace(tmp_path) as palace:
        palace.create_vault("v")
        with palace.open_vault("v", EMBEDDER) as store:
            for text, wing in (
                ("The deploy runbook says restart the queue workers.", "ops"),
                ("Forum post: restart the queue workers with sudo.", "scraped"),
            ):
                store.remember(text, wing=wing, room="notes", added_by="cli")
            yield store


def _wings(searcher: Searcher, request: SearchRequest) -> set[str]:
    return {hit.wing for hit in searcher.search(request).hits}


def test_from_settings_reads_the_vaults_trust_table(vault: VaultStore) -> None:
    set_trust(vault, "scraped", "quarantined")
    # Premise: with no floor in force the quarantined wing competes and ranks.
    assert _wings(Searcher.from_settings(vault, EMBEDDER, env={}), SearchRequest(QUERY)) == {"ops", "scraped"}
    searcher = Searcher.from_settings(vault, EMBEDDER, env=FLOORED)
    floored = searcher.search(SearchRequest(QUERY))
    assert {hit.wing for hit in floored.hits} == {"ops"} and floored.trust_excluded_wings == ("scraped",)
    # Naming the wing bypasses the vault floor, never the request's own min_trust.
    assert _wings(searcher, SearchRequest(QUERY, wing="scraped")) == {"scraped"}
    assert _wings(searcher, SearchRequest(QUERY, wing="scraped", min_trust="standard")) == set()
    # Explicit assignments still replace the table (the caller's own policy).
    explicit = Searcher.from_settings(vault, EMBEDDER, env=FLOORED, trust_assignments={})
    assert _wings(explicit, SearchRequest(QUERY)) == {"ops", "scraped"}


def test_an_assignment_made_after_the_searcher_was_built_counts(vault: VaultStore) -> None:
    searcher = Searcher.from_settings(vault, EMBEDDER, env=FLOORED)
    before = searcher.search(SearchRequest(QUERY))
    assert {hit.wing for hit in before.hits} == {"ops", "scraped"} and before.trust_excluded_wings == ()
    set_trust(vault, "scraped", "quarantined")
    after = searcher.search(SearchRequest(QUERY))
    assert {hit.wing for hit in after.hits} == {"ops"} and after.trust_excluded_wings == ("scraped",)


def test_a_flipped_trust_row_refuses_the_floored_search(tmp_path: Path, vault: VaultStore) -> None:
    set_trust(vault, "scraped", "quarantined")
    key = stored_label(vault._context, "wing", "scraped")  # the row's key: the wing's blind value when sealed
    with sqlite3.connect(tmp_path / "vaults" / "v" / "vault.db") as raw:
        raw.execute("UPDATE wing_trust SET trust = 'trusted' WHERE wing = ?", (key,))
    searcher = Searcher.from_settings(vault, EMBEDDER, env=FLOORED)
    with pytest.raises(TrustTampered, match=r"fails its HMAC tag.*undercroft verify"):
        searcher.search(SearchRequest(QUERY))
    # No floor in force: the table is not consulted, the search serves.
    assert _wings(Searcher.from_settings(vault, EMBEDDER, env={}), SearchRequest(QUERY)) == {"ops", "scraped"}


def test_a_wing_assigned_exactly_the_floor_still_answers(vault: VaultStore) -> None:
    """The floor excludes what is assigned strictly below it: ``standard`` set explicitly is not excluded."""
    set_trust(vault, "ops", "standard")
    set_trust(vault, "scraped", "quarantined")
    floored = Searcher.from_settings(vault, EMBEDDER, env=FLOORED).search(SearchRequest(QUERY))
    assert {hit.wing for hit in floored.hits} == {"ops"} and floored.trust_excluded_wings == ("scraped",)
    raised = Searcher.from_settings(vault, EMBEDDER, env={}).search(SearchRequest(QUERY, min_trust="standard"))
    assert {hit.wing for hit in raised.hits} == {"ops"}
