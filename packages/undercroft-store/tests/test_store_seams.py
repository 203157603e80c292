"""The kernel's seams fail closed: an unwired admission screen, verify leg or resealer refuses, nothing lands.

The composition root (`undercroft_store.wiring`) fills every seam at import; these tests empty one at a time
and show the operation that needed it refuses with a message naming what is missing, and the vault is as it was.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Bypass, BypassReason, Palace
from undercroft_store.errors import RotationUnsupported
from undercroft_store.integrity.repair import repair_vault
from undercroft_store.integrity.rotation import rotate_vault
from undercroft_store.integrity.verify import FEATURE_LEGS
from undercroft_store.kernel import fde_tables, seams, snapshot_table, token_codebook, token_table
from undercroft_store.kernel.schema import TAGGED_TABLES
from undercroft_store.kernel.trust import set_trust
from undercroft_store.search.tiers import fde_integrity
from undercroft_store.search.tiers import integrity as tier_integrity
from undercroft_store.search.tiers.integrity import TIER_TABLES, rebuild_tier


def _count(home: Path, table: str) -> int:
    connection = sqlite3.connect(home / "vaults" / "default" / "vault.db")
    try:
        return int(connection.execute(f"SELECT count(*) FROM {table}").fetchone()[0])
    finally:
        connection.close()


def test_the_composition_root_fills_every_seam(monkeypatch: pytest.MonkeyPatch) -> None:
    assert seams.write_screen() is not None
    assert [leg.field for leg in seams.verify_legs(FEATURE_LEGS)] == list(FEATURE_LEGS)
    assert seams.verifier() is not None
    core = {"drawers", "audit", "tombstones"}
    # Plus the derived tables — the candidate tier's and the search snapshot's (not tagged tables: dropped on
    # rotation, rebuilt after it), the late stage's token matrices and their PQ codebook (re-sealed under the
    # new keys).
    derived = {
        *TIER_TABLES,
        *fde_tables.FDE_TABLES,
        snapshot_table.SNAPSHOT_TABLE,
        token_table.TOKEN_TABLE,
        token_codebook.CODEBOOK_TABLE,
    }
    assert set(seams.resealers()) == (set(TAGGED_TABLES) - core) | derived
    # The tier's step is a forwarder (the search package loads at its first call): it runs the real rebuild.
    calls: list[object] = []
    monkeypatch.setattr(tier_integrity, "rebuild_tier", lambda context: calls.append(context) or "rebuilt")
    monkeypatch.setattr(fde_integrity, "rebuild_fde", lambda context: calls.append(context) or "fde rebuilt")
    assert seams.repair_step("index_tier")("context") == "rebuilt; fde rebuilt" and calls == ["context", "context"]
    monkeypatch.undo()
    assert tier_integrity.rebuild_tier is rebuild_tier
    assert seams.repair_step("search_snapshot") is snapshot_table.repair_snapshot


def test_an_unwired_repair_step_refuses_the_repair_before_anything_is_written(
    palace: Palace, embedder: HashEmbedder, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with palace.open_vault("default", embedder) as store:
        store.remember("kept before the seam was emptied", wing="life", room="notes", added_by="test")
    before = (home / "vaults" / "default" / "vault.db").read_bytes()
    monkeypatch.setattr(seams, "_repair_steps", {})
    with pytest.raises(seams.SeamMissing, match="repair step 'index_tier' is not wired"):
        repair_vault(palace, "default", embedder)
    assert (home / "vaults" / "default" / "vault.db").read_bytes() == before


def test_an_unwired_admission_screen_refuses_the_write(
    palace: Palace, embedder: HashEmbedder, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with palace.open_vault("default", embedder) as store:
        store.remember("kept before the seam was emptied", wing="life", room="notes", added_by="test")
    before = (_count(home, "drawers"), _count(home, "audit"))
    monkeypatch.setattr(seams, "_screen", [])
    with palace.open_vault("default", embedder) as store:
        with pytest.raises(seams.SeamMissing, match="no admission screen is wired"):
            store.remember("must not land unscreened", wing="life", room="notes", added_by="test")
        assert (_count(home, "drawers"), _count(home, "audit")) == before
        # A named bypass never reaches the screen: it still writes (restore and import paths depend on it).
        store.remember(
            "an operator restore", wing="life", room="notes", added_by="test", screening=Bypass(BypassReason.RESTORE)
        )
    monkeypatch.undo()
    with palace.open_vault("default", embedder) as store:
        assert store.verify().ok


def test_a_missing_verify_leg_refuses_the_verdict(
    palace: Palace, embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(seams, "_legs", {k: v for k, v in seams._legs.items() if k != "surfaces"})
    with palace.open_vault("default", embedder) as store:
        with pytest.raises(seams.SeamMissing, match="verify legs not wired: surfaces"):
            store.verify()


def test_an_unwired_verifier_refuses(palace: Palace, embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(seams, "_verifier", [])
    with palace.open_vault("default", embedder) as store:
        with pytest.raises(seams.SeamMissing, match="no verifier is wired"):
            store.verify()


def test_a_table_without_its_resealer_refuses_the_rotation(
    palace: Palace, embedder: HashEmbedder, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with palace.open_vault("default", embedder) as store:
        store.remember("a drawer in the scraped wing", wing="scraped", room="notes", added_by="test")
        set_trust(store, "scraped", "quarantined")
    generation = (home / "vaults" / "default" / "vault.json").read_bytes()
    monkeypatch.setattr(seams, "_resealers", {k: v for k, v in seams._resealers.items() if k != "wing_trust"})
    with pytest.raises(RotationUnsupported, match="wing_trust"):
        rotate_vault(palace, "default", embedder)
    assert (home / "vaults" / "default" / "vault.json").read_bytes() == generation
    monkeypatch.undo()
    with palace.open_vault("default", embedder) as store:
        assert store.verify().ok
