"""``undercroft mcp``: the host configuration, with the absolute program path and UNDERCROFT_HOME in every snippet."""

from __future__ import annotations

import json
import os
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner
from undercroft_cli._internal.exit_codes import run_cli
from undercroft_cli.commands.mcp_config import ProgramNotFound, program_path
from undercroft_cli.main import cli


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in [n for n in os.environ if n.startswith("UNDERCROFT_")]:
        monkeypatch.delenv(name)
    palace = tmp_path / "palace"
    monkeypatch.setenv("UNDERCROFT_HOME", str(palace))
    return palace


def _run(*args: str) -> str:
    result = CliRunner().invoke(cli, ["mcp", *args])
    assert result.exit_code == 0, result.output
    return result.output


def test_every_client_gets_the_absolute_program_and_home(home: Path) -> None:
    out = _run()
    program = str(program_path())
    assert Path(program).is_absolute() and Path(program).is_file()
    for heading in ("# Claude Code", "# Claude Desktop", "# Cursor", "# Any other MCP client"):
        assert heading in out
    assert out.count(f'"command": "{program}"') == 4 and out.count(f'"UNDERCROFT_HOME": "{home}"') == 4
    assert '"type": "stdio"' in out  # .mcp.json's shape for Claude Code


def test_the_claude_line_parses_to_the_server_s_own_command(home: Path) -> None:
    line = next(row for row in _run("--client", "claude-code").splitlines() if row.startswith("claude mcp add"))
    words = shlex.split(line)
    assert words[:4] == ["claude", "mcp", "add", "undercroft"]
    assert words[words.index("--env") + 1] == f"UNDERCROFT_HOME={home}"
    assert words[words.index("--") + 1 :] == [str(program_path()), "serve-mcp"]


def test_read_only_and_vault_variants_reach_the_server_arguments(home: Path) -> None:
    launch = json.loads(_run("--json", "--read-only", "--vault", "work"))
    assert launch["name"] == "undercroft-work-read-only"
    assert launch["args"] == ["serve-mcp", "--vault", "work", "--read-only"]
    assert launch["env"] == {"UNDERCROFT_HOME": str(home)}
    assert launch["claude_mcp_add"].endswith("serve-mcp --vault work --read-only")
    only = _run("--client", "cursor")
    assert "# Cursor" in only and "# Claude" not in only


def test_a_bad_vault_name_is_a_run_failure_naming_the_option(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(cli, ["mcp", "--vault", "../x"]) == 1  # never 2: that is a verdict
    said = capsys.readouterr().err
    assert "--vault" in said and "path separator" in said, said


def test_an_uninitialised_home_gets_a_note_saying_what_to_run(home: Path) -> None:
    result = CliRunner().invoke(cli, ["mcp", "--client", "generic"])
    assert result.exit_code == 0 and "run `undercroft init`" in result.stderr


def test_a_vault_the_palace_does_not_hold_gets_a_note_saying_what_to_run(home: Path) -> None:
    assert run_cli(cli, ["init"]) == 0
    quiet = CliRunner().invoke(cli, ["mcp", "--client", "generic"])
    assert quiet.exit_code == 0 and quiet.stderr == ""  # the default vault exists: nothing to say
    result = CliRunner().invoke(cli, ["mcp", "--client", "generic", "--vault", "work"])
    assert result.exit_code == 0 and "no vault named 'work'" in result.stderr
    assert "run `undercroft vault create work`" in result.stderr
    assert run_cli(cli, ["vault", "create", "work"]) == 0
    assert CliRunner().invoke(cli, ["mcp", "--client", "generic", "--vault", "work"]).stderr == ""


def test_the_program_is_found_beside_the_interpreter_or_the_error_says_how_to_install(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    shim = tmp_path / "undercroft"
    shim.write_text("#!/bin/sh\n")
    assert program_path(str(shim)) == shim  # the invoked program itself, absolute, symlinks kept
    monkeypatch.setattr("undercroft_cli._internal.program.sys.executable", str(tmp_path / "nowhere" / "python"))
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    with pytest.raises(ProgramNotFound, match="uv tool install"):
        program_path(str(tmp_path / "python"))
