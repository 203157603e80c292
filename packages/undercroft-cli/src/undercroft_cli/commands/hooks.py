"""``undercroft hooks claude-code``: the settings.json fragment wiring Stop and PreCompact to a sweep."""

from __future__ import annotations

import json
import shlex

import click
from undercroft_store import DEFAULT_VAULT

from undercroft_cli._internal.exit_codes import EXIT_OK
from undercroft_cli._internal.program import program_path
from undercroft_cli.mining.rooms import CLAUDE_CODE_WING

__all__ = ["HOOK_EVENTS", "claude_code_settings", "hooks_group"]

#: The Claude Code events that trigger a sweep: the end of every turn, and just before context compaction.
HOOK_EVENTS: tuple[str, ...] = ("Stop", "PreCompact")


def claude_code_settings(
    *, program: str = "undercroft", projects: str = "~/.claude/projects", wing: str = CLAUDE_CODE_WING, vault: str
) -> dict[str, object]:
    """The ``hooks`` settings object: each event runs one idempotent, quiet sweep of the projects directory."""
    parts = [program, "sweep", projects, "--wing", wing]
    if vault != DEFAULT_VAULT:
        parts += ["--vault", vault]
    # The home-relative path is left for the shell to expand; everything else is quoted.
    command = " ".join(shlex.quote(p) if p != projects or not p.startswith("~/") else p for p in parts)
    hook = {"type": "command", "command": f"{command} >/dev/null"}
    return {"hooks": {event: [{"matcher": "", "hooks": [dict(hook)]}] for event in HOOK_EVENTS}}


@click.group("hooks")
def hooks_group() -> None:
    """Print auto-save hook settings for agent tools."""


@hooks_group.command("claude-code")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True, help="Vault the sweep files into.")
@click.option("--wing", default=CLAUDE_CODE_WING, show_default=True, help="Wing the sweep files into.")
@click.option("--projects", default="~/.claude/projects", show_default=True, help="Directory the sweep reads.")
@click.option(
    "--program", default=None, help="How the hook invokes undercroft (default: this program's absolute path)."
)
def claude_code(vault: str, wing: str, projects: str, program: str | None) -> int:
    """Print the settings.json fragment wiring Claude Code's Stop and PreCompact events to a sweep.

    Merge it into ~/.claude/settings.json (or a project's .claude/settings.json). Each message becomes one
    verbatim drawer; re-sweeps are no-ops for messages already filed.
    """
    from undercroft_core import validate_name

    try:  # a fragment that would fail at every Stop event must fail here instead
        validate_name(wing, what="wing")
        validate_name(vault, what="vault")
    except ValueError as error:
        raise click.BadParameter(str(error)) from None
    if program is None:  # a hook runs with the host's PATH, which need not hold undercroft: name it absolutely
        program = str(program_path())
    settings = claude_code_settings(program=program, projects=projects, wing=wing, vault=vault)
    click.echo(json.dumps(settings, indent=2))
    return EXIT_OK
