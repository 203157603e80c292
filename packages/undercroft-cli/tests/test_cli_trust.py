"""``undercroft trust set|list``: assignment, bad input (exit 1) and a flipped row (exit 2)."""

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
    monkeypatch.delenv("UNDERCROFT_TRUST_FLOOR", raising=False)
    return tmp_path


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_cli(cli, list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_set_list_and_tamper(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "init")[0] == 0
    code, out, _ = _run(capsys, "trust", "set", "scraped", "quarantined")
    assert code == 0 and out.startswith("trust scraped: quarantined")
    code, out, _ = _run(capsys, "trust", "list", "--json")
    assert code == 0 and [row["wing"] for row in json.loads(out)] == ["scraped"]
    assert _run(capsys, "trust", "list", "ops")[1].strip() == "trust ops: standard (unassigned)"
    code, _, err = _run(capsys, "trust", "set", "ops", "high")
    assert code == 1 and "unknown trust class 'high'" in err
    code, _, err = _run(capsys, "trust", "set", "quarantine-pending", "trusted")
    assert code == 1 and "review queue" in err
    with sqlite3.connect(home / "palace" / "vaults" / "default" / "vault.db") as connection:
        connection.execute("UPDATE wing_trust SET trust = 'trusted'")
    code, _, err = _run(capsys, "trust", "list")
    assert code == 2 and "fails its HMAC tag" in err and "undercroft verify" in err
    assert _run(capsys, "verify")[0] == 2
