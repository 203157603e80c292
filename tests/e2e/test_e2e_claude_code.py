"""End to end: the printed ``claude mcp add`` line, run by a real Claude Code, yields a connected server.

Issue 18's "done when": from a fresh home, ``undercroft init`` then ``undercroft mcp`` prints the ``claude mcp
add …`` line; this test parses that line out of the output (it is never hand-written here), runs it with the
official ``@anthropic-ai/claude-code`` CLI (pinned in ``claude_code/package-lock.json``), then asks ``claude
mcp list``, which spawns every configured server and runs its MCP ``initialize`` handshake, to report it. The
``--read-only`` variant is registered the same way, and a server that cannot start (``/bin/false``) is
registered beside them as the control: ``claude mcp list`` must say it failed, so a "Connected" is a verdict
and not a banner. The Claude Code plugin (``plugins/claude-code``) is checked by the same program: ``claude
plugin validate`` passes it, and loaded with ``--plugin-dir`` its server (``undercroft`` from PATH, as the
plugin's README asks) is reported connected and its Stop and PreCompact hooks listed.

Claude Code's state goes to a temporary directory: ``HOME`` and ``CLAUDE_CONFIG_DIR`` point there, and no
``ANTHROPIC_*`` or ``CLAUDE_*`` variable of the caller's is passed on. No API key is given: registration and
the health check are local, and every ``claude`` command runs in a network namespace with nothing but
loopback where one can be made (required under CI). The package, its pinning and what a missing one does
under CI: ``tests/claude_code_cli.py``. ``test_e2e_install.py`` runs the same line from the README's
``uv tool install`` program. Cost: ~5 s (``claude mcp list`` starts three servers).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from claude_code_cli import PINNED, claude_env, offline_prefix, printed_claude_line, require_claude_code, run

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugins" / "claude-code"
PROGRAM = Path(sys.executable).parent / "undercroft"


def test_the_printed_claude_mcp_add_line_gives_a_connected_server_in_real_claude_code(tmp_path: Path) -> None:
    claude = require_claude_code()
    offline = offline_prefix()
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = claude_env(home)

    version = run([str(claude), "--version"], env, project)
    assert version.returncode == 0 and version.stdout.startswith(PINNED), (version.stdout, version.stderr)

    initialised = run([str(PROGRAM), "init"], env, project)
    assert initialised.returncode == 0, initialised.stderr
    palace = home / ".undercroft"
    assert (palace / "master.key").exists(), "a fresh home's palace is ~/.undercroft"

    lines = {
        "undercroft": printed_claude_line(PROGRAM, env, project),
        "undercroft-read-only": printed_claude_line(PROGRAM, env, project, "--read-only"),
    }
    for name, argv in lines.items():
        assert argv[:4] == ["claude", "mcp", "add", name], argv
        assert f"UNDERCROFT_HOME={palace}" in argv and str(PROGRAM) in argv, argv
        added = run([*offline, str(claude), *argv[1:]], env, project)
        assert added.returncode == 0, (added.stdout, added.stderr)
    control = ["mcp", "add", "cannot-start", "--transport", "stdio", "--scope", "user", "--", "/bin/false"]
    assert run([*offline, str(claude), *control], env, project).returncode == 0

    # The config Claude Code wrote is in the temporary directory, with the palace and the program as printed.
    config = json.loads((home / ".claude" / ".claude.json").read_text())
    registered = config["mcpServers"]
    assert registered["undercroft"]["command"] == str(PROGRAM)
    assert registered["undercroft"]["args"] == ["serve-mcp"]
    assert registered["undercroft"]["env"] == {"UNDERCROFT_HOME": str(palace)}
    assert registered["undercroft-read-only"]["args"] == ["serve-mcp", "--read-only"]

    listed = run([*offline, str(claude), "mcp", "list"], env, project)
    assert listed.returncode == 0, (listed.stdout, listed.stderr)
    status = {line.split(":", 1)[0]: line for line in listed.stdout.splitlines() if line.split(":", 1)[0] in registered}
    assert set(status) == {"undercroft", "undercroft-read-only", "cannot-start"}, listed.stdout
    assert "Connected" not in status["cannot-start"], listed.stdout
    assert "Connected" in status["undercroft"] and "Failed" not in status["undercroft"], listed.stdout
    assert "Connected" in status["undercroft-read-only"], listed.stdout


def test_real_claude_code_validates_the_plugin_and_connects_its_server(tmp_path: Path) -> None:
    claude = require_claude_code()
    offline = offline_prefix()
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = claude_env(home)
    env["PATH"] = os.pathsep.join([str(PROGRAM.parent), env.get("PATH", "")])  # the plugin starts `undercroft`
    assert run([str(PROGRAM), "init"], env, project).returncode == 0

    validated = run([*offline, str(claude), "plugin", "validate", str(PLUGIN)], env, project)
    assert validated.returncode == 0, (validated.stdout, validated.stderr)
    assert "Validation passed" in validated.stdout, validated.stdout
    provided = [line.strip() for line in validated.stdout.splitlines() if line.strip().startswith("❯ ")]
    assert any(line.startswith("❯ mcpServers: undercroft stdio undercroft") for line in provided), provided
    for event in ("Stop", "PreCompact"):
        assert any(line.startswith(f"❯ hooks: {event} ") and "undercroft sweep" in line for line in provided), provided

    listed = run([*offline, str(claude), "--plugin-dir", str(PLUGIN), "mcp", "list"], env, project)
    assert listed.returncode == 0, (listed.stdout, listed.stderr)
    [server] = [line for line in listed.stdout.splitlines() if line.startswith("plugin:undercroft:undercroft:")]
    assert "Connected" in server and "Failed" not in server, listed.stdout
