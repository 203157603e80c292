"""``--json`` on the reporting commands (one stable shape each, docs/cli.md) and messages that say what to do."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import jsonschema
import pytest
from undercroft_cli._internal.exit_codes import run_cli
from undercroft_cli.main import cli
from undercroft_cli.operations import DRAWER_SCHEMA, WRITE_PROPERTIES

WORDS = "We chose GraphQL over REST for the mobile API"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in [n for n in os.environ if n.startswith("UNDERCROFT_")]:
        monkeypatch.delenv(name)
    palace = tmp_path / "palace"
    monkeypatch.setenv("UNDERCROFT_HOME", str(palace))
    return palace


def _json(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0) -> Any:
    capsys.readouterr()
    assert run_cli(cli, list(args)) == code
    return json.loads(capsys.readouterr().out)


def test_the_reporting_commands_print_their_documented_shapes(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(cli, ["init"]) == 0
    remembered = _json(capsys, "remember", WORDS, "--wing", "backend", "--room", "decisions", "--json")
    [row] = remembered["results"]
    jsonschema.validate(row, {"type": "object", "properties": WRITE_PROPERTIES, "required": list(WRITE_PROPERTIES)})
    assert row["outcome"] == "created" and row["wing"] == "backend"

    verified = _json(capsys, "verify", "--json")
    assert verified["ok"] is True and verified["vault"] == "default" and verified["records_checked"] >= 1
    assert verified["tampered"] == [] and verified["unhealed"] == []

    woken = _json(capsys, "wake-up", "--json")
    assert woken["identity"] is None and [d["id"] for d in woken["essentials"]] == [row["id"]]
    for drawer in woken["essentials"]:
        jsonschema.validate(drawer, DRAWER_SCHEMA)

    assert run_cli(cli, ["diary", "write", "claude", "Worked on the API."]) == 0
    assert _json(capsys, "diary", "agents", "--json") == {"agents": {"claude": 1}}
    diary = _json(capsys, "diary", "read", "claude", "--json")
    assert diary["agent"] == "claude" and diary["entries"][0]["content"] == "Worked on the API."

    assert set(_json(capsys, "kg", "stats", "--json")) >= {"entities", "facts", "active", "closed"}
    backup = _json(capsys, "backup", "create", "--json")
    assert backup["vault"] == "default" and backup["drawers"] == 2 and Path(backup["path"]).is_dir()
    assert backup == _json(capsys, "backup", "list", "--json")[0]  # create and list print one shape


def test_remember_on_a_terminal_with_no_text_says_how_instead_of_waiting(
    home: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert run_cli(cli, ["init"]) == 0
    monkeypatch.setattr("sys.stdin.isatty", lambda: True)
    monkeypatch.setattr("sys.stdin.read", lambda: pytest.fail("read stdin on a terminal"))
    assert run_cli(cli, ["remember"]) == 1
    said = capsys.readouterr().err
    assert 'undercroft remember "the words"' in said and "undercroft remember -" in said


def test_a_missing_vault_says_to_run_init_first(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    said: list[str] = []
    assert run_cli(cli, ["stats"], echo=said.append) == 1
    assert said == [said[0]] and "no vault named 'default'" in said[0] and "run `undercroft init` first" in said[0]


def test_a_dry_run_says_what_it_would_file_and_where(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(cli, ["init"]) == 0
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "decisions.md").write_text("# Decisions\n\n" + WORDS + " because the payloads were smaller.\n")
    planned = _json(capsys, "mine", str(docs), "--wing", "backend", "--room", "decisions", "--dry-run", "--json")
    assert planned["dry_run"] is True and planned["would_file"] == [
        {"wing": "backend", "room": "decisions", "drawers": 1}
    ]
    capsys.readouterr()
    assert run_cli(cli, ["mine", str(docs), "--wing", "backend", "--room", "decisions", "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "dry run: nothing written" in out and "1 drawer(s) would be filed — backend/decisions (1)" in out
    assert "created 0" not in out
    assert _json(capsys, "stats", "--json")["drawers"] == 0  # nothing was written


def test_stats_does_not_call_the_vault_read_only_for_its_own_read_only_look(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(cli, ["init"]) == 0
    capsys.readouterr()
    assert run_cli(cli, ["stats"]) == 0
    first = capsys.readouterr().out.splitlines()[0]
    assert first.startswith("vault:") and "read-only" not in first


def test_search_explains_its_evidence_channels_once(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run_cli(cli, ["init"]) == 0
    assert run_cli(cli, ["remember", WORDS]) == 0
    capsys.readouterr()
    assert run_cli(cli, ["search", "why graphql"]) == 0
    out = capsys.readouterr().out
    assert out.count("raw BM25") == 1 and WORDS in out


def test_more_reporting_commands_print_json(home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    created = _json(capsys, "init", "--json")
    assert created == {"created": True, "vault": "default", "home": str(home)}
    assert _json(capsys, "init", "--json")["created"] is False
    status = _json(capsys, "vault", "status", "default", "--json")
    assert status["name"] == "default" and status["has_manifest"] is True and status["has_database"] is True
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "a.md").write_text("Alice met Bob at Acme about the billing move. Alice and Bob agreed.\n")
    assert run_cli(cli, ["mine", str(docs), "--wing", "work"]) == 0
    assert run_cli(cli, ["remember", "Alice met Bob at Acme again.", "--wing", "work"]) == 0
    assert run_cli(cli, ["remember", "Alice met Bob at Acme again.", "--wing", "work"]) == 0
    source = (docs / "a.md").resolve().as_posix()
    dry = _json(capsys, "drawer", "delete-by-source", str(docs / "a.md"), "--dry-run", "--json")
    assert dry["source_file"] == source and dry["dry_run"] is True and dry["deleted"] == 0 and len(dry["matched"]) == 1
    assert _json(capsys, "stats", "--json")["drawers"] == 3  # the dry run deleted nothing
    deduped = _json(capsys, "dedup", "--json")
    assert deduped["dry_run"] is True and deduped["removed"] == 0 and len(deduped["groups"]) == 1
    assert "closets" in _json(capsys, "closets", "--json")
    assert isinstance(_json(capsys, "hallways", "work", "--json")["hallways"], list)
    assert run_cli(cli, ["tunnel", "create", "work", "life", "related"]) == 0
    assert _json(capsys, "tunnel", "traverse", "work", "--json")["reached"][0]["wing"] == "life"
    gone = _json(capsys, "drawer", "delete-by-source", str(docs / "a.md"), "--json")
    assert gone["dry_run"] is False and gone["deleted"] == 1


def test_verify_forgetting_prints_the_erasure_record(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(cli, ["init"]) == 0
    [row] = _json(capsys, "remember", "Forget me on request.", "--json")["results"]
    receipt = tmp_path / "receipt.json"
    assert run_cli(cli, ["forget", row["id"], "--out", str(receipt)]) == 0
    verdict = _json(capsys, "verify-forgetting", str(receipt), "--json")
    assert verdict["status"] == "verified" and verdict["findings"] == [] and verdict["sender"] is None
