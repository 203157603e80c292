"""Wing trust: assignment, the candidate-set floor, and the raw-file tampers the threat model names."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from undercroft_config import Refused
from undercroft_core import HashEmbedder
from undercroft_core.errors import IntegrityError
from undercroft_store import Palace
from undercroft_store.errors import InvalidDrawer
from undercroft_store.kernel.trust import TrustTampered, list_trust, set_trust, trust_assignments
from undercroft_store.search import Searcher, SearchRequest
from undercroft_store.search.scope import trust_policy
from undercroft_store.store import VaultStore


@pytest.fixture
def store(palace: Palace, embedder: HashEmbedder) -> Iterator[VaultStore]:
    with palace.open_vault("default", embedder) as opened:
        for text, wing in (
            ("The deploy runbook says restart the queue workers.", "ops"),
            ("Forum post: restart the queue workers with sudo.", "scraped"),
            ("Team decision: restart the queue workers nightly.", "team"),
        ):
            opened.remember(text, wing=wing, room="notes", added_by="cli")
        yield opened


def _db(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / "default" / "vault.db")


def _wings(store: VaultStore, embedder: HashEmbedder, request: SearchRequest, env: dict[str, str]) -> set[str]:
    searcher = Searcher(store, embedder, trust=trust_policy(store, env))
    return {store.get(hit.id).wing for hit in searcher.search(request).hits}


def test_set_and_list(store: VaultStore) -> None:
    set_trust(store, "scraped", "quarantined")
    set_trust(store, "team", "trusted")
    set_trust(store, "team", "standard")
    assert trust_assignments(store) == {"scraped": "quarantined", "team": "standard"}
    assert [a.wing for a in list_trust(store)] == ["scraped", "team"]
    assert store.verify().ok, store.verify().render()


@pytest.mark.parametrize(
    ("wing", "trust", "message"),
    [
        ("ops", "high", "unknown trust class 'high'"),
        ("ops", "Trusted", "unknown trust class 'Trusted'"),
        ("../etc", "trusted", "wing"),
        ("quarantine-pending", "trusted", "review queue"),
    ],
)
def test_bad_input_refused(store: VaultStore, wing: str, trust: str, message: str) -> None:
    with pytest.raises(InvalidDrawer, match=message):
        set_trust(store, wing, trust)


def test_floor_is_a_candidate_set_floor(store: VaultStore, embedder: HashEmbedder) -> None:
    set_trust(store, "scraped", "quarantined")
    set_trust(store, "team", "trusted")
    query = "restart the queue workers"
    assert _wings(store, embedder, SearchRequest(query=query), {}) == {"ops", "scraped", "team"}
    floored = {"UNDERCROFT_TRUST_FLOOR": "standard"}
    assert _wings(store, embedder, SearchRequest(query=query), floored) == {"ops", "team"}
    assert _wings(store, embedder, SearchRequest(query=query, min_trust="trusted"), {}) == {"team"}
    # A named wing bypasses the vault floor, never the request's own min_trust.
    assert _wings(store, embedder, SearchRequest(query=query, wing="scraped"), floored) == {"scraped"}
    assert _wings(store, embedder, SearchRequest(query=query, wing="scraped", min_trust="standard"), {}) == set()


def test_garbage_floor_refuses(store: VaultStore) -> None:
    with pytest.raises(Refused):
        trust_policy(store, {"UNDERCROFT_TRUST_FLOOR": "hihg"})


def test_flipped_trust_row_is_detected(
    palace: Palace, store: VaultStore, embedder: HashEmbedder, home: Path, label_of: Callable[..., str]
) -> None:
    set_trust(store, "scraped", "quarantined")
    store.close()
    with _db(home) as connection:
        connection.execute("UPDATE wing_trust SET trust = 'trusted' WHERE wing = ?", (label_of("scraped"),))
    with palace.open_vault("default", embedder) as reopened:
        with pytest.raises(TrustTampered, match=r"fails its HMAC tag.*undercroft verify") as caught:
            trust_policy(reopened, {"UNDERCROFT_TRUST_FLOOR": "standard"})
        assert isinstance(caught.value, IntegrityError)
        report = reopened.verify()
        assert not report.ok and "TRUST: trust row for wing 'scraped' fails its HMAC tag" in report.render()


def test_older_trust_row_written_back_is_detected(
    palace: Palace, store: VaultStore, embedder: HashEmbedder, home: Path, label_of: Callable[..., str]
) -> None:
    set_trust(store, "scraped", "trusted")
    key = label_of("scraped")
    with _db(home) as connection:
        old = connection.execute("SELECT trust, at, tag FROM wing_trust WHERE wing = ?", (key,)).fetchone()
    set_trust(store, "scraped", "quarantined")
    store.close()
    with _db(home) as connection:
        connection.execute("UPDATE wing_trust SET trust = ?, at = ?, tag = ? WHERE wing = ?", (*old, key))
    with palace.open_vault("default", embedder) as reopened:
        with pytest.raises(TrustTampered, match="not its newest assignment"):
            list_trust(reopened)
        assert not reopened.verify().ok


def test_deleted_trust_row_is_detected(palace: Palace, store: VaultStore, embedder: HashEmbedder, home: Path) -> None:
    set_trust(store, "scraped", "quarantined")
    store.close()
    with _db(home) as connection:
        connection.execute("DELETE FROM wing_trust")
    with palace.open_vault("default", embedder) as reopened:
        with pytest.raises(TrustTampered, match="has no row"):
            trust_assignments(reopened)
        assert "TRUST: trust record 'trust/scraped' has no row" in reopened.verify().render()
