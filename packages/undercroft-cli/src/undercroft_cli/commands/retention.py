"""``undercroft retention set|list|clear|sweep`` (operator only)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from undercroft_store import DEFAULT_VAULT
from undercroft_store.governance.retention import clear_retention, parse_max_age

from undercroft_cli._internal.composition import open_store
from undercroft_cli._internal.exit_codes import EXIT_INTEGRITY, EXIT_OK
from undercroft_cli._internal.i18n import message
from undercroft_cli.commands.forget import load_signer, reserve_output
from undercroft_cli.operations.retention import retention_policies, set_policy, sweep_record, sweep_retention

__all__ = ["retention_group"]


def _scope(policy: dict[str, object]) -> str:
    """``wing`` or ``wing/room``, as the store names a policy's scope."""
    return str(policy["wing"]) if policy["room"] is None else f"{policy['wing']}/{policy['room']}"


@click.group("retention")
def retention_group() -> None:
    """Per wing/room maximum age, enforced only by an explicit, attested sweep."""


@retention_group.command("set")
@click.argument("wing")
@click.argument("room", required=False)
@click.option("--max-age", "max_age", required=True, help="90d, 12h, 30m, 3600s, 2w or seconds")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the policy (as retention list --json does).")
def set_command(wing: str, room: str | None, max_age: str, vault: str, as_json: bool) -> int:
    """Declare the policy of a wing or wing/room."""
    seconds = parse_max_age(max_age)  # a bad duration is refused before the vault opens
    with open_store(vault) as store:
        policy = set_policy(store, wing, room, seconds)
    click.echo(json.dumps(policy) if as_json else f"retention {_scope(policy)}: {policy['max_age_seconds']}s")
    return EXIT_OK


@retention_group.command("clear")
@click.argument("wing")
@click.argument("room", required=False)
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print {wing, room, cleared}.")
def clear_command(wing: str, room: str | None, vault: str, as_json: bool) -> int:
    """Remove the policy of a wing or wing/room."""
    with open_store(vault) as store:
        cleared = clear_retention(store, wing, room)
    if as_json:
        click.echo(json.dumps({"wing": wing, "room": room, "cleared": cleared}))
        return EXIT_OK
    click.echo(message("retention.cleared" if cleared else "retention.nothing"))
    return EXIT_OK


@retention_group.command("list")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def list_command(vault: str, as_json: bool) -> int:
    """Every verified policy; a failing row is named (exit 2)."""
    with open_store(vault, read_only=True) as store:
        listing = retention_policies(store)
    if as_json:
        click.echo(json.dumps(listing))
    else:
        for policy in listing["policies"]:
            click.echo(f"{_scope(policy)}\t{policy['max_age_seconds']}s\tset {policy['at']}")
        for finding in listing["failed"]:
            click.echo(f"FAILED: {finding}")
    return EXIT_INTEGRITY if listing["failed"] else EXIT_OK


@retention_group.command("sweep")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--sign", "sign", type=click.Path(dir_okay=False, path_type=Path), help="signing identity file")
@click.option("--out", type=click.Path(dir_okay=False, path_type=Path), help="write the receipt here")
@click.option("--json", "as_json", is_flag=True, help="Print {ok, examined, forgotten, undecided, ...} (docs/cli.md).")
def sweep_command(vault: str, sign: Path | None, out: Path | None, as_json: bool) -> int:
    """Destroy what the policies expire, through attested forgetting (exit 2 when a row failed)."""
    signer = load_signer(sign)
    with reserve_output(out) as output:  # reserved before anything is destroyed
        with open_store(vault) as store:
            report = sweep_retention(store, signer=signer)
        if report.receipt is not None and output is not None:
            output.write((report.receipt.to_json() + "\n").encode("ascii"))
        if as_json:
            click.echo(json.dumps(sweep_record(report, out=out)))
            return EXIT_OK if report.ok else EXIT_INTEGRITY
        click.echo(f"examined {report.examined}, forgot {len(report.forgotten)}, undecided {report.undecided}")
        for finding in report.failed_policies:
            click.echo(f"FAILED POLICY: {finding}")
        for drawer_id in report.tampered_drawers:
            click.echo(f"TAMPERED: {drawer_id}")
        if report.receipt is not None and output is None:
            click.echo(report.receipt.to_json())
    click.echo("SWEEP OK" if report.ok else "SWEEP NOT OK")
    return EXIT_OK if report.ok else EXIT_INTEGRITY
