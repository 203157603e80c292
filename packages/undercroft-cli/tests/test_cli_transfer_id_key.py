"""``export --with-id-key`` / ``import --adopt-id-key``: a copy that keeps every drawer id (issue 29).

Pinned: the key line is emitted only when asked and counted in the manifest and the egress record; an adopting
import into a new vault keeps every drawer id (sourced, API saves, supersession links, facts' sources) and its
copy verifies; the same file without the flag imports with ids derived under the destination's key and says
the key went unused; adoption into a vault that holds anything, a key line the manifest does not count (or two),
a malformed key and ``--adopt-id-key`` on an export that carries none each exit 1 with a precise message and
leave the destination's database untouched.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from undercroft_cli._internal.composition import open_store
from undercroft_store.memory.kg.graph import KnowledgeGraph
from undercroft_store.memory.supersession import supersede_drawer

from .conftest import init_home, run_in_process

pytestmark = pytest.mark.usefixtures("clean_undercroft_env")
_home = init_home
_run = run_in_process


def _rows(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_bytes().splitlines()]


def _source(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> list[str]:
    """Vault a: a mined chunk, an API save superseded by another, a fact sourced from the newest; its ids."""
    _home(monkeypatch, tmp_path / "a")
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "gate.md").write_text("The harbour gate log is kept in the tower.\n")
    assert _run(capsys, "mine", str(docs), "--wing", "port")[0] == 0
    assert _run(capsys, "remember", "the harbour gate opens at six", "--wing", "port", "--room", "gates")[0] == 0
    with open_store("default") as store:
        old = next(d.id for d in store.list_drawers() if d.content == "the harbour gate opens at six")
        new = supersede_drawer(store, old, "the harbour gate opens at seven", added_by="test").drawer_id
        KnowledgeGraph(store).add("harbour gate", "opens_at", "seven", source_drawer=new)
        return sorted(d.id for d in store.list_drawers())


def _db_bytes(home: Path) -> bytes:
    vault = home / "vaults" / "default"
    with sqlite3.connect(vault / "vault.db") as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return (vault / "vault.db").read_bytes()


def test_an_adopting_import_keeps_every_drawer_id(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = _source(tmp_path, monkeypatch, capsys)
    plain, carried = tmp_path / "plain.jsonl", tmp_path / "carried.jsonl"
    assert _run(capsys, "export", "--out", str(plain))[0] == 0
    code, _, err = _run(capsys, "export", "--with-id-key", "--out", str(carried), "--json")
    assert code == 0, err
    assert "id_key" not in {r.get("type") for r in _rows(plain)}  # never without the flag
    rows = _rows(carried)
    assert rows[1]["type"] == "id_key" and len(rows[1]["key"]) == 44  # 32 bytes, base64, right after the manifest
    assert rows[0]["undercroft_manifest"]["counts"]["id_key"] == 1
    summary = json.loads(_run(capsys, "export", "--with-id-key", "--out", str(tmp_path / "again.jsonl"), "--json")[1])
    assert summary["counts"]["id_key"] == 1  # the egress record's counts name the key too

    _home(monkeypatch, tmp_path / "b")
    code, out, err = _run(capsys, "import", str(carried), "--adopt-id-key", "--json")
    assert code == 0, err
    report = json.loads(out)
    assert report["id_key_adopted"] is True and report["created"] == 3
    assert any("adopted the export's id key" in note for note in report["notes"])
    second = tmp_path / "b.jsonl"
    assert _run(capsys, "export", "--out", str(second))[0] == 0
    copied = {r["drawer"]["content"]: r["drawer"] for r in _rows(second) if r.get("type") == "drawer"}
    assert sorted(d["id"] for d in copied.values()) == ids  # every id as the source had it
    assert copied["the harbour gate opens at seven"]["supersedes"] == copied["the harbour gate opens at six"]["id"]
    [fact] = [r["fact"] for r in _rows(second) if r.get("type") == "kg_fact"]
    assert fact["source_drawer"] == copied["the harbour gate opens at seven"]["id"]
    assert _run(capsys, "verify")[0] == 0

    _home(monkeypatch, tmp_path / "c")  # the same file, no flag: ids derived under c's own key, and it says so
    code, out, _ = _run(capsys, "import", str(carried), "--json")
    report = json.loads(out)
    assert code == 0 and report["id_key_adopted"] is False
    assert any("not adopted" in note and "--adopt-id-key" in note for note in report["notes"])
    with open_store("default") as store:
        assert set(d.id for d in store.list_drawers()).isdisjoint(ids)


def _forged(path: Path, rows: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows))
    return path


@pytest.mark.parametrize(
    ("case", "expected"),
    [
        ("not empty", "cannot adopt an id key: it already holds drawers (1)"),
        ("uncounted", "the manifest counts 0 id key(s) but the file holds 1"),
        ("two keys", "the manifest counts 1 id key(s) but the file holds 2"),
        ("bad base64", "the id key is not valid base64"),
        ("short key", "the id key holds 16 bytes, not 32"),
        ("not a string", "an id_key record needs a base64 string 'key'"),
        ("no key", "--adopt-id-key, but the export carries no id key"),
    ],
)
def test_a_refused_adoption_exits_1_and_leaves_the_vault_untouched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], case: str, expected: str
) -> None:
    _source(tmp_path, monkeypatch, capsys)
    carried = tmp_path / "carried.jsonl"
    assert _run(capsys, "export", "--with-id-key", "--out", str(carried))[0] == 0
    rows = _rows(carried)
    manifest, key, rest = rows[0], rows[1], rows[2:]
    counts = {k: v for k, v in manifest["undercroft_manifest"]["counts"].items() if k != "id_key"}
    uncounted = {"undercroft_manifest": {**manifest["undercroft_manifest"], "counts": counts}}
    files = {
        "not empty": carried,
        "uncounted": _forged(tmp_path / "f1.jsonl", [uncounted, key, *rest]),
        "two keys": _forged(tmp_path / "f2.jsonl", [manifest, key, key, *rest]),
        "bad base64": _forged(tmp_path / "f3.jsonl", [manifest, {"type": "id_key", "key": "!!!!"}, *rest]),
        "short key": _forged(
            tmp_path / "f.jsonl", [manifest, {"type": "id_key", "key": "AQEBAQEBAQEBAQEBAQEBAQ=="}, *rest]
        ),
        "not a string": _forged(tmp_path / "f4.jsonl", [manifest, {"type": "id_key", "key": 7}, *rest]),
        "no key": _forged(tmp_path / "f5.jsonl", [uncounted, *rest]),
    }
    home = _home(monkeypatch, tmp_path / "b")
    if case == "not empty":
        assert _run(capsys, "remember", "already here", "--wing", "w", "--room", "r")[0] == 0
    before = _db_bytes(home)
    code, _, err = _run(capsys, "import", str(files[case]), "--adopt-id-key")
    assert code == 1, err
    assert expected in err
    assert _db_bytes(home) == before  # nothing written: not the key, not a drawer
    assert _run(capsys, "verify")[0] == 0
