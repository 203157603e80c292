"""The store commands and the exit-code doctrine: 0 success, 1 run failure, 2 integrity verdict."""

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
    return palace


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    code = run_cli(cli, list(args))
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def test_lifecycle_and_drawers(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "init")[0] == 0
    code, out, _ = _run(capsys, "remember", "We chose GraphQL", "--wing", "backend", "--room", "decisions")
    assert code == 0 and out.startswith("created: drawer_")
    drawer_id = out.split()[1]
    code, out, _ = _run(capsys, "drawer", "get", drawer_id, "--json")
    assert code == 0 and json.loads(out)["content"] == "We chose GraphQL"
    code, out, _ = _run(capsys, "drawer", "list", "--json")
    assert [d["id"] for d in json.loads(out)] == [drawer_id]
    code, out, _ = _run(capsys, "stats", "--json")
    stats = json.loads(out)
    assert (stats["drawers"], stats["chain_records"], stats["writes"], stats["wings"]) == (1, 1, 1, {"backend": 1})
    code, out, _ = _run(capsys, "verify")
    assert code == 0 and out.rstrip().endswith("VERIFY OK")
    assert _run(capsys, "drawer", "delete", drawer_id)[0] == 0
    assert _run(capsys, "drawer", "get", drawer_id)[0] == 1
    assert _run(capsys, "vault", "create", "work", "--level", "hmac-only")[0] == 0
    code, out, _ = _run(capsys, "vault", "list", "--json")
    assert json.loads(out) == ["default", "work"]
    assert _run(capsys, "vault", "status", "work")[0] == 0
    assert _run(capsys, "vault", "delete", "work")[0] == 1  # needs --yes
    assert _run(capsys, "vault", "delete", "work", "--yes")[0] == 0


@pytest.mark.parametrize(
    "args",
    [
        ("bogus",),
        ("drawer", "get", "not-an-id"),
        ("remember", "x", "--vault", "missing"),
        ("vault", "create", "../escape"),
        ("stats", "--vault", "missing"),
        ("drawer", "list", "--limit", "0"),
    ],
)
def test_run_failures_exit_1(home: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...]) -> None:
    _run(capsys, "init")
    assert _run(capsys, *args)[0] == 1


def test_integrity_verdicts_exit_2_on_every_command(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(capsys, "init")
    code, out, _ = _run(capsys, "remember", "secret words")
    drawer_id = out.split()[1]
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as raw:
        raw.execute("UPDATE drawers SET tag = zeroblob(32)")
    assert _run(capsys, "drawer", "get", drawer_id)[0] == 2
    code, out, _ = _run(capsys, "verify")
    assert code == 2 and f"TAMPERED: {drawer_id}" in out and "VERIFY FAILED" in out
    manifest = home / "vaults" / "default" / "vault.json"
    manifest.write_text(manifest.read_text().replace('"count": 1', '"count": 7'))
    for args in (("stats",), ("verify",), ("drawer", "list"), ("remember", "more")):
        code, _, err = _run(capsys, *args)
        assert code == 2, args
        assert "integrity" in err


def test_taxonomy_counts_wings_and_rooms_and_never_content(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _run(capsys, "init")
    for text, wing, room in [
        ("alpha words", "backend", "decisions"),
        ("beta words", "backend", "decisions"),
        ("gamma words", "backend", "incidents"),
        ("delta words", "life", "car"),
    ]:
        assert _run(capsys, "remember", text, "--wing", wing, "--room", room)[0] == 0
    code, out, _ = _run(capsys, "taxonomy", "--json")
    assert code == 0
    assert json.loads(out) == {
        "taxonomy": {"backend": {"decisions": 2, "incidents": 1}, "life": {"car": 1}},
        "quarantined": 0,
    }
    code, out, _ = _run(capsys, "taxonomy")
    assert code == 0 and "backend  (3)" in out and "  incidents: 1" in out
    assert "words" not in out
    assert _run(capsys, "taxonomy", "--vault", "missing")[0] == 1
