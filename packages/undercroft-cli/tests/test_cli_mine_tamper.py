"""Re-mining over a drawer row tampered on disk is an integrity verdict (exit 2), never "unchanged".

The tamper is a byte flipped with sqlite3 in the mined drawer's content, tag or meta; the re-run of
``undercroft mine`` over the same file (unchanged, or edited) must exit 2, name the fix, and leave the
tampered row, the audit trail and the chain exactly as they were (the evidence the runbook preserves).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from .conftest import init_home, run_in_process


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_undercroft_env: None) -> Path:
    return init_home(monkeypatch, tmp_path / "palace")


def _db(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / "default" / "vault.db")


def _state(home: Path) -> tuple[object, ...]:
    with _db(home) as db:
        return (
            db.execute("SELECT * FROM drawers ORDER BY seq").fetchall(),
            db.execute("SELECT * FROM audit ORDER BY seq").fetchall(),
            db.execute("SELECT head, height FROM chain_meta").fetchone(),
        )


def _flip(home: Path, column: str) -> str:
    with _db(home) as db:
        [(drawer_id, value)] = db.execute(f"SELECT id, {column} FROM drawers").fetchall()
        blob = bytes(value)
        # Meta: flip a letter of the room's value, so the JSON still parses and only the tag can tell.
        clear = column == "meta_json" and blob.startswith(b"{")  # a sealed vault's meta is a sealed blob
        at = blob.index(b'"room":"general"') + len(b'"room":"') if clear else len(blob) // 2
        flipped = blob[:at] + bytes([blob[at] ^ 0x01]) + blob[at + 1 :]
        db.execute(f"UPDATE drawers SET {column} = ? WHERE id = ?", (flipped, drawer_id))
    return str(drawer_id)


@pytest.mark.parametrize("column", ["content", "tag", "meta_json"])
@pytest.mark.parametrize("edited", [False, True], ids=["same-file", "edited-file"])
def test_re_mining_over_a_tampered_row_exits_2_and_writes_nothing(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], column: str, edited: bool
) -> None:
    root = tmp_path / "notes"
    root.mkdir()
    source = root / "decisions.md"
    source.write_text("We chose GraphQL over REST.\n\nTyped schemas won the argument.\n")
    assert run_in_process(capsys, "mine", str(root))[0] == 0
    drawer_id = _flip(home, column)
    before = _state(home)
    if edited:
        source.write_text("We chose GraphQL over REST.\n\nTyped schemas and tooling won.\n")
    code, out, err = run_in_process(capsys, "mine", str(root))
    assert code == 2, (out, err)
    assert f"integrity: record {drawer_id} in vault 'default' fails its HMAC tag" in err
    assert "`undercroft verify` names the tampered record(s)" in err and "restore from backup" in err
    assert "unchanged 1" not in out
    assert _state(home) == before
    code, out, _ = run_in_process(capsys, "verify")
    assert code == 2 and f"TAMPERED: {drawer_id}" in out
