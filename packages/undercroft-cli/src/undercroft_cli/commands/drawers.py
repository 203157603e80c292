"""``undercroft remember`` and ``undercroft drawer get|list|update|delete``."""

from __future__ import annotations

import json
import sys
from datetime import UTC, datetime

import click
from undercroft_core import KIND_VOCAB
from undercroft_core.external_embedder import EXTERNAL_PREFIX
from undercroft_store import DEFAULT_VAULT

from undercroft_cli._internal.composition import open_reader, open_store
from undercroft_cli._internal.i18n import message
from undercroft_cli._internal.vector_option import parse_vector_option
from undercroft_cli.operations import drawer_record
from undercroft_cli.operations.drawers import UpdateRefused, delete_drawer, update_drawer
from undercroft_cli.operations.saving import DEFAULT_ROOM, DEFAULT_WING, SaveRefused, SaveRequest, save

__all__ = ["drawer_group", "remember_command"]

_VAULT = click.option("--vault", default=DEFAULT_VAULT, show_default=True, help="Vault to use.")


@click.command("remember")
@click.argument("text", required=False)
@_VAULT
@click.option("--wing", default=None, help=f"Wing to file in (default: {DEFAULT_WING}).")
@click.option("--room", default=None, help=f"Room to file in (default: {DEFAULT_ROOM}).")
@click.option("--kind", type=click.Choice(KIND_VOCAB), default=None)
@click.option(
    "--vector",
    default=None,
    help="The text's embedding as a JSON array: required by an external:<name>@<dim> vault (one drawer's worth).",
)
@click.option(
    "--supersedes",
    default=None,
    metavar="ID",
    help="The drawer these words replace: filed beside it (its wing, room and kind) as one drawer, with a keyed "
    "receipt over the replaced words; the old drawer stays.",
)
@click.option("--json", "as_json", is_flag=True, help="Print {results: [{outcome, id, wing, room}]}.")
def remember_command(
    text: str | None,
    vault: str,
    wing: str | None,
    room: str | None,
    kind: str | None,
    vector: str | None,
    supersedes: str | None,
    as_json: bool,
) -> int:
    """Save TEXT verbatim (or standard input when TEXT is '-' or absent).

    Example: undercroft remember "We chose GraphQL over REST" --wing backend --room decisions
    """
    supplied = None if vector is None else parse_vector_option(vector)
    if text is None or text == "-":
        if text is None and sys.stdin.isatty():  # nothing piped: say how, rather than wait silently for EOF
            raise click.UsageError(
                'no text to remember: pass it as an argument (undercroft remember "the words") '
                "or pipe it in (echo the words | undercroft remember -)"
            )
        text = sys.stdin.read()
    with open_store(vault) as store:
        space = store.embedder.identity.label
        if supplied is None and space.startswith(EXTERNAL_PREFIX):
            raise click.UsageError(
                f"vault {vault!r} stores caller-supplied vectors ({space}): pass the text's embedding with "
                "--vector '[…]' (a JSON array of that dimension)"
            )
        # A person pipes whole files in: the CLI splits long text into chunk-sized drawers (operations/saving.py),
        # except for a supersession, which replaces one drawer with one.
        request = SaveRequest(
            content=text,
            added_by="cli",
            split=supersedes is None,
            wing=wing,
            room=room,
            kind=kind,
            vector=supplied,
            supersedes=supersedes,
        )
        try:
            results = save(store, request, now=_now())
        except SaveRefused as refused:
            raise click.BadParameter(str(refused).replace("argument 'supersedes'", "--supersedes")) from None
    if as_json:
        rows = [{"outcome": r.outcome, "id": r.id, "wing": r.wing, "room": r.room} for r in results]
        click.echo(json.dumps({"results": rows}))
        return 0
    for result in results:
        click.echo(f"{result.outcome}: {result.id}")
    return 0


@click.group("drawer")
def drawer_group() -> None:
    """Read, list, update and delete drawers."""


@drawer_group.command("get")
@click.argument("drawer_id")
@_VAULT
@click.option("--json", "as_json", is_flag=True)
def drawer_get(drawer_id: str, vault: str, as_json: bool) -> int:
    """Print drawer DRAWER_ID, verified (exit 2 if it fails its HMAC)."""
    with open_reader(vault) as store:
        drawer = store.get(drawer_id)
    if as_json:
        # The record MCP's undercroft_get_drawer and GET /v1/…/drawers/{id} answer: provenance included.
        click.echo(json.dumps(drawer_record(drawer), ensure_ascii=False))
    else:
        click.echo(f"{drawer.id}  {drawer.wing}/{drawer.room}  {drawer.kind or '-'}  {drawer.filed_at}")
        click.echo(drawer.content)
    return 0


@drawer_group.command("list")
@_VAULT
@click.option("--wing", default=None)
@click.option("--room", default=None)
@click.option("--kind", type=click.Choice(KIND_VOCAB), default=None)
@click.option("--limit", type=click.IntRange(min=1), default=50, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def drawer_list(vault: str, wing: str | None, room: str | None, kind: str | None, limit: int, as_json: bool) -> int:
    """List drawers, newest first (each verified)."""
    with open_reader(vault) as store:
        drawers = store.list_drawers(wing=wing, room=room, kind=kind, limit=limit)
    if as_json:
        click.echo(json.dumps([drawer_record(d, full=False) for d in drawers], ensure_ascii=False))
        return 0
    for drawer in drawers:
        preview = drawer.content.replace("\n", " ")
        click.echo(f"{drawer.id}  {drawer.wing}/{drawer.room}  {preview[:60]}")
    return 0


@drawer_group.command("update")
@click.argument("drawer_id")
@click.argument("text", required=False)
@_VAULT
@click.option("--wing", default=None, help="Check: must equal the drawer's wing (an update never moves a drawer).")
@click.option("--room", default=None, help="Check: must equal the drawer's room.")
@click.option("--json", "as_json", is_flag=True, help="Print {outcome, id, wing, room}.")
def drawer_update(
    drawer_id: str, text: str | None, vault: str, wing: str | None, room: str | None, as_json: bool
) -> int:
    """Replace drawer DRAWER_ID's content in place with TEXT (or standard input when TEXT is '-').

    Re-sealed, re-tagged and audited; the admission screen sees the new words as it sees a save. The drawer
    keeps its id, wing and room: to file the words elsewhere, remember them there and delete this one.

    Example: undercroft drawer update d-3f2a9c… "We chose GraphQL over REST, for the mobile app only"
    """
    if text is None:
        raise click.UsageError(
            'no new text: pass it as an argument (undercroft drawer update ID "the words") '
            "or pipe it in (echo the words | undercroft drawer update ID -)"
        )
    if text == "-":
        text = sys.stdin.read()
    with open_store(vault) as store:
        try:
            done = update_drawer(store, drawer_id, content=text, now=_now(), wing=wing, room=room)
        except UpdateRefused as refused:
            raise click.BadParameter(str(refused)) from None
    if as_json:
        click.echo(json.dumps({"outcome": done.outcome, "id": done.id, "wing": done.wing, "room": done.room}))
    else:
        click.echo(f"{done.outcome}: {done.id} in {done.wing}/{done.room}")
    return 0


def _now() -> str:
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@drawer_group.command("delete")
@click.argument("drawer_id")
@_VAULT
@click.option("--json", "as_json", is_flag=True, help="Print {id, deleted}.")
def drawer_delete(drawer_id: str, vault: str, as_json: bool) -> int:
    """Delete drawer DRAWER_ID (leaves a keyed tombstone and an audit record)."""
    with open_store(vault) as store:
        delete_drawer(store, drawer_id)
    click.echo(json.dumps({"id": drawer_id, "deleted": True}) if as_json else message("deleted.id", id=drawer_id))
    return 0
