"""Verified snapshots, taken and listed: what ``undercroft backup create|list`` and ``POST|GET
/v1/vaults/{id}/backups`` do, said once (MCP deliberately has none: vault lifecycle is an operator act on the
palace).

A snapshot's record is ``{vault, id, path, created_at, drawers, chain_records, head, db_bytes}``. Taking one is
consistent while the vault is open and in use; the copy is verified before it is kept (a vault that fails verify
is refused: an integrity verdict), and only the newest ten are kept. Restore is ``backup restore`` /
``POST …/backups/restore`` (the verify record of ``operations.shapes``).
"""

from __future__ import annotations

from undercroft_core.embedder import Embedder
from undercroft_store import Palace
from undercroft_store.integrity.backup import create_backup, list_backups

__all__ = ["backup_records", "take_backup"]


def take_backup(palace: Palace, vault: str, embedder: Embedder) -> dict[str, object]:
    """Snapshot ``vault`` (opened with ``embedder``, read-only) and verify the copy; the snapshot's record."""
    return create_backup(palace, vault, embedder).to_dict()


def backup_records(palace: Palace, vault: str) -> list[dict[str, object]]:
    """``vault``'s snapshots, newest first, as records (none when it has never been backed up)."""
    return [info.to_dict() for info in list_backups(palace, vault)]
