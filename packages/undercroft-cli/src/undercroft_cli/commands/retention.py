"""``undercroft retention set|list|clear|sweep`` (operator only)."""

from __future__ import annotations

import json
from pathlib import Path

import click
from undercroft_store import DEFAULT_VAULT
from undercroft_store.governance.retention import (
    SweepReport,
    clear_retention,
    list_retention,
    parse_max_age,
    set_retention,
    sweep,
)

from undercroft_cli._internal.composition import open_store
from undercroft_cli._internal.exit_codes import EXIT_INTEGRITY, EXIT_OK
from undercroft_cli._internal.i18n import message
from undercroft_cli.commands.forget import load_signer, reserve_output

__all__ = ["retention_group"]


def _sweep_record(report: SweepReport, receipt: dict[str, object] | None, out: Path | None) -> dict[str, object]:
    """The ``retention sweep --json`` shape: the counts, what failed, and the receipt (inline unless --out)."""
    return {
        "ok": report.ok,
        "examined": report.examined,
        "forgotten": list(report.forgotten),
        "undecided": report.undecided,
        "failed_policies": list(report.failed_policies),
        "tampered_drawers": list(report.tampered_drawers),
        "receipt": receipt,
        "out": None if out is None or report.receipt is None else str(out),
    }


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
    seconds = parse_max_age(max_age)
    with open_store(vault) as store:
        policy = set_retention(store, wing, room, max_age=seconds)
    click.echo(json.dumps(policy.to_dict()) if as_json else f"retention {policy.scope}: {policy.max_age_seconds}s")
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
        listing = list_retention(store)
    if as_json:
        click.echo(json.dumps({"policies": [p.to_dict() for p in listing.policies], "failed": list(listing.failed)}))
    else:
        for policy in listing.policies:
            click.echo(f"{policy.scope}\t{policy.max_age_seconds}s\tset {policy.at}")
        for finding in listing.failed:
            click.echo(f"FAILED: {finding}")
    return EXIT_OK if listing.ok else EXIT_INTEGRITY


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
            report = sweep(store, signer=signer)
        if report.receipt is not None and output is not None:
            output.write((report.receipt.to_json() + "\n").encode("ascii"))
        if as_json:
            receipt = None if report.receipt is None or output is not None else report.receipt.to_dict()
            click.echo(json.dumps(_sweep_record(report, receipt, out)))
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
