"""The real Claude Code CLI for the e2e tests: the pinned package, an offline prefix, a fresh user's environment.

The official ``@anthropic-ai/claude-code`` package is pinned in ``tests/e2e/claude_code/package-lock.json`` and
installed by ``.ci/run`` (``npm ci``). Under CI (``CI`` set) a missing ``node`` or package FAILS the test that
asks for it, as the TypeScript SDK probe does; elsewhere it skips and says how to install. Where the kernel
lets this user make a network namespace (``unshare -rn``; root and most Linux users can), every ``claude``
command runs inside one with nothing but loopback, so the tests show it needs no network; under CI that
isolation is required.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
from pathlib import Path

import pytest

__all__ = ["CLAUDE", "PINNED", "claude_env", "offline_prefix", "printed_claude_line", "require_claude_code", "run"]

PACKAGE = Path(__file__).resolve().parent / "e2e" / "claude_code"
CLAUDE = PACKAGE / "node_modules" / ".bin" / "claude"
PINNED = json.loads((PACKAGE / "package.json").read_text())["dependencies"]["@anthropic-ai/claude-code"]


def require_claude_code() -> Path:
    """The pinned ``claude`` program (skips, or under CI fails, when it is not installed)."""
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


def offline_prefix() -> list[str]:
    """``unshare -rn`` when this user may make a network namespace: the commands then have no network."""
    unshare = shutil.which("unshare")
    if unshare is not None:
        tried = subprocess.run([unshare, "-rn", "true"], capture_output=True, timeout=30, check=False)
        if tried.returncode == 0:
            return [unshare, "-rn"]
    if os.environ.get("CI"):
        pytest.fail("under CI the Claude Code e2e runs without network: `unshare -rn` must work here")
    return []


def claude_env(home: Path, base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this environment) without its palace or Claude state: a new user's, in ``home``."""
    dropped = ("UNDERCROFT_", "ANTHROPIC_", "CLAUDE_", "XDG_")
    env = {k: v for k, v in (os.environ if base is None else base).items() if not k.startswith(dropped)}
    env.update({
        "HOME": str(home),
        "CLAUDE_CONFIG_DIR": str(home / ".claude"),
        # Belt and braces beside the namespace: no updater, no telemetry, no nonessential traffic.
        "DISABLE_AUTOUPDATER": "1",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
    })  # fmt: skip
    return env


def run(argv: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    """Run ``argv`` with no standard input (nothing may wait for a person), capturing its output."""
    return subprocess.run(
        argv, env=env, cwd=cwd, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL, check=False
    )


def printed_claude_line(program: Path, env: dict[str, str], cwd: Path, *flags: str) -> list[str]:
    """The one ``claude mcp add`` line ``program mcp`` prints, split as a shell would split it."""
    printed = run([str(program), "mcp", *flags], env, cwd)
    assert printed.returncode == 0, printed.stderr
    [line] = [each for each in printed.stdout.splitlines() if each.startswith("claude mcp add ")]
    return shlex.split(line)
