"""``undercroft history`` and ``undercroft supersessions``: what happened in a vault, never what it holds.

Both are thin adapters over `undercroft_cli.operations` (the functions ``GET /v1/vaults/{id}/history`` and
``GET /v1/vaults/{id}/supersessions`` call), so the CLI and /v1 answer with one shape.
"""

from __future__ import annotations

import json

import click
from undercroft_store import DEFAULT_VAULT

from undercroft_cli._internal.composition import open_store
from undercroft_cli.operations.history import HISTORY_PAGE, history_page
from undercroft_cli.operations.supersessions import supersession_records

__all__ = ["history_command", "supersessions_command"]

_VAULT = click.option("--vault", default=DEFAULT_VAULT, show_default=True, help="Vault to read.")


@click.command("history")
@_VAULT
@click.option("--subject", default=None, help="Only the records naming this drawer id.")
@click.option("--limit", type=click.IntRange(1, 10_000), default=HISTORY_PAGE, show_default=True)
@click.option("--offset", type=click.IntRange(min=0), default=0, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print {records: [{label, at, height}], total, next_offset}.")
def history_command(vault: str, subject: str | None, limit: int, offset: int, as_json: bool) -> int:
    """The audit trail, oldest first: heights, times and labels of every namespace (never content).

    The chain is replayed first: a trail that does not reproduce its committed head is exit 2.

    Example: undercroft history --subject d-3f2a9c… --json
    """
    with open_store(vault, read_only=True) as store:
        page = history_page(store, subject=subject, limit=limit, offset=offset)
    if as_json:
        click.echo(json.dumps(page))
        return 0
    for record in page["records"]:
        click.echo(f"{record['height']:>8}  {record['at']}  {record['label']}")
    shown = len(page["records"])
    more = f"; next page: --offset {page['next_offset']}" if page["next_offset"] is not None else ""
    click.echo(f"{shown} of {page['total']} record(s){more}")
    return 0


@click.command("supersessions")
@_VAULT
@click.option(
    "--json", "as_json", is_flag=True, help="Print {supersessions: [{drawer_id, superseded_id, at, verdict}]}."
)
def supersessions_command(vault: str, as_json: bool) -> int:
    """Every supersession link with its verdict, recomputed from the keyed receipt.

    A link says a drawer replaced another; its verdict is recomputed now from the keyed receipt over the replaced
    words: verified, superseded_changed, superseded_gone or tampered. Ids and verdicts only, never words.

    Example: undercroft supersessions --json
    """
    with open_store(vault, read_only=True) as store:
        found = supersession_records(store)
    if as_json:
        click.echo(json.dumps(found))
        return 0
    links = found["supersessions"]
    for link in links:
        click.echo(f"{link['drawer_id']}  supersedes  {link['superseded_id']}  {link['at']}  {link['verdict']}")
    click.echo(f"{len(links)} supersession link(s)")
    return 0
