"""`vault rotate`, `backup create|list|restore` and `repair`, with the 0/1/2 exit-code doctrine."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from undercroft_cli._internal.exit_codes import run_cli
from undercroft_cli.main import cli


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    palace = tmp_path / "palace"
    monkeypatch.setenv("UNDERCROFT_HOME", str(palace))
    monkeypatch.delenv("UNDERCROFT_PASSPHRASE", raising=False)
    monkeypatch.delenv("UNDERCROFT_EMBEDDER", raising=False)
    monkeypatch.delenv("UNDERCROFT_FORCE_EMBEDDER", raising=False)
    return palace


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_cli(cli, list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def _tamper(home: Path) -> None:
    raw = sqlite3.connect(home / "vaults" / "default" / "vault.db", isolation_level=None)
    raw.execute("UPDATE drawers SET tag = zeroblob(32)")
    raw.close()


def test_rotate(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(capsys, "init")
    _run(capsys, "remember", "We chose GraphQL")
    code, out, _ = _run(capsys, "vault", "rotate", "default")
    assert code == 0 and "key generation:     1 -> 2" in out and "ROTATED" in out
    code, out, _ = _run(capsys, "verify")
    assert code == 0 and out.rstrip().endswith("VERIFY OK")
    assert _run(capsys, "vault", "rotate", "missing")[0] == 1
    _tamper(home)
    code, _, err = _run(capsys, "vault", "rotate", "default")
    assert code == 2 and "rotation refused" in err


def test_backup_create_list_restore(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(capsys, "init")
    _run(capsys, "remember", "first note")
    code, out, _ = _run(capsys, "backup", "create")
    assert code == 0 and out.startswith("backup ")
    backup_id = out.split()[1]
    code, out, _ = _run(capsys, "backup", "list", "--json")
    assert [b["id"] for b in json.loads(out)] == [backup_id]
    _run(capsys, "remember", "second note")
    code, out, _ = _run(capsys, "backup", "restore", backup_id)
    assert code == 0 and "VERIFY OK" in out
    code, out, _ = _run(capsys, "stats", "--json")
    assert json.loads(out)["drawers"] == 1
    assert _run(capsys, "backup", "restore", "19990101T000000000000Z")[0] == 1
    _tamper(home)
    code, _, err = _run(capsys, "backup", "create")
    assert code == 2 and "nothing was archived" in err


def test_repair(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(capsys, "init")
    _run(capsys, "remember", "a note")
    raw = sqlite3.connect(home / "vaults" / "default" / "vault.db", isolation_level=None)
    raw.execute("UPDATE drawers SET embedding = zeroblob(0)")
    raw.close()
    code, out, err = _run(capsys, "repair", "--json")
    report = json.loads(out)
    assert code == 0 and report["embeddings_backfilled"] == 1 and report["verify_ok"] is True
    assert err == ""  # no progress output when stdout is not a TTY
    _tamper(home)
    code, out, _ = _run(capsys, "repair")
    assert code == 2 and "VERIFY FAILED" in out
    assert _run(capsys, "repair", "--vault", "missing")[0] == 1
