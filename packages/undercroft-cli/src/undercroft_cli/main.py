"""The `undercroft` program's entry point: the command group and the exit-code doctrine (0 / 1 / 2)."""

from __future__ import annotations

import sys

import click

from undercroft_cli import __version__
from undercroft_cli._internal.composition import start_up
from undercroft_cli._internal.exit_codes import run_cli
from undercroft_cli.commands.admission import admission_group
from undercroft_cli.commands.anchor import anchor_command
from undercroft_cli.commands.backup import backup_group
from undercroft_cli.commands.config import config_group
from undercroft_cli.commands.daemon import daemon_group
from undercroft_cli.commands.drawers import drawer_group, remember_command
from undercroft_cli.commands.forget import forget_command, verify_forgetting_command
from undercroft_cli.commands.hooks import hooks_group
from undercroft_cli.commands.integrity import stats_command, taxonomy_command, verify_command
from undercroft_cli.commands.kg import kg_group
from undercroft_cli.commands.memory import (
    check_dup_command,
    closets_command,
    dedup_command,
    diary_group,
    hallways_command,
    tunnel_group,
    wake_up_command,
)
from undercroft_cli.commands.mine import delete_by_source_command, mine_command, sweep_command, transcript_group
from undercroft_cli.commands.repair import repair_command
from undercroft_cli.commands.retention import retention_group
from undercroft_cli.commands.rotate import rotate_command
from undercroft_cli.commands.search import search_command
from undercroft_cli.commands.transfer import bundle_group, export_command, import_command
from undercroft_cli.commands.trust import trust_group
from undercroft_cli.commands.vaults import init_command, vault_group
from undercroft_cli.commands.witness import witness_group
from undercroft_cli.serving import serve_mcp_command

__all__ = ["cli", "main"]


#: Commands that report on the environment instead of running under it: they run the resolver themselves.
_REPORTS_ON_THE_ENVIRONMENT = frozenset({"config"})


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="undercroft")
@click.pass_context
def cli(context: click.Context) -> None:
    """Undercroft: hardened, local-first memory for AI agents.

    Verbatim drawers in encrypted, integrity-verified vaults, found again by hybrid search.
    """
    # One start-up resolver for every entry point (each command and serve-mcp alike), before anything is
    # opened: a refusal exits 1 naming every refusing variable; warnings print once, here, on stderr.
    if context.invoked_subcommand in _REPORTS_ON_THE_ENVIRONMENT:
        return
    for line in start_up():
        click.echo(f"warning: {line}", err=True)


# Store commands (issue 6). Add further commands below, one line each.
cli.add_command(init_command)
cli.add_command(vault_group)
cli.add_command(remember_command)
cli.add_command(drawer_group)
cli.add_command(verify_command)
cli.add_command(stats_command)
cli.add_command(taxonomy_command)
cli.add_command(search_command)
# Rotation, backup, repair (issue 6 §8–9).
vault_group.add_command(rotate_command)
cli.add_command(backup_group)
cli.add_command(repair_command)
cli.add_command(serve_mcp_command)
# Mining, sweeping, transcripts, auto-save, configuration (issue 10).
cli.add_command(mine_command)
cli.add_command(sweep_command)
cli.add_command(transcript_group)
drawer_group.add_command(delete_by_source_command)
cli.add_command(daemon_group)
cli.add_command(hooks_group)
cli.add_command(config_group)
# Governance part A: admission rulings and wing trust (issue 9). Operator surfaces, never MCP.
cli.add_command(admission_group)
cli.add_command(trust_group)
# Governance part B: forgetting, retention, the witness, anchor (issue 9). Operator surfaces, never MCP.
cli.add_command(forget_command)
cli.add_command(verify_forgetting_command)
cli.add_command(retention_group)
cli.add_command(witness_group)
cli.add_command(anchor_command)
cli.add_command(export_command)
cli.add_command(import_command)
cli.add_command(bundle_group)
# Memory surfaces (issue 8).
cli.add_command(kg_group)
cli.add_command(diary_group)
cli.add_command(tunnel_group)
cli.add_command(hallways_command)
cli.add_command(closets_command)
cli.add_command(wake_up_command)
cli.add_command(dedup_command)
drawer_group.add_command(check_dup_command)


def main() -> None:
    """Run the CLI (console-script entry point) and exit with the doctrine's code."""
    sys.exit(run_cli(cli))
