"""``undercroft retention``: set, list, sweep, clear; a written-back older row is exit 2."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from undercroft_cli._internal.exit_codes import run_cli
from undercroft_cli.main import cli


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("UNDERCROFT_HOME", str(tmp_path / "palace"))
    monkeypatch.delenv("UNDERCROFT_PASSPHRASE", raising=False)
    monkeypatch.delenv("UNDERCROFT_EMBEDDER", raising=False)
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_cli(cli, list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_retention_commands(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "init")[0] == 0
    assert _run(capsys, "remember", "fresh note", "--wing", "chat", "--room", "r")[0] == 0
    assert _run(capsys, "retention", "set", "chat", "--max-age", "1d")[0] == 0
    code, out, _ = _run(capsys, "retention", "list", "--json")
    assert code == 0 and json.loads(out)["policies"][0]["max_age_seconds"] == 86400
    code, out, _ = _run(capsys, "retention", "sweep")
    assert code == 0 and "forgot 0" in out and out.rstrip().endswith("SWEEP OK")
    code, _, err = _run(capsys, "retention", "set", "chat", "--max-age", "soon")
    assert code == 1 and "max age" in err
    db = home / "palace" / "vaults" / "default" / "vault.db"
    with sqlite3.connect(db, isolation_level=None) as raw:
        old = raw.execute("SELECT max_age_seconds, at, tag FROM retention_policy").fetchone()
    assert _run(capsys, "retention", "set", "chat", "--max-age", "30d")[0] == 0
    with sqlite3.connect(db, isolation_level=None) as raw:
        raw.execute("UPDATE retention_policy SET max_age_seconds = ?, at = ?, tag = ?", old)
    code, out, _ = _run(capsys, "retention", "list")
    assert code == 2 and "FAILED: retention/chat" in out
    code, out, _ = _run(capsys, "retention", "sweep")
    assert code == 2 and out.rstrip().endswith("SWEEP NOT OK")
    assert _run(capsys, "verify")[0] == 2
    assert _run(capsys, "retention", "clear", "chat")[0] == 0
