"""``hooks claude-code`` prints a settings fragment wiring Stop and PreCompact to an idempotent sweep."""

from __future__ import annotations

import json
import shlex

import pytest
from undercroft_cli._internal.exit_codes import run_cli
from undercroft_cli._internal.program import program_path
from undercroft_cli.main import cli


def _settings(capsys: pytest.CaptureFixture[str], *args: str) -> dict[str, dict[str, list[dict[str, object]]]]:
    assert run_cli(cli, ["hooks", "claude-code", *args]) == 0
    return dict(json.loads(capsys.readouterr().out))


def test_fragment_wires_stop_and_precompact_to_a_sweep(capsys: pytest.CaptureFixture[str]) -> None:
    settings = _settings(capsys)
    assert sorted(settings["hooks"]) == ["PreCompact", "Stop"]
    for event in ("Stop", "PreCompact"):
        [entry] = settings["hooks"][event]
        [hook] = entry["hooks"]  # type: ignore[misc]
        assert hook == {
            "type": "command",
            "command": f"{shlex.quote(str(program_path()))} sweep ~/.claude/projects --wing claude-code >/dev/null",
        }


def test_vault_and_paths_are_quoted_for_the_shell(capsys: pytest.CaptureFixture[str]) -> None:
    settings = _settings(
        capsys, "--vault", "work", "--projects", "/data/my projects", "--program", "/opt/u b/undercroft"
    )
    [entry] = settings["hooks"]["Stop"]
    command = entry["hooks"][0]["command"]  # type: ignore[index]
    assert command == "'/opt/u b/undercroft' sweep '/data/my projects' --wing claude-code --vault work >/dev/null"


def test_unknown_agent_tool_exits_1(capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(cli, ["hooks", "cursor"]) == 1
    assert "No such command 'cursor'" in capsys.readouterr().err


@pytest.mark.parametrize(("option", "value"), [("--wing", "a/b"), ("--vault", "../up")])
def test_a_fragment_that_could_never_run_is_refused(
    capsys: pytest.CaptureFixture[str], option: str, value: str
) -> None:
    assert run_cli(cli, ["hooks", "claude-code", option, value]) == 1
    assert "contains a path separator" in capsys.readouterr().err
