"""``undercroft refine``: distil drawers into knowledge-graph facts through the served LLM (operator only).

A thin adapter over `undercroft_cli.operations.refine.refine` (the function the /v1 route will call too):
it builds the runtime ``UNDERCROFT_LLM_*`` declares (policed, probed), opens the vault and prints the report.
"""

from __future__ import annotations

import json

import click
from undercroft_store import DEFAULT_VAULT

from undercroft_cli._internal.composition import open_store
from undercroft_cli._internal.exit_codes import EXIT_OK
from undercroft_cli._internal.served import build_chat_model
from undercroft_cli.operations.refine import refine

__all__ = ["refine_command"]


@click.command("refine")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True, help="Vault to refine.")
@click.option("--wing", default=None, help="Only drawers in this wing.")
@click.option("--room", default=None, help="Only drawers in this room.")
@click.option("--limit", type=click.IntRange(min=1), default=None, help="At most this many drawers (newest first).")
@click.option("--dry-run", is_flag=True, help="Send and ground, write no fact (the egress is recorded all the same).")
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
def refine_command(
    vault: str, wing: str | None, room: str | None, limit: int | None, dry_run: bool, as_json: bool
) -> int:
    """Distil drawers into KG facts through UNDERCROFT_LLM_URL (each fact grounded, screened, attributed)."""
    from undercroft_llm import Extractor

    model = build_chat_model(why="refine")
    try:
        with open_store(vault) as store:
            report = refine(store, Extractor(model), surface="cli", wing=wing, room=room, limit=limit, dry_run=dry_run)
    finally:
        model.close()
    click.echo(json.dumps(report.to_dict()) if as_json else report.render())
    return EXIT_OK
