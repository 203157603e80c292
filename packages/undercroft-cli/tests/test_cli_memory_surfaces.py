"""The memory-surface commands end to end: kg, diary, tunnel, hallways, closets, wake-up, dedup, check-dup."""

from __future__ import annotations

import json
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


def _run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = run_cli(cli, list(args))
    return code, capsys.readouterr().out


def test_kg_commands(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "init")[0] == 0
    code, out = _run(capsys, "remember", "Max joined Acme in 2020.", "--wing", "people", "--room", "max")
    drawer_id = out.split()[1]
    code, out = _run(
        capsys,
        "kg",
        "add",
        "Max",
        "works at",
        "Acme",
        "--valid-from",
        "2020-01-01",
        "--source",
        drawer_id,
        "--span",
        "0:15",
        "--grounding",
        "stated",
    )
    assert code == 0 and out.startswith("added: fact_")
    fact_id = out.split()[1]
    code, out = _run(capsys, "kg", "supersede", fact_id, "Globex", "--at", "2024-02-01")
    assert code == 0 and out.startswith("closed: ")
    new_id = out.split()[3]
    code, out = _run(capsys, "kg", "query", "Max", "--as-of", "2021-06-01", "--json")
    assert [f["object"] for f in json.loads(out)["facts"]] == ["Acme"]
    code, out = _run(capsys, "kg", "timeline", "Max")
    assert out.count("fact_") == 2
    code, out = _run(capsys, "kg", "rel", "works at", "--as-of", "2024-03-01", "--json")
    assert [f["object"] for f in json.loads(out)["facts"]] == ["Globex"]
    code, out = _run(capsys, "kg", "stats")
    assert json.loads(out) == {"entities": 3, "facts": 2, "active": 1, "closed": 1, "predicates": 1}
    code, out = _run(capsys, "kg", "receipts")
    assert code == 0 and "verified" in out
    assert _run(capsys, "kg", "receipts", "--integrity-only")[1].strip() == '{"ok": true, "checked": 2}'
    assert _run(capsys, "kg", "canonical", "max-employer")[0] == 1
    code, out = _run(
        capsys, "kg", "authority", new_id, "--class", "golden", "--review", "approved", "--key", "max-employer"
    )
    assert code == 0
    code, out = _run(capsys, "kg", "canonical", "max-employer", "--json")
    assert code == 0 and json.loads(out)["facts"][0]["object"] == "Globex"
    code, out = _run(capsys, "kg", "invalidate", new_id)
    assert code == 0 and out.startswith("closed: ")
    assert _run(capsys, "verify")[0] == 0


def test_memory_commands(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert _run(capsys, "init")[0] == 0
    (home / "identity.txt").write_text("I am Atlas.", encoding="utf-8")
    for _ in range(2):
        _run(
            capsys,
            "remember",
            "Alice and Bob chose Postgres.",
            "--wing",
            "backend",
            "--room",
            "db",
            "--kind",
            "decision",
        )
    _run(capsys, "remember", "UI work with Alice and Bob.", "--wing", "frontend", "--room", "ui")
    code, out = _run(capsys, "diary", "write", "atlas", "Shipped the parser.")
    assert code == 0 and out.startswith("created: ")
    assert "Shipped the parser." in _run(capsys, "diary", "read", "atlas")[1]
    assert _run(capsys, "diary", "agents")[1].strip() == "atlas  1"
    code, out = _run(capsys, "tunnel", "create", "backend", "frontend", "serves")
    tunnel_id = out.split()[1]
    assert tunnel_id in _run(capsys, "tunnel", "list")[1]
    assert "UI work" in _run(capsys, "tunnel", "follow", tunnel_id)[1]
    assert "frontend" in _run(capsys, "tunnel", "traverse", "backend")[1]
    assert "Alice ↔ Bob" in _run(capsys, "hallways", "backend")[1]
    assert "## backend/db #01" in _run(capsys, "closets")[1]
    out = _run(capsys, "wake-up")[1]
    assert out.startswith("## L0 — identity\nI am Atlas.") and "decision" in out
    code, out = _run(capsys, "drawer", "check-dup", "Alice and Bob chose Postgres.")
    assert code == 0 and json.loads(out)["duplicate"] is True
    assert "dry run" in _run(capsys, "dedup")[1]
    assert "removed 1" in _run(capsys, "dedup", "--apply")[1]
    assert _run(capsys, "tunnel", "delete", tunnel_id)[0] == 0
    assert _run(capsys, "verify")[0] == 0
