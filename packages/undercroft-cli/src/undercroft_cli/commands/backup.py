"""``undercroft backup create|list|restore``: verified snapshots under ``<home>/backups/<vault>/``."""

from __future__ import annotations

import json

import click
from undercroft_store import DEFAULT_VAULT
from undercroft_store.integrity.backup import backup_vault, restore_backup

from undercroft_cli._internal.composition import open_palace, vault_embedder
from undercroft_cli._internal.exit_codes import EXIT_INTEGRITY, EXIT_OK
from undercroft_cli.operations import verify_record
from undercroft_cli.operations.backups import backup_records, take_backup

__all__ = ["backup_group"]


@click.group("backup")
def backup_group() -> None:
    """Verified snapshots of a vault (the newest 10 are kept)."""


@backup_group.command("create")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the snapshot's record (as backup list --json does).")
def backup_create(vault: str, as_json: bool) -> int:
    """Snapshot VAULT (consistent while it is open); refused with exit 2 when it fails verify."""
    with open_palace() as palace:
        info = take_backup(palace, vault, vault_embedder(palace, vault))
    if as_json:
        click.echo(json.dumps(info))
        return EXIT_OK
    click.echo(f"backup {info['id']} of vault {vault!r}: {info['drawers']} drawers, {info['chain_records']} records")
    click.echo(f"path: {info['path']}")
    return EXIT_OK


@backup_group.command("list")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def backup_list(vault: str, as_json: bool) -> int:
    """List VAULT's snapshots, newest first."""
    with open_palace(read_only=True) as palace:
        found = backup_records(palace, vault)
    if as_json:
        click.echo(json.dumps(found))
    else:
        for info in found:
            click.echo(
                f"{info['id']}  {info['drawers']} drawers  {info['chain_records']} records  {info['db_bytes']} bytes"
            )
    return EXIT_OK


@backup_group.command("restore")
@click.argument("backup_id")
@click.option("--vault", default=None, help="Vault to replace (default: the one BACKUP_ID names, else default).")
@click.option("--force", is_flag=True, help="Restore even while another process holds the vault open.")
@click.option("--json", "as_json", is_flag=True, help="Print {vault, backup_id, verify} (same exit code).")
def backup_restore(backup_id: str, vault: str | None, force: bool, as_json: bool) -> int:
    """Replace a vault with snapshot BACKUP_ID (``<vault>-<stamp>``; verified first; refused while in use
    unless --force). An older bare ``<stamp>`` id restores into --vault (default: default)."""
    if vault is None:
        vault = backup_vault(backup_id) or DEFAULT_VAULT
    with open_palace() as palace:
        report = restore_backup(palace, vault, backup_id, vault_embedder(palace, vault), force=force)
    if as_json:
        click.echo(json.dumps({"vault": vault, "backup_id": backup_id, "verify": verify_record(report)}))
        return EXIT_OK if report.ok else EXIT_INTEGRITY
    click.echo(f"restored vault {vault!r} from backup {backup_id}")
    click.echo(report.render())
    return EXIT_OK if report.ok else EXIT_INTEGRITY
