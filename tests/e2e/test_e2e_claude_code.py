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
the health check are local. Where the kernel lets this user make a network namespace (``unshare -rn``; root
and most Linux users can), both ``claude`` commands run inside one with no interface but loopback, so the
test shows they need no network. Under CI that isolation is required.

The package is installed by ``.ci/run`` (``npm ci`` in ``tests/e2e/claude_code``). Under CI (``CI`` set) a
missing ``node`` or package FAILS this test, as the TypeScript SDK probe does; elsewhere it skips and says how
to install. Cost: ~5 s (``claude mcp list`` starts three servers).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugins" / "claude-code"
PACKAGE = Path(__file__).resolve().parent / "claude_code"
CLAUDE = PACKAGE / "node_modules" / ".bin" / "claude"
PROGRAM = Path(sys.executable).parent / "undercroft"
PINNED = json.loads((PACKAGE / "package.json").read_text())["dependencies"]["@anthropic-ai/claude-code"]


def _require_claude_code() -> Path:
    missing = None
    if shutil.which("node") is None:
        missing = "node is not installed (npm installs the Claude Code package)"
    elif not CLAUDE.exists():
        missing = f"the Claude Code package is not installed: (cd {PACKAGE} && npm ci)"
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"under CI the Claude Code e2e must run: {missing}")
        pytest.skip(missing)
    return CLAUDE


def _offline_prefix() -> list[str]:
    """``unshare -rn`` when this user may make a network namespace: the commands then have no network."""
    unshare = shutil.which("unshare")
    if unshare is not None:
        tried = subprocess.run([unshare, "-rn", "true"], capture_output=True, timeout=30, check=False)
        if tried.returncode == 0:
            return [unshare, "-rn"]
    if os.environ.get("CI"):
        pytest.fail("under CI the Claude Code e2e runs without network: `unshare -rn` must work here")
    return []


def _fresh_env(home: Path) -> dict[str, str]:
    """The caller's environment without its palace or Claude state: a new user's, in ``home``."""
    dropped = ("UNDERCROFT_", "ANTHROPIC_", "CLAUDE_", "XDG_")
    env = {k: v for k, v in os.environ.items() if not k.startswith(dropped)}
    env.update({
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        # Belt and braces beside the namespace: no updater, no telemetry, no nonessential traffic.
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    })  # fmt: skip
    return env


def _run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False
    )


def _printed_claude_line(env: dict[str, str], cwd: Path, *flags: str) -> list[str]:
    """The one ``claude mcp add`` line ``undercroft mcp`` prints, split as a shell would split it."""
    printed = _run([str(PROGRAM), "mcp", *flags], env, cwd)
    assert printed.returncode == 0, printed.stderr
    [line] = [each for each in printed.stdout.splitlines() if each.startswith("claude mcp add ")]
    return shlex.split(line)


def test_the_printed_claude_mcp_add_line_gives_a_connected_server_in_real_claude_code(tmp_path: Path) -> None:
    claude = _require_claude_code()
    offline = _offline_prefix()
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = _fresh_env(home)

    version = _run([str(claude), "--version"], env, project)
    assert version.returncode == 0 and version.stdout.startswith(PINNED), (version.stdout, version.stderr)

    initialised = _run([str(PROGRAM), "init"], env, project)
    assert initialised.returncode == 0, initialised.stderr
    palace = home / ".undercroft"
    assert (palace / "master.key").exists(), "a fresh home's palace is ~/.undercroft"

    lines = {
        "undercroft": _printed_claude_line(env, project),
        "undercroft-read-only": _printed_claude_line(env, project, "--read-only"),
    }
    for name, argv in lines.items():
        assert argv[:4] == ["claude", "mcp", "add", name], argv
        assert f"UNDERCROFT_HOME={palace}" in argv and str(PROGRAM) in argv, argv
        added = _run([*offline, str(claude), *argv[1:]], env, project)
        assert added.returncode == 0, (added.stdout, added.stderr)
    control = ["mcp", "add", "cannot-start", "--transport", "stdio", "--scope", "user", "--", "/bin/false"]
    assert _run([*offline, str(claude), *control], env, project).returncode == 0

    # The config Claude Code wrote is in the temporary directory, with the palace and the program as printed.
    config = json.loads((home / ".claude" / ".claude.json").read_text())
    registered = config["mcpServers"]
    assert registered["undercroft"]["command"] == str(PROGRAM)
    assert registered["undercroft"]["args"] == ["serve-mcp"]
    assert registered["undercroft"]["env"] == {"UNDERCROFT_HOME": str(palace)}
    assert registered["undercroft-read-only"]["args"] == ["serve-mcp", "--read-only"]

    listed = _run([*offline, str(claude), "mcp", "list"], env, project)
    assert listed.returncode == 0, (listed.stdout, listed.stderr)
    status = {line.split(":", 1)[0]: line for line in listed.stdout.splitlines() if line.split(":", 1)[0] in registered}
    assert set(status) == {"undercroft", "undercroft-read-only", "cannot-start"}, listed.stdout
    assert "Connected" not in status["cannot-start"], listed.stdout
    assert "Connected" in status["undercroft"] and "Failed" not in status["undercroft"], listed.stdout
    assert "Connected" in status["undercroft-read-only"], listed.stdout


def test_real_claude_code_validates_the_plugin_and_connects_its_server(tmp_path: Path) -> None:
    claude = _require_claude_code()
    offline = _offline_prefix()
    home = tmp_path / "home"
    project = tmp_path / "project"
    home.mkdir()
    project.mkdir()
    env = _fresh_env(home)
    env["PATH"] = os.pathsep.join([str(PROGRAM.parent), env.get("PATH", "")])  # the plugin starts `undercroft`
    assert _run([str(PROGRAM), "init"], env, project).returncode == 0

    validated = _run([*offline, str(claude), "plugin", "validate", str(PLUGIN)], env, project)
    assert validated.returncode == 0, (validated.stdout, validated.stderr)
    assert "Validation passed" in validated.stdout, validated.stdout
    provided = [line.strip() for line in validated.stdout.splitlines() if line.strip().startswith("❯ ")]
    assert any(line.startswith("❯ mcpServers: undercroft stdio undercroft") for line in provided), provided
    for event in ("Stop", "PreCompact"):
        assert any(line.startswith(f"❯ hooks: {event} ") and "undercroft sweep" in line for line in provided), provided

    listed = _run([*offline, str(claude), "--plugin-dir", str(PLUGIN), "mcp", "list"], env, project)
    assert listed.returncode == 0, (listed.stdout, listed.stderr)
    [server] = [line for line in listed.stdout.splitlines() if line.startswith("plugin:undercroft:undercroft:")]
    assert "Connected" in server and "Failed" not in server, listed.stdout
