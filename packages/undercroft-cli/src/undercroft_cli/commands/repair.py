"""``undercroft repair``: backfill, re-embed, vacuum and re-verify in one run (exit 2 when verify fails)."""

from __future__ import annotations

import json
import sys

import click
from undercroft_store import DEFAULT_VAULT
from undercroft_store.integrity.repair import Progress, repair_vault

from undercroft_cli._internal.composition import open_palace, vault_embedder
from undercroft_cli._internal.exit_codes import EXIT_INTEGRITY, EXIT_OK

__all__ = ["repair_command", "terminal_progress"]


def terminal_progress() -> Progress | None:
    """A one-line progress display on a TTY; silent (None) when stdout is not a terminal."""
    if not sys.stdout.isatty():
        return None

    def show(step: str, done: int, total: int) -> None:
        end = "\n" if done >= total else ""
        click.echo(f"\r{step}: {done}/{total}", nl=False, err=True)
        if end:
            click.echo("", err=True)

    return show


@click.command("repair")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def repair_command(vault: str, as_json: bool) -> int:
    """Backfill embeddings, fingerprints and FTS rows; re-embed a forced embedder swap; vacuum; verify."""
    with open_palace() as palace:
        report = repair_vault(palace, vault, vault_embedder(palace, vault), progress=terminal_progress())
    click.echo(json.dumps(report.to_dict()) if as_json else report.render())
    return EXIT_OK if report.ok else EXIT_INTEGRITY
