"""``undercroft repair``: backfill, re-embed, vacuum and re-verify in one run (exit 2 when verify fails)."""

from __future__ import annotations

import json
import sys

import click
from undercroft_store import DEFAULT_VAULT
from undercroft_store.integrity.repair import Progress

from undercroft_cli._internal.composition import attach_reranker, open_palace, pick_reranker, vault_embedder
from undercroft_cli._internal.exit_codes import EXIT_INTEGRITY, EXIT_OK
from undercroft_cli.operations.repair import repair

__all__ = ["repair_command", "terminal_progress"]


def terminal_progress() -> Progress:
    """Progress on stderr (stdout keeps the report, so ``--json`` stays parseable).

    On a terminal, one line rewritten in place for every step; otherwise (a log, a pipe, a supervisor) one
    line per batch of a model swap's re-embed — the step that takes minutes — and nothing for the rest (a
    backfill or a check is quick and stays quiet).
    """
    interactive = sys.stderr.isatty()

    def show(step: str, done: int, total: int) -> None:
        if interactive:
            click.echo(f"\r{step}: {done}/{total}", nl=done >= total, err=True)
        elif step == "reembed":
            click.echo(f"repair: re-embedded {done}/{total}", err=True)
        elif step == "tokens":
            click.echo(f"repair: token matrices {done}/{total}", err=True)

    return show


@click.command("repair")
@click.option("--vault", default=DEFAULT_VAULT, show_default=True)
@click.option(
    "--tokens",
    is_flag=True,
    help="Also build every missing or stale token matrix of the late stage (UNDERCROFT_RERANKER=colbert|colbert-ort).",
)
@click.option("--json", "as_json", is_flag=True)
def repair_command(vault: str, tokens: bool, as_json: bool) -> int:
    """Backfill embeddings, fingerprints and FTS rows; re-embed a forced embedder swap; vacuum; verify."""
    pick_reranker()  # a declared-but-unusable stage refuses before the vault opens
    with open_palace() as palace:
        embedder = vault_embedder(palace, vault)
        report = repair(
            palace,
            vault,
            embedder,
            surface="cli",
            tokens=tokens,
            prepare=attach_reranker,
            progress=terminal_progress(),
        )
    click.echo(json.dumps(report.to_dict()) if as_json else report.render())
    return EXIT_OK if report.ok else EXIT_INTEGRITY
