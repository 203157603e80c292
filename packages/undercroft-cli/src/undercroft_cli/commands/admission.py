"""``undercroft admission list|allow|deny``: rule on the writes the admission screen quarantined (operator only)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from undercroft_store import DEFAULT_VAULT
from undercroft_store.governance.rulings import Ruling
from undercroft_vault import parse_signing_identity

from undercroft_cli._internal.composition import open_reader, open_store
from undercroft_cli._internal.exit_codes import EXIT_OK
from undercroft_cli.operations.admission import admission_queue, rule_on

__all__ = ["admission_group"]


@click.group("admission")
def admission_group() -> None:
    """Review the quarantine queue: list, allow (re-file) or deny (destroy with a receipt)."""


@admission_group.command("list")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def list_command(vault: str, as_json: bool) -> int:
    """Every queued write: where it was headed, what tripped, and whether its destination moved since."""
    with open_reader(vault) as store:
        items = admission_queue(store)
    if as_json:
        click.echo(json.dumps(items, sort_keys=True))
        return EXIT_OK
    if not items:
        click.echo("admission queue: empty")
    for item in items:
        click.echo(
            f"{item['id']}  -> {item['intended_wing']}/{item['intended_room']} ({item['intended_id']})  "
            f"signals={','.join(item['signals'])}  queued={item['queued_at']}  destination={item['destination']}"
        )
    return EXIT_OK


def _render(ruling: Ruling, as_json: bool) -> None:
    if as_json:
        click.echo(json.dumps(ruling.to_dict(), sort_keys=True))
    elif ruling.verdict == "allow":
        click.echo(f"allowed {ruling.slot}: re-filed as {ruling.landed_id}")
    else:
        click.echo(f"denied {ruling.slot}: destroyed through attested forgetting")
        if ruling.receipt is not None:
            click.echo(ruling.receipt.to_json())


@admission_group.command("allow")
@click.argument("entry_id")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def allow_command(entry_id: str, vault: str, as_json: bool) -> int:
    """Re-file a queued write to the id it aimed at (refused if the destination moved since it was queued)."""
    with open_store(vault) as store:
        ruling = rule_on(store, entry_id, "allow")
    _render(ruling, as_json)
    return EXIT_OK


@admission_group.command("deny")
@click.argument("entry_id")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--sign", "sign", type=click.Path(dir_okay=False, path_type=Path), help="signing identity file")
@click.option("--json", "as_json", is_flag=True)
def deny_command(entry_id: str, vault: str, sign: Path | None, as_json: bool) -> int:
    """Destroy a queued write through attested forgetting and print the receipt."""
    signer = None if sign is None else parse_signing_identity(sign.read_text(encoding="ascii"))
    try:
        with open_store(vault) as store:
            ruling = rule_on(store, entry_id, "deny", signer=signer)
    finally:
        if signer is not None:
            signer.wipe()
    _render(ruling, as_json)
    return EXIT_OK
