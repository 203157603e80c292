"""Verified vault snapshots: create (SQLite online backup API, consistent while the vault is open), list, restore.

Layout: ``<home>/backups/<vault>/<vault>-<YYYYMMDDTHHMMSSffffffZ>/`` holding ``vault.db`` (a rollback-journal copy,
so it opens read-only anywhere), ``vault.json`` (the vault's manifest re-anchored at the snapshot's own
chain head, MAC'd under the vault's current keys) and ``backup.json`` (informational counts). Directories
0700, files 0600. A snapshot is verified after it is written — every verify leg, on the copy itself — and
deleted again if it fails (`BackupRefused`, an integrity verdict); a vault failing SQLite's ``quick_check`` is
refused before anything is copied (the online backup copies pages verbatim, damage included). The newest
`KEEP` snapshots are kept.

Restore copies the backup's database and manifest once into ``vaults/<vault>/.restoring/`` and works on that
copy only: it checks the copy names this vault (`BackupMismatch`), verifies it (`BackupRefused`), refuses
while any handle holds the vault open unless forced (`VaultInUse`: it takes the vault's exclusive directory
lock, `vault_lock`, without waiting, and holds it across the renames), then renames the verified manifest
FIRST and the verified database second (atomic renames, one directory fsync): a crash in between leaves an
older manifest beside the current database, which the next writable open heals as "anchor behind" — never an
older database beside a current manifest, which alarms as a rollback. Nothing is read from ``backups/``
after the copy, so a file swapped there mid-restore is never installed unverified.

A backup's id is its directory name, ``<vault>-<stamp>`` as the incident runbook names it (``backup list``,
``backup restore <vault>-<stamp>``). Snapshots made before that were named ``<stamp>`` alone: they are still
listed (under the ``<vault>-<stamp>`` id), restored by either name, and pruned in stamp order with the rest.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sqlite3
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Final

from undercroft_core.embedder import Embedder
from undercroft_vault import Anchor, write_manifest

from undercroft_store.errors import BackupMismatch, BackupNotFound, BackupRefused, StoreClosed, VaultInUse
from undercroft_store.integrity.verify import VerifyReport, verify_vault
from undercroft_store.kernel._internal.context import VaultContext, utc_now
from undercroft_store.kernel._internal.opening import DB_FILE, open_context, wipe_quietly
from undercroft_store.kernel._internal.structure import sqlite_findings
from undercroft_store.kernel._internal.vault_lock import lock_exclusive
from undercroft_store.palace import Palace

__all__ = [
    "BACKUPS_DIR",
    "KEEP",
    "BackupInfo",
    "backup_vault",
    "create_backup",
    "list_backups",
    "restore_backup",
]

#: The directory under the palace home holding every vault's snapshots.
BACKUPS_DIR: Final = "backups"
#: Snapshots kept per vault (the oldest beyond this are deleted after a successful create).
KEEP: Final = 10
_MANIFEST: Final = "vault.json"
_INFO: Final = "backup.json"
#: Inside the vault's directory, so the verified copy is renamed (same filesystem) and no other user can reach it.
_STAGING: Final = ".restoring"
# The stamp a snapshot's name ends with (a -N suffix separates two inside one microsecond).
_STAMP: Final = re.compile(r"(\d{8}T\d{12}Z)(?:-(\d+))?$")


@dataclass(frozen=True)
class BackupInfo:
    """One snapshot: its id (the directory name), where it is, and what it holds."""

    vault: str
    backup_id: str
    path: Path
    created_at: str
    drawers: int
    chain_records: int
    head: str
    db_bytes: int

    def to_dict(self) -> dict[str, object]:
        """JSON-ready fields."""
        return {
            "vault": self.vault,
            "id": self.backup_id,
            "path": str(self.path),
            "created_at": self.created_at,
            "drawers": self.drawers,
            "chain_records": self.chain_records,
            "head": self.head,
            "db_bytes": self.db_bytes,
        }


def _root(palace: Palace, name: str) -> Path:
    palace.vault_dir(name)  # validates the name
    return palace.home / BACKUPS_DIR / name


def _verify_copy(directory: Path, name: str, palace: Palace, embedder: Embedder) -> VerifyReport:
    context: VaultContext = open_context(directory, name, palace._master_key(), embedder, read_only=True)
    try:
        return verify_vault(context)
    finally:
        wipe_quietly(context)


def _snapshot_id(clock: Callable[[], datetime], root: Path, name: str) -> str:
    stamp = f"{name}-{clock().strftime('%Y%m%dT%H%M%S%fZ')}"
    candidate, suffix = stamp, 1
    while (root / candidate).exists():  # two snapshots inside one microsecond
        candidate, suffix = f"{stamp}-{suffix}", suffix + 1
    return candidate


def _stamp_of(directory_name: str, name: str) -> str | None:
    """The ``<stamp>[-N]`` a snapshot directory of vault ``name`` is named by (either naming), else None."""
    bare = directory_name.removeprefix(f"{name}-")
    return bare if _STAMP.fullmatch(bare) else None


def _order(directory_name: str, name: str) -> tuple[str, int]:
    stamp = _stamp_of(directory_name, name)
    match = _STAMP.fullmatch(stamp) if stamp is not None else None
    if match is None:
        return ("", 0)
    return (match.group(1), int(match.group(2) or 0))


def backup_vault(backup_id: str) -> str | None:
    """The vault a ``<vault>-<stamp>`` backup id names, or None for a bare (older) ``<stamp>`` id."""
    match = re.fullmatch(r"(.+)-(\d{8}T\d{12}Z(?:-\d+)?)", backup_id)
    return match.group(1) if match is not None else None


def _snapshot_dir(root: Path, name: str, backup_id: str) -> Path:
    """The directory of ``backup_id``: its own name first, then the other naming of the same stamp."""
    candidates = [backup_id]
    stamp = _stamp_of(backup_id, name)
    if stamp is not None:
        candidates += [stamp, f"{name}-{stamp}"]
    for candidate in candidates:
        if (root / candidate / DB_FILE).is_file():
            return root / candidate
    return root / backup_id


def create_backup(
    palace: Palace, name: str, embedder: Embedder, *, clock: Callable[[], datetime] = utc_now, keep: int = KEEP
) -> BackupInfo:
    """Snapshot vault `name` while it may be open and in use; verify the copy; keep the newest `keep`."""
    root = _root(palace, name)
    with palace.open_vault(name, embedder, read_only=True) as store:
        context = store._context
        damage = sqlite_findings(context.connection, deep=False)  # the page copy would archive it verbatim
        if damage:
            raise BackupRefused(
                f"vault {name!r} fails SQLite's quick_check; nothing was archived (run undercroft verify, then "
                f"undercroft repair): {damage[0]}"
            )
        root.mkdir(mode=0o700, parents=True, exist_ok=True)
        (palace.home / BACKUPS_DIR).chmod(0o700)
        backup_id = _snapshot_id(clock, root, name)
        directory = root / backup_id
        directory.mkdir(mode=0o700)
        try:
            target = sqlite3.connect(directory / DB_FILE, isolation_level=None)
            try:
                context.connection.backup(target)  # one step: a consistent snapshot under a read lock
                target.execute("PRAGMA journal_mode = DELETE")  # standalone file: opens read-only anywhere
                head, height = target.execute("SELECT head, height FROM chain_meta WHERE id = 1").fetchone()
                drawers = int(target.execute("SELECT count(*) FROM drawers").fetchone()[0])
            except sqlite3.DatabaseError as error:
                raise BackupRefused(
                    f"vault {name!r} does not read back from its copy ({error}); nothing archived"
                ) from None
            finally:
                target.close()
            (directory / DB_FILE).chmod(0o600)
            manifest = context.manifest.with_anchor(Anchor(bytes(head), int(height)))
            write_manifest(directory, manifest, context.keys)
            (directory / _MANIFEST).chmod(0o600)
            report = _verify_copy(directory, name, palace, embedder)
            if not report.ok:
                raise BackupRefused(
                    f"vault {name!r} fails verify; nothing was archived (run undercroft verify):\n{report.render()}"
                )
            info = BackupInfo(
                name,
                backup_id,
                directory,
                clock().isoformat(),
                drawers,
                int(height),
                bytes(head).hex(),
                (directory / DB_FILE).stat().st_size,
            )
            (directory / _INFO).write_text(json.dumps(info.to_dict(), indent=2) + "\n", encoding="utf-8")
            (directory / _INFO).chmod(0o600)
        except BaseException:
            shutil.rmtree(directory, ignore_errors=True)
            raise
    for stale in list_backups(palace, name)[keep:]:
        shutil.rmtree(stale.path)
    return info


def list_backups(palace: Palace, name: str) -> list[BackupInfo]:
    """Snapshots of vault `name`, newest first (a directory without a readable backup.json is skipped)."""
    root = _root(palace, name)
    if not root.is_dir():
        return []
    found: list[BackupInfo] = []
    for directory in sorted(root.iterdir(), key=lambda d: _order(d.name, name), reverse=True):
        stamp = _stamp_of(directory.name, name)
        try:
            data = json.loads((directory / _INFO).read_text(encoding="utf-8"))
            found.append(
                BackupInfo(
                    name,
                    f"{name}-{stamp}" if stamp is not None else directory.name,
                    directory,
                    str(data["created_at"]),
                    int(data["drawers"]),
                    int(data["chain_records"]),
                    str(data["head"]),
                    int(data["db_bytes"]),
                )
            )
        except (OSError, ValueError, KeyError, TypeError):
            continue
    return found


def _backup_vault_id(directory: Path) -> object:
    try:
        return json.loads((directory / _MANIFEST).read_text(encoding="utf-8")).get("vault_id")
    except (OSError, ValueError, AttributeError):
        return None


def restore_backup(
    palace: Palace, name: str, backup_id: str, embedder: Embedder, *, force: bool = False
) -> VerifyReport:
    """Replace vault `name` with snapshot `backup_id`; returns the verify report of the restored vault.

    The snapshot is copied ONCE into a staging directory inside the vault's own (0700) directory, and that
    copy is what is checked, verified and renamed into place: a writer of ``backups/`` who swaps the files
    mid-restore either changes the copy (which then fails verify) or changes nothing that is installed.
    """
    root = _root(palace, name)
    if os.sep in backup_id or backup_id in ("", ".", ".."):
        raise BackupNotFound(f"no backup {backup_id!r} of vault {name!r} under {root}")
    directory = _snapshot_dir(root, name, backup_id)
    if os.sep in backup_id or backup_id in ("", ".", "..") or not (directory / DB_FILE).is_file():
        raise BackupNotFound(f"no backup {backup_id!r} of vault {name!r} under {root}")
    if palace.read_only:
        raise StoreClosed("a read-only palace cannot restore a vault")
    vault_dir = palace.vault_dir(name)
    created = not vault_dir.exists()  # restoring a deleted vault: a refusal must not leave an empty directory
    vault_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
    staging = vault_dir / _STAGING
    shutil.rmtree(staging, ignore_errors=True)  # a restore that crashed before its renames left nothing live
    staging.mkdir(mode=0o700)
    try:
        _stage(directory, staging)
        claimed = _backup_vault_id(staging)
        if claimed != name:
            raise BackupMismatch(f"backup {backup_id!r} is a snapshot of vault {claimed!r}, not of {name!r}: refused")
        report = _verify_copy(staging, name, palace, embedder)
        if not report.ok:
            raise BackupRefused(
                f"backup {backup_id!r} of vault {name!r} fails verify; not restored:\n{report.render()}"
            )
        if force:
            _install(staging, vault_dir)
        else:  # the vault's exclusive lock: no handle is open, and none opens, while the files are swapped
            try:
                lock = lock_exclusive(vault_dir, drain=0.0, wait=0.0)
            except VaultInUse:
                raise VaultInUse(f"vault {name!r} is open elsewhere: stop that process, or pass --force") from None
            with lock:
                _install(staging, vault_dir)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        if created:
            shutil.rmtree(vault_dir, ignore_errors=True)
        raise
    shutil.rmtree(staging, ignore_errors=True)
    with palace.open_vault(name, embedder) as store:
        return store.verify()


def _stage(directory: Path, staging: Path) -> None:
    """Copy the snapshot's database and manifest into `staging` (0600, fsynced): the only read of backups/."""
    for file_name in (DB_FILE, _MANIFEST):
        target = staging / file_name
        shutil.copyfile(directory / file_name, target)
        target.chmod(0o600)
        with open(target, "rb") as handle:
            os.fsync(handle.fileno())


def _install(staging: Path, vault_dir: Path) -> None:
    """Rename the verified copies into place: manifest first (an older manifest beside the current database
    heals as "anchor behind"), database second; each rename atomic, the directory fsynced after both."""
    staged_db = staging / DB_FILE
    for suffix in ("-journal", "-wal", "-shm"):  # the read-only verify leaves none; never carry one across
        (staging / (DB_FILE + suffix)).unlink(missing_ok=True)
    (staging / _MANIFEST).replace(vault_dir / _MANIFEST)
    (vault_dir / "vault.json.next").unlink(missing_ok=True)  # a staged rotation belongs to the replaced state
    for suffix in ("-wal", "-shm"):  # stale WAL frames belong to the replaced database, never to the copy
        (vault_dir / (DB_FILE + suffix)).unlink(missing_ok=True)
    staged_db.replace(vault_dir / DB_FILE)
    descriptor = os.open(vault_dir, os.O_RDONLY)
    try:
        os.fsync(descriptor)
    finally:
        os.close(descriptor)
