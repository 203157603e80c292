"""``drawer update``, ``history`` and ``supersessions``: the CLI over the operations /v1 and MCP run (issue 20).

Each command is driven in process through the real command group. A refusal (a move, blank words, an unknown
id, no text) is exit 1 with its reason and leaves the vault file byte-identical; a tampered row or trail is
exit 2. History and supersessions print labels, ids and verdicts, never a content word.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace
from undercroft_store.memory.supersession import supersede_drawer

from .conftest import CliRun

WORDS = "the lighthouse keeper logs amberwick tides nightly"
NEW = "the lighthouse keeper now logs amberwick tides at dawn"


def _db(home: Path) -> Path:
    return home / "vaults" / "default" / "vault.db"


def _remember(cli_run: CliRun, text: str = WORDS) -> str:
    code, out, err = cli_run("remember", text, "--wing", "coast", "--room", "logs", "--json")
    assert code == 0, err
    return str(json.loads(out)["results"][0]["id"])


def test_update_replaces_the_words_in_place_audited_and_verified(cli_run: CliRun) -> None:
    drawer_id = _remember(cli_run)
    code, out, err = cli_run("drawer", "update", drawer_id, NEW, "--json")
    assert code == 0, err
    assert json.loads(out) == {"outcome": "updated", "id": drawer_id, "wing": "coast", "room": "logs"}
    code, out, _ = cli_run("drawer", "get", drawer_id, "--json")
    assert code == 0 and json.loads(out)["content"] == NEW
    code, out, _ = cli_run("history", "--subject", drawer_id, "--json")
    labels = [record["label"] for record in json.loads(out)["records"]]
    assert labels == [f"drawer/{drawer_id}", f"drawer/{drawer_id}"]  # the save, then the update
    assert cli_run("verify")[0] == 0


@pytest.mark.parametrize(
    ("args", "reason"),
    [
        (("--wing", "inland"), "moving a drawer to another wing is not an in-place update"),
        (("--room", "other"), "moving a drawer to another room is not an in-place update"),
    ],
)
def test_update_never_moves_a_drawer(cli_run: CliRun, fresh_home: Path, args: tuple[str, ...], reason: str) -> None:
    drawer_id = _remember(cli_run)
    before = _db(fresh_home).read_bytes()
    code, _, err = cli_run("drawer", "update", drawer_id, NEW, *args)
    assert code == 1 and reason in err
    assert _db(fresh_home).read_bytes() == before


def test_update_refusals_are_exit_1_and_write_nothing(cli_run: CliRun, fresh_home: Path) -> None:
    drawer_id = _remember(cli_run)
    before = _db(fresh_home).read_bytes()
    cases = [
        ((drawer_id, " \u200b\t "), "empty after normalisation"),
        ((drawer_id,), "no new text"),
        (("drawer_" + "0" * 32, NEW), "drawer_00000000"),
        (("../etc/passwd", NEW), "drawer id"),
    ]
    for args, reason in cases:
        code, out, err = cli_run("drawer", "update", *args)
        assert code == 1, (args, out, err)
        assert reason in err.lower(), (args, err)
        assert _db(fresh_home).read_bytes() == before, args


def test_update_of_a_tampered_drawer_is_an_integrity_verdict(cli_run: CliRun, fresh_home: Path) -> None:
    drawer_id = _remember(cli_run)
    with sqlite3.connect(_db(fresh_home)) as connection:
        (content,) = connection.execute("SELECT content FROM drawers WHERE id = ?", (drawer_id,)).fetchone()
        flipped = bytearray(content)
        flipped[len(flipped) // 2] ^= 0x01
        connection.execute("UPDATE drawers SET content = ? WHERE id = ?", (bytes(flipped), drawer_id))
    before = _db(fresh_home).read_bytes()
    code, _, err = cli_run("drawer", "update", drawer_id, NEW)
    assert code == 2, err
    assert _db(fresh_home).read_bytes() == before


def test_history_pages_the_whole_trail_and_shows_no_content(cli_run: CliRun) -> None:
    ids = [_remember(cli_run, f"{WORDS} entry {n}") for n in range(5)]
    code, out, _ = cli_run("history", "--json")
    assert code == 0
    whole = json.loads(out)
    labels = [record["label"] for record in whole["records"]]
    assert [f"drawer/{i}" for i in ids] == [label for label in labels if label.startswith("drawer/")]
    heights = [record["height"] for record in whole["records"]]
    assert heights == sorted(heights) and whole["total"] == len(labels) and whole["next_offset"] is None
    code, out, _ = cli_run("history", "--limit", "2", "--offset", "1", "--json")
    page = json.loads(out)
    assert page["records"] == whole["records"][1:3] and page["next_offset"] == 3
    code, text, _ = cli_run("history")
    assert code == 0 and f"drawer/{ids[0]}" in text and f"{whole['total']} of {whole['total']} record(s)" in text
    for word in ("lighthouse", "amberwick", "nightly"):
        assert word not in out and word not in text


def test_history_of_an_edited_trail_is_exit_2_and_prints_no_label(cli_run: CliRun, fresh_home: Path) -> None:
    drawer_id = _remember(cli_run)
    with sqlite3.connect(_db(fresh_home)) as connection:
        connection.execute(
            "UPDATE audit SET record_id = ? WHERE record_id = ?", ("drawer/drawer_" + "0" * 32, f"drawer/{drawer_id}")
        )
    code, out, err = cli_run("history")
    assert code == 2 and drawer_id not in out and "does not reproduce" in err


def test_history_refuses_a_hostile_subject(cli_run: CliRun) -> None:
    _remember(cli_run)
    code, out, err = cli_run("history", "--subject", "x' OR 1=1 --")
    assert code == 1 and out == "" and "drawer id" in err.lower()


def test_supersessions_lists_each_link_with_its_verdict_now(cli_run: CliRun, fresh_home: Path) -> None:
    old_id = _remember(cli_run)
    code, out, _ = cli_run("supersessions", "--json")
    assert code == 0 and json.loads(out) == {"supersessions": []}
    with Palace(fresh_home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        link = supersede_drawer(store, old_id, NEW, added_by="test")
    code, out, _ = cli_run("supersessions", "--json")
    [row] = json.loads(out)["supersessions"]
    assert row == {"drawer_id": link.drawer_id, "superseded_id": old_id, "at": link.at, "verdict": "verified"}
    assert cli_run("drawer", "delete", old_id)[0] == 0
    code, text, _ = cli_run("supersessions")
    assert code == 0 and "superseded_gone" in text and "1 supersession link(s)" in text
    for word in ("lighthouse", "amberwick", "dawn"):
        assert word not in out and word not in text
