"""``undercroft vault rotate <name>``: fresh keys, every blob and tag re-keyed, crash-safe (exit 2 on tampering)."""

from __future__ import annotations

import json

import click

from undercroft_cli._internal.composition import open_palace, vault_embedder
from undercroft_cli._internal.exit_codes import EXIT_OK
from undercroft_cli.operations.rotation import rotate_keys, rotation_record

__all__ = ["rotate_command"]


@click.command("rotate")
@click.argument("name")
@click.option("--json", "as_json", is_flag=True, help="Print the rotation report as JSON (docs/cli.md).")
def rotate_command(name: str, as_json: bool) -> int:
    """Re-key vault NAME: fresh salt and keys, one transaction, two-phase manifest swap.

    Refuses (exit 2) a vault failing verify on a leg it would rewrite, and (exit 1) one another process
    still holds open after 10 s (stop a serve-mcp first). Holds the vault exclusively while it runs: other
    commands wait for it (up to 60 s, then exit 1 "rotation in progress").
    """
    with open_palace() as palace:
        report = rotate_keys(palace, name, vault_embedder(palace, name))
    click.echo(json.dumps(rotation_record(report)) if as_json else report.render())
    return EXIT_OK
