"""An append save never replaces: a reset ``meta.append_counter`` is refused at the write, flagged by verify,
restored by repair (the counter edit is made on the raw database with sqlite3)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import AppendCollision, Palace
from undercroft_store.integrity.repair import repair_vault


def _reset_counter(home: Path, value: bytes = b"0") -> None:
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as raw:
        raw.execute("UPDATE meta SET value = ? WHERE key = 'append_counter'", (value,))


def _words(home: Path) -> list[bytes]:
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as raw:
        return [bytes(row[0]) for row in raw.execute("SELECT content FROM drawers ORDER BY seq")]


def test_a_reset_counter_never_overwrites_a_memory(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        first = store.remember("The first memory about the lighthouse.", wing="life", room="notes", added_by="t")
        store.remember("The second memory about the harbour.", wing="life", room="notes", added_by="t")
    before = _words(home)
    _reset_counter(home)
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        with pytest.raises(AppendCollision, match="append_counter"):
            store.remember("An intruding memory.", wing="life", room="notes", added_by="t")
        assert store.get(first[0].id).content == "The first memory about the lighthouse."
        assert store.count() == 2
    assert _words(home) == before  # nothing written, the first drawer's words intact


def test_verify_flags_a_counter_below_the_highest_append_index(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        for n in range(3):
            store.remember(f"memory number {n}", wing="life", room="notes", added_by="t")
        assert store.verify().ok
    _reset_counter(home, b"1")
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder(), read_only=True) as store:
        report = store.verify()
    assert not report.ok and report.append_counter_behind
    assert "append counter:   BEHIND" in report.render() and report.render().endswith("VERIFY FAILED")


def test_repair_restores_the_counter_and_saves_create_again(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        kept = store.remember("kept words", wing="life", room="notes", added_by="t")[0].id
    _reset_counter(home)
    with Palace(home) as reopened:
        report = repair_vault(reopened, "default", HashEmbedder())
        assert report.ok and report.append_counter_restored == 1
        with reopened.open_vault("default", HashEmbedder()) as store:
            result = store.remember("new words", wing="life", room="notes", added_by="t")
            assert result[0].outcome == "created" and result[0].id != kept
            assert store.get(kept).content == "kept words" and store.verify().ok


def test_an_allocated_index_landing_on_a_tombstone_is_refused(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        gone = store.remember("soon deleted", wing="life", room="notes", added_by="t")[0].id
        store.delete(gone)
    _reset_counter(home)
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        with pytest.raises(AppendCollision, match="tombstone"):
            store.remember("written over the tombstone", wing="life", room="notes", added_by="t")
        assert store.count() == 0
