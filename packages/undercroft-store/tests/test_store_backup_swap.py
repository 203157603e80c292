"""Restore reads backups/ once: a file swapped there mid-restore is refused or never installed unverified."""

from __future__ import annotations

import shutil
import sqlite3
import stat
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from undercroft_core import HashEmbedder
from undercroft_core.errors import IntegrityError
from undercroft_store import Palace
from undercroft_store.errors import BackupRefused
from undercroft_store.integrity import backup as backup_module
from undercroft_store.integrity.backup import BackupInfo, create_backup, restore_backup


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 5, 1, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        self.now += timedelta(seconds=1)
        return self.now


def _remember(palace: Palace, text: str) -> str:
    with palace.open_vault("default", HashEmbedder()) as store:
        return store.remember(text, wing="life", room="misc", added_by="t")[0].id


def _tampered_copy(info: BackupInfo, tmp_path: Path) -> Path:
    """The backup's database with every drawer tag zeroed: what an attacker with write access to backups/ plants."""
    forged = tmp_path / "forged.db"
    shutil.copyfile(info.path / "vault.db", forged)
    raw = sqlite3.connect(forged, isolation_level=None)
    raw.execute("UPDATE drawers SET tag = zeroblob(32)")
    raw.close()
    return forged


def _tags(database: Path) -> list[tuple[str, bytes]]:
    raw = sqlite3.connect(f"file:{database}?mode=ro", uri=True)
    try:
        return [(str(i), bytes(t)) for i, t in raw.execute("SELECT id, tag FROM drawers ORDER BY id")]
    finally:
        raw.close()


def _live(home: Path) -> dict[str, bytes]:
    vault = home / "vaults" / "default"
    return {name: (vault / name).read_bytes() for name in ("vault.db", "vault.json")}


@pytest.fixture
def setup(palace: Palace, home: Path, tmp_path: Path) -> tuple[BackupInfo, Path, str]:
    kept = _remember(palace, "in the backup")
    info = create_backup(palace, "default", HashEmbedder(), clock=Clock())
    _remember(palace, "written after the backup")
    with palace.open_vault("default", HashEmbedder()) as store:
        store._context.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return info, _tampered_copy(info, tmp_path), kept


def test_a_backup_swapped_after_the_first_read_is_refused_and_the_live_vault_untouched(
    palace: Palace, home: Path, setup: tuple[BackupInfo, Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The swap lands as the restore copies the database out of backups/ (before the fix: after verify)."""
    info, forged, _kept = setup
    before = _live(home)
    real_copyfile = shutil.copyfile
    swaps: list[str] = []

    def swap_then_copy(source: Any, target: Any, **kwargs: Any) -> Any:
        if Path(source) == info.path / "vault.db" and not swaps:
            swaps.append(str(target))
            real_copyfile(forged, source)  # the attacker wins the race against this very read
        return real_copyfile(source, target, **kwargs)

    monkeypatch.setattr(shutil, "copyfile", swap_then_copy)
    with pytest.raises(BackupRefused, match="fails verify; not restored") as caught:
        restore_backup(palace, "default", info.backup_id, HashEmbedder())
    assert isinstance(caught.value, IntegrityError)  # exit 2 on the CLI
    assert swaps, "the restore never copied the backup's database"
    monkeypatch.undo()
    assert _live(home) == before  # not one byte of the live vault changed
    assert not (home / "vaults" / "default" / ".restoring").exists()
    with palace.open_vault("default", HashEmbedder()) as store:
        assert store.count() == 2 and store.verify().ok


def test_a_swap_after_the_copy_changes_nothing_that_is_installed(
    palace: Palace, home: Path, setup: tuple[BackupInfo, Path, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The swap lands once verification has passed: what is installed is still exactly what was verified."""
    info, forged, kept = setup
    genuine = _tags(info.path / "vault.db")
    real_verify = backup_module._verify_copy
    verified: list[Path] = []

    def verify_then_swap(directory: Path, *args: Any) -> Any:
        report = real_verify(directory, *args)
        verified.append(directory)
        assert stat.S_IMODE(directory.stat().st_mode) == 0o700
        assert {stat.S_IMODE((directory / n).stat().st_mode) for n in ("vault.db", "vault.json")} == {0o600}
        shutil.copyfile(forged, info.path / "vault.db")
        return report

    monkeypatch.setattr(backup_module, "_verify_copy", verify_then_swap)
    report = restore_backup(palace, "default", info.backup_id, HashEmbedder())
    assert report.ok
    assert verified == [home / "vaults" / "default" / ".restoring"]  # the copy was verified, not backups/
    assert _tags(home / "vaults" / "default" / "vault.db") == genuine != _tags(forged)
    assert not (home / "vaults" / "default" / ".restoring").exists()
    with palace.open_vault("default", HashEmbedder()) as store:
        assert [d.id for d in store.list_drawers()] == [kept] and store.verify().ok


def test_a_refused_restore_over_a_deleted_vault_leaves_no_directory(
    palace: Palace, home: Path, setup: tuple[BackupInfo, Path, str]
) -> None:
    info, forged, _kept = setup
    shutil.copyfile(forged, info.path / "vault.db")
    palace.delete_vault("default")
    with pytest.raises(BackupRefused):
        restore_backup(palace, "default", info.backup_id, HashEmbedder())
    assert not (home / "vaults" / "default").exists() and palace.list_vaults() == []


def test_a_staging_directory_left_by_a_crash_is_replaced(
    palace: Palace, home: Path, setup: tuple[BackupInfo, Path, str]
) -> None:
    info, _forged, kept = setup
    leftover = home / "vaults" / "default" / ".restoring"
    leftover.mkdir()
    (leftover / "vault.db").write_bytes(b"half a copy from a restore that crashed")
    assert restore_backup(palace, "default", info.backup_id, HashEmbedder()).ok
    assert not leftover.exists()
    with palace.open_vault("default", HashEmbedder()) as store:
        assert [d.id for d in store.list_drawers()] == [kept]
