"""``daemon run``: a periodic, idempotent sweep (``--once`` for scripts; the loop with an injected sleep)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from undercroft_cli._internal.exit_codes import run_cli
from undercroft_cli.commands.daemon import run_daemon
from undercroft_cli.main import cli

SESSION = Path(__file__).parent / "fixtures" / "mining" / "convos" / "claude-code" / "session.jsonl"


@pytest.fixture
def watch(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in [n for n in os.environ if n.startswith("UNDERCROFT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("UNDERCROFT_HOME", str(tmp_path / "palace"))
    assert run_cli(cli, ["init"]) == 0
    root = tmp_path / "projects" / "p"
    root.mkdir(parents=True)
    shutil.copy(SESSION, root / "s.jsonl")
    return root.parent


def test_once_sweeps_and_exits(watch: Path, capsys: pytest.CaptureFixture[str]) -> None:
    capsys.readouterr()
    assert run_cli(cli, ["daemon", "run", "--watch", str(watch), "--once", "--wing", "claude-code"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("sweep 1: created ") and "unchanged 0" in out
    assert run_cli(cli, ["drawer", "list", "--json", "--wing", "claude-code"]) == 0
    assert len(json.loads(capsys.readouterr().out)) >= 2


def test_loop_sleeps_between_passes_and_files_nothing_twice(watch: Path) -> None:
    lines: list[str] = []
    sleeps: list[float] = []
    passes = run_daemon(
        watch, "default", wing="claude-code", interval=5.0, passes=3, sleep=sleeps.append, say=lines.append
    )
    assert passes == 3 and sleeps == [5.0, 5.0]
    assert "created 0" not in lines[0] and all("created 0," in line for line in lines[1:])


def test_a_vanished_directory_is_waited_for(tmp_path: Path) -> None:
    lines: list[str] = []
    run_daemon(tmp_path / "gone", "default", wing=None, interval=1.0, passes=1, sleep=lambda _: None, say=lines.append)
    assert lines == [f"sweep 1: {tmp_path / 'gone'} is not a directory; waiting"]


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("--watch", "{missing}", "--once"), "no such directory"),
        (("--interval", "0", "--once"), "0.1"),
    ],
)
def test_bad_arguments_exit_1(
    watch: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], expected: str
) -> None:
    capsys.readouterr()
    code = run_cli(cli, ["daemon", "run", *(a.format(missing=tmp_path / "missing") for a in args)])
    assert code == 1 and expected in capsys.readouterr().err


def test_the_daemon_and_the_hook_file_into_one_wing_so_no_message_twice(
    watch: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import shlex

    from undercroft_cli.commands.hooks import claude_code_settings

    assert run_cli(cli, ["daemon", "run", "--watch", str(watch), "--once"]) == 0  # no --wing: the default
    hooks = claude_code_settings(projects=str(watch), vault="default")["hooks"]
    command = hooks["Stop"][0]["hooks"][0]["command"]  # type: ignore[index]
    argv = shlex.split(command.removesuffix(" >/dev/null"))[1:]  # the hook's own sweep, as it would run
    capsys.readouterr()
    assert run_cli(cli, argv) == 0
    assert "created 0," in capsys.readouterr().out  # every message was already filed, by the daemon
    assert run_cli(cli, ["drawer", "list", "--json", "--limit", "1000"]) == 0
    assert {d["wing"] for d in json.loads(capsys.readouterr().out)} == {"claude-code"}
