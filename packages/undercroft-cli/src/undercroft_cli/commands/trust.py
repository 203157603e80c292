"""``undercroft trust set|list``: deployment-assigned wing trust, consumed as the search floor (operator only)."""

from __future__ import annotations

import json

import click
from undercroft_core.vocabulary import TRUST_VOCAB
from undercroft_store import DEFAULT_VAULT

from undercroft_cli._internal.composition import open_store
from undercroft_cli._internal.exit_codes import EXIT_OK
from undercroft_cli._internal.i18n import message
from undercroft_cli.operations.trust import assign_trust, trust_records

__all__ = ["trust_group"]


@click.group("trust")
def trust_group() -> None:
    """Assign wing trust classes (quarantined | standard | trusted); unassigned wings are standard."""


@trust_group.command("set")
@click.argument("wing")
@click.argument("trust")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the assignment {wing, trust, at}.")
def set_command(wing: str, trust: str, vault: str, as_json: bool) -> int:
    """Assign TRUST (one of quarantined, standard, trusted) to WING: a tagged row and a chain record."""
    with open_store(vault) as store:
        assignment = assign_trust(store, wing, trust)
    if as_json:
        click.echo(json.dumps(assignment, sort_keys=True))
        return EXIT_OK
    click.echo(message("trust.assigned", wing=assignment["wing"], trust=assignment["trust"], at=assignment["at"]))
    return EXIT_OK


@trust_group.command("list")
@click.argument("wing", required=False)
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option("--json", "as_json", is_flag=True)
def list_command(wing: str | None, vault: str, as_json: bool) -> int:
    """Every verified assignment (or WING's); exit 2 when a row fails its tag or is not its newest record."""
    with open_store(vault, read_only=True) as store:
        assignments = trust_records(store, wing=wing)
    if as_json:
        click.echo(json.dumps(assignments, sort_keys=True))
    elif wing is not None and not assignments:
        click.echo(f"trust {wing}: standard (unassigned)")
    else:
        for assignment in assignments:
            click.echo(
                message("trust.assigned", wing=assignment["wing"], trust=assignment["trust"], at=assignment["at"])
            )
        if not assignments:
            click.echo(f"no wing assigned; every wing is standard (classes: {', '.join(TRUST_VOCAB)})")
    return EXIT_OK
