"""The `undercroft` program's entry point."""

from __future__ import annotations

import click

from undercroft_cli import __version__

__all__ = ["cli", "main"]


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, prog_name="undercroft")
def cli() -> None:
    """Undercroft: hardened, local-first memory for AI agents.

    Verbatim drawers in encrypted, integrity-verified vaults, found again by hybrid search.
    """


def main() -> None:
    """Run the CLI (console-script entry point)."""
    cli()
