"""Repair: backfill embeddings, fingerprints and FTS rows, re-embed a forced swap, vacuum, re-verify."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_core.embedder import EmbedderIdentity
from undercroft_core.hash_embedder import DegradingEmbedder
from undercroft_store import EmbedderMismatch, Palace
from undercroft_store.integrity.repair import repair_vault


class OtherEmbedder(HashEmbedder):
    """A hash embedder under a foreign identity, so the swap is not an automatic hash-to-hash migration."""

    def __init__(self) -> None:
        DegradingEmbedder.__init__(self, EmbedderIdentity("test-other", 64))


def _fill(palace: Palace, name: str = "default") -> list[str]:
    with palace.open_vault(name, HashEmbedder()) as store:
        return [store.remember(f"note {w}", wing="life", room="misc", added_by="t")[0].id for w in ("a", "b", "c")]


def _raw(home: Path, name: str = "default") -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / name / "vault.db", isolation_level=None)


def test_clean_vault_repairs_nothing_and_verifies(palace: Palace) -> None:
    _fill(palace)
    report = repair_vault(palace, "default", HashEmbedder())
    assert report.ok and report.drawers_checked == 3
    assert (report.embeddings_backfilled, report.fingerprints_fixed, report.fts_added) == (0, 0, 0)
    assert "VERIFY OK" in report.render() and report.bytes_after > 0


def test_backfills_missing_embeddings_and_fingerprints(palace: Palace, home: Path) -> None:
    ids = _fill(palace)
    raw = _raw(home)
    raw.execute("UPDATE drawers SET embedding = zeroblob(0) WHERE id = ?", (ids[0],))
    raw.execute("UPDATE drawers SET fingerprint = zeroblob(16) WHERE id = ?", (ids[1],))
    raw.close()
    with palace.open_vault("default", HashEmbedder()) as store:
        assert not store.verify().ok  # an empty sealed embedding does not open
    report = repair_vault(palace, "default", HashEmbedder())
    assert (report.embeddings_backfilled, report.fingerprints_fixed) == (1, 1)
    assert report.ok, report.render()
    with palace.open_vault("default", HashEmbedder()) as store:
        matrix = store.iter_embeddings()
        assert (matrix.scales > 0).all()


def test_hmac_only_fts_rows_backfilled_and_orphans_dropped(palace: Palace, home: Path) -> None:
    palace.create_vault("plain", level="hmac-only")
    _fill(palace, "plain")
    raw = _raw(home, "plain")
    raw.execute("DELETE FROM drawers_fts WHERE rowid = (SELECT min(seq) FROM drawers)")
    raw.execute("INSERT INTO drawers_fts (rowid, content) VALUES (999, 'ghost words')")
    raw.close()
    report = repair_vault(palace, "plain", HashEmbedder())
    assert (report.fts_added, report.fts_removed) == (1, 1) and report.ok
    raw = _raw(home, "plain")
    assert raw.execute("SELECT count(*) FROM drawers_fts").fetchone()[0] == 3
    assert raw.execute("SELECT count(*) FROM drawers_fts WHERE drawers_fts MATCH 'ghost'").fetchone()[0] == 0
    raw.close()


def test_forced_embedder_swap_is_reembedded_and_recorded_last(home: Path) -> None:
    with Palace(home) as palace:
        palace.init()
        _fill(palace)
        with pytest.raises(EmbedderMismatch):
            palace.open_vault("default", OtherEmbedder())
    with Palace(home, force_embedder=True) as forced:
        report = repair_vault(forced, "default", OtherEmbedder())
    assert report.embeddings_reembedded == 3 and report.identity_recorded == "test-other@64" and report.ok
    with Palace(home) as palace, palace.open_vault("default", OtherEmbedder()) as store:
        assert store.unhealed == () and store.iter_embeddings().codes.shape == (3, 64)


def test_a_tampered_drawer_is_skipped_and_the_verdict_fails(palace: Palace, home: Path) -> None:
    ids = _fill(palace)
    raw = _raw(home)
    raw.execute("UPDATE drawers SET tag = zeroblob(32), embedding = zeroblob(0) WHERE id = ?", (ids[2],))
    raw.close()
    report = repair_vault(palace, "default", HashEmbedder())
    assert report.skipped_tampered == [ids[2]] and report.embeddings_backfilled == 0
    assert not report.ok and f"TAMPERED: {ids[2]}" in report.render()


def test_progress_is_reported(palace: Palace, home: Path) -> None:
    ids = _fill(palace)
    raw = _raw(home)
    raw.execute("UPDATE drawers SET embedding = zeroblob(0) WHERE id = ?", (ids[0],))
    raw.close()
    seen: list[tuple[str, int, int]] = []
    repair_vault(palace, "default", HashEmbedder(), progress=lambda *step: seen.append(step))
    assert ("check", 3, 3) in seen and ("embed", 1, 1) in seen
