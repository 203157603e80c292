"""Tampering with what no HMAC covers — the ``seq`` column, the stored fingerprint, the audit tail, the
``chain_meta`` row — edited on the raw database with sqlite3 and expected to be detected or refused."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import ChainBroken, Palace
from undercroft_store.integrity.repair import repair_vault


def _raw(home: Path, name: str = "default") -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / name / "vault.db", isolation_level=None)


def _fill(palace: Palace, name: str = "default") -> list[str]:
    if name != "default":
        palace.create_vault(name, level="hmac-only")
    with palace.open_vault(name, HashEmbedder()) as store:
        return [
            store.remember(f"memory about the {word}", wing="life", room="notes", added_by="t")[0].id
            for word in ("lighthouse", "harbour", "quay")
        ]


@pytest.mark.parametrize("name", ["default", "plain"])  # sealed, and hmac-only (FTS rowids are seqs)
def test_a_seq_swap_fails_verify(palace: Palace, home: Path, name: str) -> None:
    ids = _fill(palace, name)
    with _raw(home, name) as raw:
        raw.execute("UPDATE drawers SET seq = -1 WHERE id = ?", (ids[0],))
        raw.execute("UPDATE drawers SET seq = 1 WHERE id = ?", (ids[2],))
        raw.execute("UPDATE drawers SET seq = 3 WHERE id = ?", (ids[0],))
    with Palace(home) as reopened, reopened.open_vault(name, HashEmbedder(), read_only=True) as store:
        report = store.verify()
    assert not report.ok and report.order_drift and not report.tampered
    assert "SEQ: " in report.render() and report.render().endswith("VERIFY FAILED")


def test_a_zeroed_fingerprint_fails_verify_and_repair_restores_it(palace: Palace, home: Path) -> None:
    ids = _fill(palace)
    with _raw(home) as raw:
        raw.execute("UPDATE drawers SET fingerprint = zeroblob(32) WHERE id = ?", (ids[1],))
    with Palace(home) as reopened:
        with reopened.open_vault("default", HashEmbedder(), read_only=True) as store:
            report = store.verify()
            assert report.fingerprint_drift == [ids[1]] and not report.ok
            assert f"FINGERPRINT: {ids[1]}" in report.render()
        repaired = repair_vault(reopened, "default", HashEmbedder())
        assert repaired.fingerprints_fixed == 1 and repaired.ok


def test_writes_are_refused_after_the_last_audit_row_is_deleted(palace: Palace, home: Path) -> None:
    _fill(palace)
    with _raw(home) as raw:
        raw.execute("DELETE FROM audit WHERE seq = (SELECT max(seq) FROM audit)")
        before = (
            raw.execute("SELECT count(*) FROM drawers").fetchone()[0],
            raw.execute("SELECT count(*) FROM audit").fetchone()[0],
        )
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        with pytest.raises(ChainBroken, match="audit rows were removed or inserted"):
            store.remember("written on a broken chain", wing="life", room="notes", added_by="t")
    with _raw(home) as raw:
        after = (
            raw.execute("SELECT count(*) FROM drawers").fetchone()[0],
            raw.execute("SELECT count(*) FROM audit").fetchone()[0],
        )
    assert after == before  # nothing written


@pytest.mark.parametrize("read_only", [True, False])
def test_a_deleted_chain_meta_row_is_a_chain_verdict(palace: Palace, home: Path, read_only: bool) -> None:
    _fill(palace)
    with _raw(home) as raw:
        raw.execute("DELETE FROM chain_meta")
    with Palace(home) as reopened, pytest.raises(ChainBroken):
        with reopened.open_vault("default", HashEmbedder(), read_only=read_only) as store:
            store.stats()
