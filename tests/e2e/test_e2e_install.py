"""The README's install line: `uv tool install ./packages/undercroft-cli` puts a working `undercroft` on PATH.

Installed into a temporary tool directory (never the user's), the program runs from outside the clone, and
`undercroft mcp` names that installed program — the path a host will start. Then issue 18's "done when" as
written: the `claude mcp add …` line that installed program prints is run by the real Claude Code (the pinned
package, `tests/claude_code_cli.py`), in a fresh home and offline, and `claude mcp list` reports the server
connected.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from claude_code_cli import claude_env, offline_prefix, printed_claude_line, require_claude_code, run

ROOT = Path(__file__).resolve().parents[2]


def test_uv_tool_install_from_the_clone_gives_a_working_undercroft(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("UNDERCROFT_", "VIRTUAL_ENV"))}
    env |= {"UV_TOOL_DIR": str(tmp_path / "tools"), "UV_TOOL_BIN_DIR": str(tmp_path / "bin")}
    installed = subprocess.run(
        [sys.executable, "-m", "uv", "tool", "install", str(ROOT / "packages" / "undercroft-cli")],
        env=env, cwd=tmp_path, capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert installed.returncode == 0, installed.stderr
    program = tmp_path / "bin" / "undercroft"
    assert program.is_file()
    env["UNDERCROFT_HOME"] = str(tmp_path / "palace")
    for args in (["--version"], ["init"], ["remember", "The tool install works", "--wing", "t", "--room", "r"]):
        ran = subprocess.run([str(program), *args], env=env, cwd=tmp_path, capture_output=True, text=True, timeout=120)
        assert ran.returncode == 0, (args, ran.stderr)
    printed = subprocess.run([str(program), "mcp", "--json"], env=env, cwd=tmp_path, capture_output=True, text=True)
    launch = json.loads(printed.stdout)
    assert launch["command"] == str(program) and launch["env"] == {"UNDERCROFT_HOME": str(tmp_path / "palace")}

    # The printed line, in real Claude Code: a fresh home, the installed program, its server connected.
    claude = require_claude_code()
    offline = offline_prefix()
    user = tmp_path / "user"
    user.mkdir()
    fresh = claude_env(user, base=env) | {"UNDERCROFT_HOME": str(tmp_path / "palace")}
    line = printed_claude_line(program, fresh, tmp_path, "--client", "claude-code")
    added = run([*offline, str(claude), *line[1:]], fresh, tmp_path)
    assert added.returncode == 0, (added.stdout, added.stderr)
    listed = run([*offline, str(claude), "mcp", "list"], fresh, tmp_path)
    [server] = [each for each in listed.stdout.splitlines() if each.startswith("undercroft: ")]
    assert f"undercroft: {program} serve-mcp" in server and "Connected" in server, listed.stdout
