"""The ``--json`` inventory, counted both directions against the live command tree and docs/cli.md.

Every leaf command of the real ``undercroft`` group either takes ``--json`` or is named here as printing no
report (with the reason docs/cli.md gives); every command with ``--json`` has a row in docs/cli.md's shape
table, and every row there names a real command that takes ``--json``. Then the commands that gained
``--json`` in issue 18 are run and their documented shapes checked.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import click
import pytest
from undercroft_cli._internal.exit_codes import run_cli
from undercroft_cli.main import cli

ROOT = Path(__file__).resolve().parents[3]

#: Leaf commands that print no report (docs/cli.md says why): servers, and one-value outputs.
NO_REPORT = {
    "serve-mcp",
    "serve-http",
    "daemon run",
    "assert-header",
    "hooks claude-code",
    "bundle keygen",
    "bundle recipient",
    "bundle sender",
    "bundle sign-keygen",
}


def _leaves(command: click.Command, path: tuple[str, ...] = ()) -> Iterator[tuple[str, click.Command]]:
    if isinstance(command, click.Group):
        context = click.Context(command)
        for name in command.list_commands(context):
            sub = command.get_command(context, name)
            assert sub is not None, name
            yield from _leaves(sub, (*path, name))
    else:
        yield " ".join(path), command


def _takes_json(command: click.Command) -> bool:
    return any("--json" in param.opts for param in command.params if isinstance(param, click.Option))


def _documented() -> set[str]:
    text = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    section = text.split("## `--json`: one shape per command", 1)[1].split("\n## ", 1)[0]
    named: set[str] = set()
    for line in section.splitlines():
        if not line.startswith("| `"):
            continue
        for span in re.findall(r"`([^`]+)`", line.split(" | ", 1)[0]):
            words = []
            for word in span.split():
                if not re.fullmatch(r"[a-z][a-z-]*", word):
                    break
                words.append(word)
            named.add(" ".join(words))
    return named


def test_every_reporting_command_takes_json_and_every_documented_shape_is_a_real_command() -> None:
    leaves = dict(_leaves(cli))
    assert len(leaves) >= 70 and NO_REPORT <= set(leaves), sorted(NO_REPORT - set(leaves))
    with_json = {name for name, command in leaves.items() if _takes_json(command)}
    assert not (with_json & NO_REPORT), "a command listed as printing no report takes --json: drop it from NO_REPORT"
    missing = set(leaves) - NO_REPORT - with_json
    assert not missing, f"reporting commands without --json: {sorted(missing)}"
    documented = _documented()
    undocumented = sorted(with_json - documented)
    assert not undocumented, f"--json shapes not documented in docs/cli.md: {undocumented}"
    assert not (documented - with_json), f"docs/cli.md documents shapes of no such command: {documented - with_json}"


def _json(capsys: pytest.CaptureFixture[str], *args: str, code: int = 0, stream: str = "out") -> Any:
    capsys.readouterr()
    assert run_cli(cli, list(args)) == code
    captured = capsys.readouterr()
    return json.loads(captured.out if stream == "out" else captured.err)


def test_the_commands_that_gained_json_print_their_documented_shapes(
    fresh_home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(cli, ["init"]) == 0
    created = _json(capsys, "vault", "create", "spare", "--level", "hmac-only", "--json")
    assert created["vault"] == "spare" and created["level"] == "hmac-only" and Path(created["path"]).is_dir()
    rotated = _json(capsys, "vault", "rotate", "spare", "--json")
    assert rotated["vault"] == "spare" and rotated["generation_after"] == rotated["generation_before"] + 1
    assert _json(capsys, "vault", "delete", "spare", "--yes", "--json") == {"vault": "spare", "deleted": True}

    diary = _json(capsys, "diary", "write", "claude", "Shipped the billing move.", "--json")
    [entry] = diary["results"]
    assert entry["outcome"] == "created" and set(entry) == {"outcome", "id"}
    assert _json(capsys, "drawer", "delete", entry["id"], "--json") == {"id": entry["id"], "deleted": True}
    assert _json(capsys, "drawer", "check-dup", "nothing like it", "--json")["duplicate"] is False

    tunnel = _json(capsys, "tunnel", "create", "work", "life", "related", "--json")
    assert tunnel == _json(capsys, "tunnel", "list", "--json")[0]
    assert _json(capsys, "tunnel", "delete", tunnel["id"], "--json") == {"id": tunnel["id"], "deleted": True}

    fact = _json(capsys, "kg", "add", "alice", "works_at", "acme", "--json")
    moved = _json(capsys, "kg", "supersede", fact["id"], "globex", "--at", "2025-01-01", "--json")
    assert moved["closed"]["id"] == fact["id"] and moved["opened"]["object"] == "globex"
    closed = _json(capsys, "kg", "invalidate", moved["opened"]["id"], "--json")
    assert closed["id"] == moved["opened"]["id"] and closed["valid_to"]
    entities = _json(capsys, "kg", "entities", "--json")
    assert entities["offset"] == 0 and {"alice", "acme"} <= {e["name"] for e in entities["entities"]}
    # The same record as GET /v1/…/kg/entities and undercroft_kg_entities (one operation under all three).
    assert all(set(e) == {"id", "name", "created_at"} for e in entities["entities"])
    receipts = _json(capsys, "kg", "receipts", "--json")
    assert receipts["ok"] is True and receipts["receipts"] == [] and receipts["uncited"] >= 2
    other = _json(capsys, "kg", "add", "bob", "works_at", "acme", "--json")
    authority = _json(capsys, "kg", "authority", other["id"], "--review", "approved", "--json")
    assert authority["fact"]["id"] == other["id"] and authority["displaced"] is None

    witness_file = tmp_path / "witness.json"
    emitted = _json(capsys, "witness", "emit", "--out", str(witness_file), "--json")
    assert emitted["out"] == str(witness_file) and emitted["witness"] == json.loads(witness_file.read_text())
    checked = _json(capsys, "witness", "check", str(witness_file), "--json")
    assert checked["ok"] is True and checked["writes_since"] == 0
    assert _json(capsys, "anchor", "--json")["vault"] == "default"

    exported = _json(capsys, "export", "--out", str(tmp_path / "out.jsonl"), "--json")
    assert exported["sealed"] is False and exported["counts"]["drawers"] == 0 and len(exported["sha256"]) == 64
    to_stdout = _json(capsys, "export", "--json", stream="err")  # stdout carries the JSONL itself
    assert to_stdout["out"] is None and to_stdout["counts"] == exported["counts"]

    policy = _json(capsys, "retention", "set", "work", "--max-age", "90d", "--json")
    assert policy == _json(capsys, "retention", "list", "--json")["policies"][0]
    swept = _json(capsys, "retention", "sweep", "--json")
    assert swept["ok"] is True and swept["forgotten"] == [] and swept["receipt"] is None
    assert _json(capsys, "retention", "clear", "work", "--json") == {"wing": "work", "room": None, "cleared": True}
    assignment = _json(capsys, "trust", "set", "work", "trusted", "--json")
    assert assignment == _json(capsys, "trust", "list", "--json")[0]

    [row] = _json(capsys, "remember", "Forget this later.", "--json")["results"]
    forgotten = _json(capsys, "forget", row["id"], "--json")
    assert forgotten["ids"] == [row["id"]] and forgotten["out"] is None and forgotten["receipt"]["record"]

    backup = _json(capsys, "backup", "create", "--json")
    restored = _json(capsys, "backup", "restore", backup["id"], "--force", "--json")
    assert restored["vault"] == "default" and restored["backup_id"] == backup["id"] and restored["verify"]["ok"]

    transcript = tmp_path / "chat.jsonl"
    transcript.write_text(
        json.dumps({"type": "user", "message": {"role": "user", "content": "hi there"}})
        + "\n"
        + json.dumps({"type": "assistant", "message": {"role": "assistant", "content": "hello"}})
        + "\n"
    )
    rendered = _json(capsys, "transcript", "render", str(transcript), "--json")
    assert rendered["path"] == str(transcript) and [m["text"] for m in rendered["messages"]] == ["hi there", "hello"]


def test_an_entity_page_past_the_shared_bound_is_refused_by_name(
    fresh_home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run_cli(cli, ["init"]) == 0
    capsys.readouterr()
    code = run_cli(cli, ["kg", "entities", "--limit", "1001", "--json"])
    err = capsys.readouterr().err
    assert code == 1 and "--limit" in err and "1000" in err, (code, err)
