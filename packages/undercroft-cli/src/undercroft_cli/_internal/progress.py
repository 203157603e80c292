"""Progress bars for long CLI work: a click bar on a terminal, silent when stdout is not a TTY."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager

import click

from undercroft_cli._internal.meter import Progress, Silent

__all__ = ["Progress", "progress"]


def _is_terminal() -> bool:
    try:
        return sys.stdout.isatty()
    except (AttributeError, ValueError):  # a closed or replaced stream is not a terminal
        return False


@contextmanager
def progress(length: int, label: str, *, enabled: bool | None = None) -> Iterator[Progress]:
    """A bar of ``length`` steps labelled ``label``; ``enabled=None`` means "only on a terminal".

    The bar draws on stderr so a terminal user sees it while stdout stays the command's result.
    """
    show = _is_terminal() if enabled is None else enabled
    if not show or length <= 0:
        yield Silent()
        return
    with click.progressbar(length=length, label=label, file=sys.stderr) as bar:
        yield bar
