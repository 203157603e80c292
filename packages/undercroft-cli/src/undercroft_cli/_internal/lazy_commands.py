"""A click group whose commands load on first use, so ``--version`` and ``--help`` import no command module.

Each command is a ``LazyCommand`` row: its name, the module and attribute that define it, its help section,
its one-line summary (what ``--help`` lists without importing anything), and the subcommands other modules
add to it. ``tests/test_cli_startup.py`` checks every row against the loaded command, so a summary cannot
drift from the command's own docstring.
"""

from __future__ import annotations

import importlib
from collections.abc import Sequence
from dataclasses import dataclass

import click

__all__ = ["LazyCommand", "LazyGroup"]


@dataclass(frozen=True)
class LazyCommand:
    """One top-level command, named where it is defined; ``extras`` are ``(module, attribute)`` subcommands.

    ``example`` is one invocation a newcomer can copy; it becomes the command's ``--help`` epilog.
    """

    name: str
    module: str
    attribute: str
    section: str
    summary: str
    extras: tuple[tuple[str, str], ...] = ()
    example: str = ""

    def load(self) -> click.Command:
        """Import the command's module and attach the subcommands defined elsewhere."""
        command = _attribute(self.module, self.attribute)
        if not isinstance(command, click.Command):
            raise TypeError(f"undercroft_cli.{self.module}.{self.attribute} is not a click command")
        if self.example and not command.epilog:  # `undercroft NAME --help` ends with one worked example
            command.epilog = f"\b\nExample:\n  {self.example}"
        if isinstance(command, click.Group):
            for module, attribute in self.extras:
                extra = _attribute(module, attribute)
                if isinstance(extra, click.Command) and extra.name not in command.commands:
                    command.add_command(extra)
        return command


def _clip(summary: str, limit: int) -> str:
    """The summary cut at a word boundary to ``limit`` characters, ``...`` marking the cut (click's look)."""
    if len(summary) <= limit:
        return summary
    return summary[: limit - 3].rsplit(" ", 1)[0].rstrip(",;:") + "..."


def _attribute(module: str, attribute: str) -> object:
    return getattr(importlib.import_module(f"undercroft_cli.{module}"), attribute)


class LazyGroup(click.Group):
    """A group over ``LazyCommand`` rows, listed in ``--help`` by section in the order given."""

    def __init__(self, *args: object, lazy: Sequence[LazyCommand] = (), sections: Sequence[str] = (), **kwargs: object):
        """Serve ``lazy`` (loaded on first use); ``sections`` orders the help headings."""
        super().__init__(*args, **kwargs)  # type: ignore[arg-type]
        self.lazy = {row.name: row for row in lazy}
        self.sections = tuple(sections)

    def list_commands(self, ctx: click.Context) -> list[str]:
        """Every command name, lazy ones included (in table order, then any added eagerly)."""
        return [*self.lazy, *(name for name in super().list_commands(ctx) if name not in self.lazy)]

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        """The named command, importing its module the first time it is asked for."""
        if cmd_name not in self.commands and cmd_name in self.lazy:
            self.add_command(self.lazy[cmd_name].load(), cmd_name)
        return super().get_command(ctx, cmd_name)

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        """The command list by section, from the table's summaries (nothing is imported to print help)."""
        width = formatter.width - 6 - max((len(name) for name in self.lazy), default=0)
        for section in self.sections:
            rows = [
                (row.name, _clip(row.summary, max(width, 45))) for row in self.lazy.values() if row.section == section
            ]
            if rows:
                with formatter.section(section):
                    formatter.write_dl(rows)
