"""The program's doors: exit codes by the doctrine, pre-flight refusals, and bad input that changes nothing."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = Path(sys.executable).parent / "undercroft-orchestrator"
KEY = "cli-test-sealing-key-" + "z" * 22
ADMIN = "cli-test-admin-token-" + "y" * 8


def _run(tmp_path: Path, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
    base = {"PATH": "/usr/bin:/bin", "UNDERCROFT_HOME": str(tmp_path / "home")}
    base.update(UNDERCROFT_ORCH_DB=str(tmp_path / "state.db"), UNDERCROFT_ORCH_KEY=KEY)
    base.update(env)
    return subprocess.run([str(PROGRAM), *args], env=base, capture_output=True, text=True, timeout=60)


def test_usage_errors_exit_1_never_2(tmp_path: Path) -> None:
    assert _run(tmp_path).returncode == 0
    assert _run(tmp_path, "--version").stdout.startswith("undercroft-orchestrator ")
    for args in (("migrate", "acme"), ("nonsense",), ("tenant-repoint", "acme"), ("config", "fix")):
        done = _run(tmp_path, *args)
        assert done.returncode == 1, (args, done.stderr)
        assert "error:" in done.stderr


def test_keygen_lines_make_an_environment_that_starts(tmp_path: Path) -> None:
    lines = _run(tmp_path, "keygen").stdout.splitlines()
    assert [line.split("=")[0] for line in lines] == [
        "export UNDERCROFT_ORCH_KEY",
        "export UNDERCROFT_ORCH_ADMIN_TOKEN",
    ]
    values = {line.split("=", 1)[0].removeprefix("export "): line.split("=", 1)[1].strip("'") for line in lines}
    assert len(values["UNDERCROFT_ORCH_ADMIN_TOKEN"]) >= 16
    done = _run(tmp_path, "config", "check", **values)
    assert done.returncode == 0, done.stdout
    assert "would start" in done.stdout


@pytest.mark.parametrize(
    ("variable", "value", "words"),
    [
        ("UNDERCROFT_ORCH_RATE_LIMIT", "100/min", "UNDERCROFT_ORCH_RATE_LIMIT"),
        ("UNDERCROFT_ORCH_RATE_LIMIT", "1_000", "UNDERCROFT_ORCH_RATE_LIMIT"),
        ("UNDERCROFT_ORCH_ADMIN_TOKEN", "short", "16-character floor"),
        ("UNDERCROFT_ORCH_ADMIN_TOKEN", ADMIN + "\n", "whitespace"),
        ("UNDERCROFT_ORCH_METRICS_ADDR", "0.0.0.0:9464", "UNDERCROFT_ORCH_METRICS_TOKEN"),
        ("UNDERCROFT_ORCH_ENGINE_CA", "/nonexistent/ca.pem", "UNDERCROFT_ORCH_ENGINE_CA"),
    ],
)
def test_a_declaration_that_cannot_be_read_refuses_to_start(
    tmp_path: Path, variable: str, value: str, words: str
) -> None:
    env = {"UNDERCROFT_ORCH_ADMIN_TOKEN": ADMIN, variable: value}
    checked = _run(tmp_path, "config", "check", **env)
    assert checked.returncode == 1 and words in checked.stdout, checked.stdout
    served = _run(tmp_path, "serve", "--addr", "127.0.0.1:0", **env)
    assert served.returncode == 1 and words in served.stderr, served.stderr
    assert not (tmp_path / "state.db").exists()  # refused before anything was opened


def test_the_writer_needs_an_admin_token_and_a_key(tmp_path: Path) -> None:
    done = _run(tmp_path, "serve", "--addr", "127.0.0.1:0")
    assert done.returncode == 1 and "UNDERCROFT_ORCH_ADMIN_TOKEN is required" in done.stderr
    done = _run(tmp_path, "instance-list", UNDERCROFT_ORCH_KEY="")
    assert done.returncode == 1 and "UNDERCROFT_ORCH_KEY" in done.stderr


def test_a_cleartext_engine_beyond_loopback_is_refused_at_registration(tmp_path: Path) -> None:
    for url in ("http://engine.example.com:8800", "http://10.0.0.5:8800", "ftp://127.0.0.1:1", "https://u:p@h.example"):
        done = _run(tmp_path, "instance-add", "engine-a", url, "--bearer", "b" * 24)
        assert done.returncode == 1, (url, done.stderr)
        assert "instance 'engine-a' URL" in done.stderr, done.stderr
    assert _run(tmp_path, "instance-list", "--json").stdout.count('"name"') == 0
    assert _run(tmp_path, "instance-add", "Bad Name", "https://e.example").returncode == 1
    assert _run(tmp_path, "instance-add", "engine-a", "https://engine.example.com:8800").returncode == 0
    assert "https://engine.example.com:8800" in _run(tmp_path, "instance-list").stdout


def test_a_state_made_under_another_key_is_refused(tmp_path: Path) -> None:
    assert _run(tmp_path, "instance-add", "a", "http://127.0.0.1:9").returncode == 0
    done = _run(tmp_path, "instance-list", UNDERCROFT_ORCH_KEY="a-different-key-" + "q" * 20)
    assert done.returncode == 1 and "does not open the state database" in done.stderr


def test_unknown_operations_and_tenants_are_refused(tmp_path: Path) -> None:
    done = _run(tmp_path, "ops", "acme", "rotate")
    assert done.returncode == 1 and "unknown operation 'rotate'" in done.stderr
    done = _run(tmp_path, "ops", "acme", "verify")
    assert done.returncode == 1 and "no tenant 'acme'" in done.stderr
    done = _run(tmp_path, "tenant-create", "acme")
    assert done.returncode == 1 and "no instance is registered" in done.stderr
