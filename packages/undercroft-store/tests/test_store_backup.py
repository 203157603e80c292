"""Backups: verified snapshots while open, keep the last 10, restore refusals, restored vault verifies."""

from __future__ import annotations

import shutil
import sqlite3
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_core.errors import IntegrityError
from undercroft_store import ManifestTampered, Palace
from undercroft_store.errors import BackupMismatch, BackupNotFound, BackupRefused, VaultInUse
from undercroft_store.integrity.backup import KEEP, create_backup, list_backups, restore_backup
from undercroft_store.integrity.rotation import rotate_vault


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def _remember(palace: Palace, text: str, name: str = "default") -> str:
    with palace.open_vault(name, HashEmbedder()) as store:
        return store.remember(text, wing="life", room="misc", added_by="t")[0].id


def _raw(home: Path, name: str = "default") -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / name / "vault.db", isolation_level=None)


def test_snapshot_while_open_and_restore(palace: Palace, home: Path) -> None:
    first = _remember(palace, "before the backup")
    with palace.open_vault("default", HashEmbedder()) as writer:  # open and in use during the snapshot
        info = create_backup(palace, "default", HashEmbedder(), clock=Clock())
        writer.remember("after the backup", wing="life", room="misc", added_by="t")
    assert info.drawers == 1 and info.chain_records == 1 and info.path.parent == home / "backups" / "default"
    assert {p.name for p in info.path.iterdir()} == {"vault.db", "vault.json", "backup.json"}
    assert oct(info.path.stat().st_mode & 0o777) == "0o700"
    assert oct((info.path / "vault.db").stat().st_mode & 0o777) == "0o600"
    assert [b.backup_id for b in list_backups(palace, "default")] == [info.backup_id]
    report = restore_backup(palace, "default", info.backup_id, HashEmbedder())
    assert report.ok and report.records_checked == 1
    with palace.open_vault("default", HashEmbedder()) as store:
        assert [d.id for d in store.list_drawers()] == [first]
        assert store.verify().ok
        store.remember("life goes on", wing="life", room="misc", added_by="t")


def test_keeps_the_last_ten(palace: Palace) -> None:
    _remember(palace, "x")
    clock = Clock()
    made = [create_backup(palace, "default", HashEmbedder(), clock=clock).backup_id for _ in range(KEEP + 2)]
    assert [b.backup_id for b in list_backups(palace, "default")] == list(reversed(made))[:KEEP]


def test_refuses_to_archive_a_tampered_vault(palace: Palace, home: Path) -> None:
    drawer = _remember(palace, "x")
    raw = _raw(home)
    raw.execute("UPDATE drawers SET tag = zeroblob(32) WHERE id = ?", (drawer,))
    raw.close()
    with pytest.raises(BackupRefused, match=f"TAMPERED: {drawer}") as caught:
        create_backup(palace, "default", HashEmbedder(), clock=Clock())
    assert isinstance(caught.value, IntegrityError)
    assert list((home / "backups" / "default").iterdir()) == []


def test_refuses_a_backup_of_another_vault(palace: Palace, home: Path) -> None:
    palace.create_vault("other")
    _remember(palace, "x", "other")
    info = create_backup(palace, "other", HashEmbedder(), clock=Clock())
    (home / "backups" / "default").mkdir(parents=True)
    shutil.copytree(info.path, home / "backups" / "default" / info.backup_id)
    with pytest.raises(BackupMismatch, match="snapshot of vault 'other', not of 'default'"):
        restore_backup(palace, "default", info.backup_id, HashEmbedder())
    with pytest.raises(BackupNotFound):
        restore_backup(palace, "default", "nope", HashEmbedder())
    with pytest.raises(BackupNotFound):
        restore_backup(palace, "default", "..", HashEmbedder())


def test_refuses_a_tampered_backup(palace: Palace, home: Path) -> None:
    _remember(palace, "x")
    info = create_backup(palace, "default", HashEmbedder(), clock=Clock())
    raw = sqlite3.connect(info.path / "vault.db", isolation_level=None)
    raw.execute("UPDATE drawers SET tag = zeroblob(32)")
    raw.close()
    with pytest.raises(BackupRefused, match="fails verify; not restored"):
        restore_backup(palace, "default", info.backup_id, HashEmbedder())


def test_refuses_while_in_use_unless_forced(palace: Palace) -> None:
    _remember(palace, "x")
    info = create_backup(palace, "default", HashEmbedder(), clock=Clock())
    with palace.open_vault("default", HashEmbedder(), read_only=True):
        with pytest.raises(VaultInUse, match="--force"):
            restore_backup(palace, "default", info.backup_id, HashEmbedder())
        assert restore_backup(palace, "default", info.backup_id, HashEmbedder(), force=True).ok


def test_restore_over_a_tampered_or_deleted_vault(palace: Palace, home: Path) -> None:
    _remember(palace, "x")
    info = create_backup(palace, "default", HashEmbedder(), clock=Clock())
    _remember(palace, "y")
    manifest = home / "vaults" / "default" / "vault.json"
    manifest.write_text(manifest.read_text().replace('"count": 2', '"count": 9'))
    with Palace(home) as reopened:
        with pytest.raises(ManifestTampered):
            reopened.open_vault("default", HashEmbedder())
        assert restore_backup(reopened, "default", info.backup_id, HashEmbedder()).ok
        reopened.delete_vault("default")
        assert restore_backup(reopened, "default", info.backup_id, HashEmbedder()).ok


def test_a_crash_between_manifest_and_database_heals(palace: Palace, home: Path) -> None:
    _remember(palace, "x")
    info = create_backup(palace, "default", HashEmbedder(), clock=Clock())
    _remember(palace, "y")
    # the restore's first half only: the backup's (older) manifest beside the current database
    shutil.copyfile(info.path / "vault.json", home / "vaults" / "default" / "vault.json")
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        assert any("behind" in line for line in store.unhealed) and store.verify().ok


def test_a_backup_from_before_a_rotation_restores(palace: Palace) -> None:
    first = _remember(palace, "x")
    info = create_backup(palace, "default", HashEmbedder(), clock=Clock())
    rotate_vault(palace, "default", HashEmbedder())
    assert restore_backup(palace, "default", info.backup_id, HashEmbedder()).ok
    with palace.open_vault("default", HashEmbedder()) as store:
        assert store._context.manifest.generation == 1 and store.get(first).content == "x"


def test_backups_are_named_vault_dash_stamp_and_older_bare_stamps_still_read(palace: Palace, home: Path) -> None:
    _remember(palace, "kept", name="default")
    clock = Clock()
    old = create_backup(palace, "default", HashEmbedder(), clock=clock)
    assert old.backup_id == "default-20260501T090001000000Z" and old.path.name == old.backup_id  # the runbook's name
    bare = old.path.with_name("20260501T090001000000Z")  # how a snapshot was named before
    old.path.rename(bare)
    clock.now += timedelta(seconds=5)
    new = create_backup(palace, "default", HashEmbedder(), clock=clock)
    listed = list_backups(palace, "default")
    assert [b.backup_id for b in listed] == [new.backup_id, old.backup_id]  # newest first across both namings
    assert listed[1].path == bare
    for name in (old.backup_id, bare.name):  # the older snapshot restores by either name
        assert restore_backup(palace, "default", name, HashEmbedder()).ok
    for _ in range(KEEP):
        create_backup(palace, "default", HashEmbedder(), clock=clock)
    assert not bare.exists() and len(list_backups(palace, "default")) == KEEP  # pruned in stamp order
