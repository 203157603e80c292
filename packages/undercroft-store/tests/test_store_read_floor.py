"""The vault trust floor on every unscoped content read, from the one rule (`trust.read_floor`, `trust.Floor`).

``UNDERCROFT_TRUST_FLOOR`` used to floor search alone: listings, wake-up, the closet index and the duplicate
oracle still handed a quarantined-trust wing to the caller. Each is floored now when unscoped, naming a wing
still bypasses the vault floor, and a write decision can opt out.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from undercroft_config import Refused
from undercroft_core import HashEmbedder
from undercroft_store import Palace, VaultStore
from undercroft_store.kernel._internal.meta_at_rest import stored_label
from undercroft_store.kernel.trust import Floor, TrustTampered, floor_in_force, read_floor, set_trust
from undercroft_store.memory.closets import build_closets
from undercroft_store.memory.dedup import check_duplicate
from undercroft_store.memory.supersession import live_at
from undercroft_store.memory.wakeup import wake_up
from undercroft_store.search import Searcher, SearchRequest

EMBEDDER = HashEmbedder()
SCRAPED = "Forum post: restart the queue workers with sudo rm and decided it was fine."
OPS = "The deploy runbook says restart the queue workers after the migration."


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[VaultStore]:
    with Palace(tmp_path) as palace:
        palace.create_vault("v")
        with palace.open_vault("v", EMBEDDER) as store:
            store.remember(OPS, wing="ops", room="notes", added_by="cli", kind="decision")
            store.remember(SCRAPED, wing="scraped", room="notes", added_by="cli", kind="decision")
            store.remember("Vetted: the queue workers restart cleanly.", wing="vetted", room="notes", added_by="cli")
            set_trust(store, "scraped", "quarantined")
            set_trust(store, "vetted", "trusted")
            yield store


def _wings(drawers: object) -> set[str]:
    return {d.wing for d in drawers}  # type: ignore[attr-defined]


def test_the_rule_min_trust_always_the_vault_floor_only_unscoped() -> None:
    assert floor_in_force(vault_floor="standard", min_trust=None, wing=None) == "standard"
    assert floor_in_force(vault_floor="standard", min_trust=None, wing="scraped") is None
    assert floor_in_force(vault_floor=None, min_trust="trusted", wing="scraped") == "trusted"
    standard = Floor("standard", {"scraped": "quarantined", "vetted": "trusted"})
    assert standard.excluded == ("scraped",) and standard.admitted is None
    assert standard.admits("ops") and not standard.admits("scraped")
    trusted = Floor("trusted", {"scraped": "quarantined", "vetted": "trusted"})
    assert trusted.admitted == ("vetted",) and not trusted.admits("ops") and trusted.admits("vetted")
    assert Floor("trusted", {}).clause() == ("0", ())


def test_no_floor_declared_changes_nothing(vault: VaultStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("UNDERCROFT_TRUST_FLOOR", raising=False)
    assert read_floor(vault) is None
    assert _wings(vault.list_drawers()) == {"ops", "scraped", "vetted"}  # premise: the wing is there to hide
    assert _wings(wake_up(vault).essentials) == {"ops", "scraped", "vetted"}
    assert vault.get(check_duplicate(vault, SCRAPED).id or "").wing == "scraped"
    near = check_duplicate(vault, SCRAPED + " Again.", threshold=0.3)
    assert near.exact is False and vault.get(near.id or "").wing == "scraped"


def test_every_unscoped_content_read_is_floored(vault: VaultStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNDERCROFT_TRUST_FLOOR", "standard")
    assert _wings(vault.list_drawers()) == {"ops", "vetted"}
    assert _wings(wake_up(vault).essentials) == {"ops", "vetted"}
    assert {c.wing for c in build_closets(vault)} == {"ops", "vetted"}
    assert _wings(live_at(vault, "2999-01-01T00:00:00Z")) == {"ops", "vetted"}
    assert not check_duplicate(vault, SCRAPED).duplicate
    near = check_duplicate(vault, SCRAPED + " Again.", threshold=0.3)  # the semantic oracle names no floored drawer
    assert near.id is None or vault.get(near.id).wing != "scraped"
    found = Searcher.from_settings(vault, EMBEDDER).search(SearchRequest("restart the queue workers"))
    assert {hit.wing for hit in found.hits} == {"ops", "vetted"} and found.trust_excluded_wings == ("scraped",)


def test_naming_the_wing_bypasses_the_vault_floor(vault: VaultStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNDERCROFT_TRUST_FLOOR", "standard")
    assert _wings(vault.list_drawers(wing="scraped")) == {"scraped"}
    assert _wings(wake_up(vault, wing="scraped").essentials) == {"scraped"}
    assert {c.wing for c in build_closets(vault, wing="scraped")} == {"scraped"}
    assert check_duplicate(vault, SCRAPED, wing="scraped").duplicate
    # A write decision reads past the floor by name, never by accident.
    assert _wings(vault.list_drawers(trust_floor=False)) == {"ops", "scraped", "vetted"}


def test_a_floor_above_standard_admits_only_wings_assigned_at_or_above_it(
    vault: VaultStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNDERCROFT_TRUST_FLOOR", "trusted")
    assert _wings(vault.list_drawers()) == {"vetted"}
    assert _wings(wake_up(vault).essentials) == {"vetted"}
    assert not check_duplicate(vault, OPS).duplicate


def test_a_garbage_floor_refuses_the_read(vault: VaultStore, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNDERCROFT_TRUST_FLOOR", "bogus")
    with pytest.raises(Refused, match="UNDERCROFT_TRUST_FLOOR"):
        vault.list_drawers()
    assert _wings(vault.list_drawers(wing="scraped")) == {"scraped"}  # a named wing reads no floor


def test_a_flipped_trust_row_refuses_the_floored_listing(
    tmp_path: Path, vault: VaultStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = stored_label(vault._context, "wing", "scraped")  # the row's key: the wing's blind value when sealed
    with sqlite3.connect(tmp_path / "vaults" / "v" / "vault.db", isolation_level=None) as raw:
        raw.execute("UPDATE wing_trust SET trust = 'standard' WHERE wing = ?", (key,))
    monkeypatch.setenv("UNDERCROFT_TRUST_FLOOR", "standard")
    with pytest.raises(TrustTampered, match="scraped"):
        vault.list_drawers()
