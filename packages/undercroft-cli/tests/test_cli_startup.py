"""Start-up: ``import undercroft_cli.main`` loads neither numpy nor the store, and the lazy table tells the truth."""

from __future__ import annotations

import json
import subprocess
import sys

import click
import pytest
from click.testing import CliRunner
from undercroft_cli.main import COMMANDS, cli

HEAVY = ("numpy", "undercroft_store", "undercroft_vault", "mcp", "undercroft_cli.commands", "undercroft_config")


def _loaded_after(code: str) -> list[str]:
    probe = f"import json, sys\n{code}\nprint(json.dumps(sorted(m for m in {HEAVY!r} if m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return list(json.loads(out.splitlines()[-1]))


def test_importing_the_entry_point_loads_neither_numpy_nor_the_store() -> None:
    assert _loaded_after("import undercroft_cli.main") == []


@pytest.mark.parametrize("flag", ["--version", "--help"])
def test_version_and_help_import_no_command_module(flag: str) -> None:
    code = (
        "import undercroft_cli.main as m\n"
        f"try:\n    m.cli.main([{flag!r}], prog_name='undercroft')\nexcept SystemExit:\n    pass"
    )
    assert _loaded_after(code) == []


def test_the_premise_running_a_command_does_load_the_store() -> None:
    code = (
        "import undercroft_cli.main as m\n"
        "try:\n    m.cli.main(['stats', '--help'], prog_name='undercroft')\nexcept SystemExit:\n    pass"
    )
    assert "undercroft_store" in _loaded_after(code)


def test_every_row_names_its_command_and_its_summary_is_the_command_s_own() -> None:
    names = [row.name for row in COMMANDS]
    assert len(names) == len(set(names))
    for row in COMMANDS:
        command = row.load()
        assert isinstance(command, click.Command) and command.name == row.name, row
        assert row.summary == command.get_short_help_str(limit=1000), row.name
    vault, drawer = (cli.get_command(click.Context(cli), name) for name in ("vault", "drawer"))
    assert isinstance(vault, click.Group) and "rotate" in vault.commands
    assert isinstance(drawer, click.Group) and {"delete-by-source", "check-dup"} <= set(drawer.commands)


def test_help_groups_everyday_and_operator_commands() -> None:
    listed = CliRunner().invoke(cli, ["--help"]).output
    everyday, operator = listed.index("Commands:"), listed.index("Operator commands:")
    assert everyday < listed.index("  search ") < operator < listed.index("  forget ")
    assert all(f"  {row.name} " in listed for row in COMMANDS)
