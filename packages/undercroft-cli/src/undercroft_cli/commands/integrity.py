"""``undercroft verify`` and ``undercroft stats``."""

from __future__ import annotations

import json
from dataclasses import replace

import click
from undercroft_store import DEFAULT_VAULT

from undercroft_cli._internal.composition import open_store
from undercroft_cli._internal.exit_codes import EXIT_INTEGRITY, EXIT_OK
from undercroft_cli.operations import verify_record
from undercroft_cli.operations.overview import taxonomy_of, vault_stats

__all__ = ["stats_command", "taxonomy_command", "verify_command"]


@click.command("verify")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option(
    "--deep",
    is_flag=True,
    help="Run SQLite's full integrity_check (every index entry against its row) instead of its quick_check.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON (same exit code).")
def verify_command(vault: str, deep: bool, as_json: bool) -> int:
    """HMAC every record, replay the audit chain, resolve labels, compare mirrors, check SQLite's structures
    (exit 2 on VERIFY FAILED)."""
    with open_store(vault, read_only=True) as store:
        report = store.verify(deep=deep)
        unhealed = store.unhealed
    click.echo(json.dumps({**verify_record(report), "unhealed": unhealed}) if as_json else report.render())
    for line in unhealed:
        click.echo(f"unhealed: {line}", err=True)
    return EXIT_OK if report.ok else EXIT_INTEGRITY


@click.command("stats")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def stats_command(vault: str, as_json: bool) -> int:
    """Drawers, wings, rooms, chain height and head, size, posture, unhealed, embed failures."""
    with open_store(vault, read_only=True) as store:
        stats = vault_stats(store)
    # The command opens the vault read-only to look at it: that posture is the command's, not the vault's, so
    # the text does not call the vault "read-only" (the JSON keeps the handle's own `read_only`).
    click.echo(json.dumps(stats.to_dict(), ensure_ascii=False) if as_json else replace(stats, read_only=False).render())
    return EXIT_OK


@click.command("taxonomy")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def taxonomy_command(vault: str, as_json: bool) -> int:
    """Wing → room → drawer counts (labels only, never content; the quarantine wing shows its count alone)."""
    with open_store(vault, read_only=True) as store:
        taxonomy = taxonomy_of(store)
    if as_json:
        click.echo(json.dumps(taxonomy.to_dict(), ensure_ascii=False))
        return EXIT_OK
    for wing, rooms in taxonomy.tree.items():
        click.echo(f"{wing}  ({sum(rooms.values())})")
        for room, count in rooms.items():
            click.echo(f"  {room}: {count}")
    if taxonomy.quarantined:
        click.echo(f"quarantine-pending  ({taxonomy.quarantined}, operator review: undercroft admission list)")
    return EXIT_OK
