"""``undercroft anchor``: close the manifest window read records leave open (a write; never MCP)."""

from __future__ import annotations

import json

import click
from undercroft_store import DEFAULT_VAULT

from undercroft_cli._internal.composition import open_store
from undercroft_cli._internal.exit_codes import EXIT_OK
from undercroft_cli._internal.i18n import message
from undercroft_cli.operations.anchor import anchor

__all__ = ["anchor_command"]


@click.command("anchor")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print {vault, anchored_at, behind_by}.")
def anchor_command(vault: str, as_json: bool) -> int:
    """Anchor the manifest at the committed chain head."""
    with open_store(vault) as store:  # the open re-anchors a lagging manifest: close_window reports that lag
        anchored = anchor(store)
    click.echo(json.dumps(anchored.to_dict()) if as_json else message("anchor.done", height=anchored.anchored_at))
    return EXIT_OK
