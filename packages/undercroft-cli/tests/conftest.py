"""Shared helpers for the CLI's tests."""

from __future__ import annotations

import io
import os
from collections.abc import Callable
from contextlib import redirect_stderr, redirect_stdout
from pathlib import Path

import pytest

#: ``run("remember", "x")`` -> (exit code, stdout, stderr): the real command group, in process.
CliRun = Callable[..., tuple[int, str, str]]


@pytest.fixture
def clean_undercroft_env(monkeypatch: pytest.MonkeyPatch) -> None:
    """Every ``UNDERCROFT_*`` variable of the outer environment cleared for the test."""
    for name in [n for n in os.environ if n.startswith("UNDERCROFT_")]:
        monkeypatch.delenv(name)


def init_home(monkeypatch: pytest.MonkeyPatch, path: Path) -> Path:
    """Point ``UNDERCROFT_HOME`` at `path`, initialising a palace there unless one is present."""
    from undercroft_cli._internal.exit_codes import run_cli
    from undercroft_cli.main import cli

    monkeypatch.setenv("UNDERCROFT_HOME", str(path))
    if not (path / "vaults").exists():
        assert run_cli(cli, ["init"]) == 0
    return path


def run_in_process(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    """The real command group in process: (exit code, stdout, stderr) of this one call."""
    from undercroft_cli._internal.exit_codes import run_cli
    from undercroft_cli.main import cli

    capsys.readouterr()
    code = run_cli(cli, list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


@pytest.fixture
def fresh_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A palace home at ``tmp_path / "palace"`` with every other ``UNDERCROFT_*`` variable cleared."""
    for name in [n for n in os.environ if n.startswith("UNDERCROFT_")]:
        monkeypatch.delenv(name)
    palace = tmp_path / "palace"
    monkeypatch.setenv("UNDERCROFT_HOME", str(palace))
    return palace


@pytest.fixture
def cli_run(fresh_home: Path) -> CliRun:
    """Run the CLI in process over an initialised ``fresh_home``; returns (exit code, stdout, stderr)."""
    from undercroft_cli._internal.exit_codes import run_cli
    from undercroft_cli.main import cli

    def invoke(*args: str) -> tuple[int, str, str]:
        out, err = io.StringIO(), io.StringIO()
        with redirect_stdout(out), redirect_stderr(err):
            code = run_cli(cli, list(args))
        return code, out.getvalue(), err.getvalue()

    assert invoke("init")[0] == 0
    return invoke
