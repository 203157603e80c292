"""Where the running ``undercroft`` program lives: the absolute path a host or a hook should start."""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from undercroft_cli.errors import Error

__all__ = ["ProgramNotFound", "program_path"]


class ProgramNotFound(Error):
    """No ``undercroft`` executable could be located to name in the configuration."""


def program_path(argv0: str | None = None) -> Path:
    """The absolute path of the running ``undercroft`` program (the one the host should start)."""
    invoked = Path(argv0 if argv0 is not None else sys.argv[0])
    if invoked.name.startswith("undercroft") and invoked.is_file():
        return invoked.absolute()  # absolute, not resolved: a `uv tool` / pipx shim stays valid across upgrades
    beside = Path(sys.executable).parent / "undercroft"
    if beside.is_file():
        return beside.absolute()
    found = shutil.which("undercroft")
    if found is None:
        raise ProgramNotFound(
            "cannot find the undercroft program to name in the configuration: install it with "
            "`uv tool install ./packages/undercroft-cli` (see the README) and run `undercroft mcp` again"
        )
    return Path(found).absolute()
