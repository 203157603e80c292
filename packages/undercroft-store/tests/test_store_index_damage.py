"""Damage to SQLite's own structures (one flipped bit in the raw file): verify finds it, a scoped read refuses
rather than answer short, backup refuses the vault, and repair rebuilds the index from the table."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_store import DrawerWrite, IndexDamaged, Palace, Screen
from undercroft_store.errors import BackupRefused
from undercroft_store.integrity.backup import create_backup
from undercroft_store.integrity.repair import repair_vault
from undercroft_store.kernel._internal.meta_at_rest import stored_label
from undercroft_store.memory.dedup import find_duplicates

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

PER_WING = 40


def _fill(palace: Palace) -> None:
    drawers = [
        Drawer(
            id=append_drawer_id(wing, "misc", i),
            content=f"memory {i} filed under {wing}",
            wing=wing,
            room="misc",
            chunk_index=i,
            id_recipe="append",
            added_by="t",
            filed_at="2026-05-01T09:00:00.000000Z",
        )
        for i in range(2 * PER_WING)
        for wing in ("life" if i % 2 else "work",)
    ]
    with palace.open_vault("default", HashEmbedder()) as store:
        store.write([DrawerWrite(d) for d in drawers], screening=Screen())
        store.allocate_append_indices(2 * PER_WING)  # the counter past the hand-made indices


def _db(home: Path) -> Path:
    return home / "vaults" / "default" / "vault.db"


def _index_page(home: Path) -> tuple[int, int]:
    """(offset of the drawers_scope root page in the file, page size), after folding the WAL in."""
    with sqlite3.connect(_db(home)) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        root = raw.execute("SELECT rootpage FROM sqlite_master WHERE name = 'drawers_scope'").fetchone()[0]
        size = raw.execute("PRAGMA page_size").fetchone()[0]
    return (root - 1) * size, size


def _flip_key_bit(home: Path) -> None:
    """Change the last byte of one 'work' key in the index page to 'z': the key (the wing's blind value on a
    sealed vault) then sorts after every 'work' key, so a seek for wing 'work' stops at it and misses it and
    every row behind it, while the page stays well formed (quick_check does not compare index keys: it passes)."""
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        key = str(stored_label(store._context, "wing", "work")).encode()
    offset, size = _index_page(home)
    data = bytearray(_db(home).read_bytes())
    at = data.index(key, offset, offset + size) + len(key) - 1
    data[at] = ord("z")
    _db(home).write_bytes(bytes(data))


def _quick_check(home: Path) -> list[tuple[str]]:
    with sqlite3.connect(_db(home)) as raw:
        return raw.execute("PRAGMA quick_check").fetchall()


def test_a_flipped_index_bit_fails_verify_and_refuses_scoped_reads(palace: Palace, home: Path) -> None:
    _fill(palace)
    _flip_key_bit(home)
    assert _quick_check(home) == [("ok",)]  # SQLite's quick check alone does not see it
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder(), read_only=True) as store:
        report = store.verify()
        assert not report.ok and report.scope_index and not report.tampered
        assert "INDEX: drawers_scope answers wing 'work'" in report.render()
        deep = store.verify(deep=True)
        assert deep.sqlite_findings and "FAILED (integrity_check)" in deep.render()
        with pytest.raises(IndexDamaged, match="run undercroft repair"):
            store.list_drawers(wing="work")
        with pytest.raises(IndexDamaged):
            store.scope_seqs(wing="work", room="misc")
        with pytest.raises(IndexDamaged):
            find_duplicates(store, wing="work")  # a short answer would hide duplicates
        assert len(store.list_drawers()) == 2 * PER_WING  # an unscoped read does not seek the index


def test_backup_refuses_a_damaged_vault_and_repair_rebuilds_the_index(palace: Palace, home: Path) -> None:
    _fill(palace)
    _flip_key_bit(home)
    with Palace(home) as reopened:
        with pytest.raises(BackupRefused):
            create_backup(reopened, "default", HashEmbedder())
        report = repair_vault(reopened, "default", HashEmbedder())
        assert report.indexes_rebuilt and report.ok, report.render()
        assert "indexes:               rebuilt (REINDEX" in report.render()
        with reopened.open_vault("default", HashEmbedder(), read_only=True) as store:
            assert len(store.list_drawers(wing="work")) == PER_WING
            assert store.verify(deep=True).ok
    assert _quick_check(home) == [("ok",)]


def test_quick_check_runs_on_every_verify_and_backup_refuses_it(palace: Palace, home: Path) -> None:
    _fill(palace)
    _index_page(home)  # folds the WAL into the file
    data = bytearray(_db(home).read_bytes())
    data[39] ^= 0x01  # the header's freelist page count: every read still works, quick_check does not pass
    _db(home).write_bytes(bytes(data))
    assert _quick_check(home) != [("ok",)]
    with Palace(home) as reopened:
        with reopened.open_vault("default", HashEmbedder(), read_only=True) as store:
            report = store.verify()
            assert report.sqlite_findings and not report.ok
            assert "sqlite check:     FAILED (quick_check)" in report.render()
        with pytest.raises(BackupRefused):
            create_backup(reopened, "default", HashEmbedder())
