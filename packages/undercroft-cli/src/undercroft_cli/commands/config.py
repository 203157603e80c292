"""``undercroft config check``: every ``UNDERCROFT_*`` declaration through start-up's resolvers, opening nothing."""

from __future__ import annotations

import json
import os

import click

from undercroft_cli._internal.composition import check_environment
from undercroft_cli._internal.exit_codes import EXIT_OK, EXIT_RUN_FAILED
from undercroft_cli._internal.i18n import message

__all__ = ["config_group"]

# The report's sections, in the order a reader triages them.
_SECTIONS: tuple[tuple[str, str], ...] = (
    ("refused", "refused (this environment would not start)"),
    ("unknown", "unknown (no resolver knows the name: a typo?)"),
    ("warned", "warned (the default is kept)"),
    ("validated", "validated"),
    ("accepted", "accepted (opaque: the consumer validates it)"),
)


@click.group("config")
def config_group() -> None:
    """Inspect this environment's UNDERCROFT_* declarations."""


@config_group.command("check")
@click.option("--json", "as_json", is_flag=True, help="Print the report as one JSON object.")
def config_check(as_json: bool) -> int:
    """Validate every UNDERCROFT_* variable set here, without opening a vault or binding a port.

    Exit 0 when this environment starts, 1 when at least one declaration would refuse to start — the same
    verdict every other command and serve-mcp reach at start-up, from the same resolver and the same build
    (a value selecting a component this build lacks, such as UNDERCROFT_RETRIEVAL=pq, refuses).
    Values are never printed (a declaration may be a credential); messages name the variable.
    """
    report = check_environment(os.environ)  # the resolver every other command runs at start-up
    if as_json:
        body = {
            "starts": report.starts,
            "entries": [{"name": e.name, "status": str(e.status), "message": e.message} for e in report.entries],
        }
        click.echo(json.dumps(body, ensure_ascii=False))
        return EXIT_OK if report.starts else EXIT_RUN_FAILED
    for status, title in _SECTIONS:
        entries = [e for e in report.entries if str(e.status) == status]
        if not entries:
            continue
        click.echo(f"{title}: {len(entries)}")
        for entry in entries:
            click.echo(f"  {entry.name}" + (f": {entry.message}" if entry.message else ""))
    if not report.entries:
        click.echo("no UNDERCROFT_* variables set: every default applies")
    if report.starts:
        click.echo(message("config.starts"))
        return EXIT_OK
    click.echo(message("config.refuses"), err=True)
    return EXIT_RUN_FAILED
