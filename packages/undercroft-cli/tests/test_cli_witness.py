"""``undercroft witness``: OK on an extension, exit 2 on an older db+manifest pair while verify is green."""

from __future__ import annotations

import shutil
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


def test_witness_rollback_is_exit_2_while_verify_is_green(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "init")[0] == 0
    assert _run(capsys, "remember", "first", "--wing", "w", "--room", "r")[0] == 0
    vault = home / "palace" / "vaults" / "default"
    old = home / "old"
    old.mkdir()
    for name in ("vault.db", "vault.json"):
        shutil.copy2(vault / name, old / name)
    assert _run(capsys, "remember", "second", "--wing", "w", "--room", "r")[0] == 0
    witness = home / "witness.json"
    assert _run(capsys, "witness", "emit", "--out", str(witness))[0] == 0
    assert _run(capsys, "anchor")[0] == 0
    code, out, _ = _run(capsys, "witness", "check", str(witness))
    assert code == 0 and out.rstrip().endswith("WITNESS OK")
    for leftover in vault.glob("vault.db-*"):
        leftover.unlink()
    for name in ("vault.db", "vault.json"):
        shutil.copy2(old / name, vault / name)
    code, out, _ = _run(capsys, "verify")
    assert code == 0 and out.rstrip().endswith("VERIFY OK")
    code, _, err = _run(capsys, "witness", "check", str(witness))
    assert code == 2 and "rolled back or erased below the witnessed height" in err
