"""Keyed drawer ids (issue 29): a new sealed vault derives ids under its own key, recorded as ``hmac-v1``.

Pinned: the recipe a vault records at creation and keeps across reopen and rotation; an older vault's public
``sha256-v1`` kept (never re-keyed silently); an attacker's public or wrong-key recomputation of a guessed
(wing, room, source, index) never matches a stored id and appears nowhere in the raw files; a raw edit of the
recorded recipe is refused at open (unknown bytes) or reported by verify on every row (a downgrade).
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_core.drawer import Drawer
from undercroft_core.ids import (
    ID_RECIPE_SOURCE,
    VAULT_ID_RECIPE_KEYED,
    VAULT_ID_RECIPE_PUBLIC,
    append_drawer_id,
    source_drawer_id,
)
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.errors import SchemaMismatch
from undercroft_store.integrity.rotation import rotate_vault
from undercroft_store.kernel._internal import ids_at_rest

WING, ROOM, SOURCE = "casefiles", "witnesses", "interviews/alder-2031.md"


def _mined(store, index: int, content: str) -> Drawer:  # type: ignore[no-untyped-def]
    return Drawer(
        id=store.drawer_ids.source(WING, ROOM, SOURCE, index),
        content=content,
        wing=WING,
        room=ROOM,
        chunk_index=index,
        id_recipe=ID_RECIPE_SOURCE,
        added_by="miner",
        filed_at="2026-05-01T09:00:00.000000Z",
        source_file=SOURCE,
    )


def _recipe_bytes(db: Path) -> bytes | None:
    with sqlite3.connect(db) as connection:
        row = connection.execute("SELECT value FROM meta WHERE key = 'drawer_id_recipe'").fetchone()
    return None if row is None else bytes(row[0])


def _fill(palace: Palace, vault: str) -> tuple[list[str], str]:
    with palace.open_vault(vault, HashEmbedder()) as store:
        mined = [_mined(store, i, f"chunk {i} of the witness statement") for i in range(3)]
        store.write([DrawerWrite(d) for d in mined], screening=Screen())
        [saved] = store.remember("the witness saw a grey van", wing=WING, room=ROOM, added_by="agent")
    return [d.id for d in mined], saved.id


def test_a_new_sealed_vault_keys_its_ids_and_an_hmac_only_vault_does_not(palace: Palace) -> None:
    palace.create_vault("hmac", level="hmac-only")
    with palace.open_vault("default", HashEmbedder()) as store:
        assert store.drawer_ids.recipe == VAULT_ID_RECIPE_KEYED
    with palace.open_vault("hmac", HashEmbedder()) as store:
        assert store.drawer_ids.recipe == VAULT_ID_RECIPE_PUBLIC
    assert _recipe_bytes(palace.home / "vaults" / "default" / "vault.db") == b"hmac-v1"
    assert _recipe_bytes(palace.home / "vaults" / "hmac" / "vault.db") is None


def test_a_guessed_source_cannot_be_confirmed_from_a_keyed_id(palace: Palace) -> None:
    mined, saved = _fill(palace, "default")
    public = [source_drawer_id(WING, ROOM, SOURCE, i) for i in range(3)]
    assert not set(public) & set(mined)
    assert all(append_drawer_id(WING, ROOM, i) != saved for i in range(16))  # the small append counter
    vault = palace.home / "vaults" / "default"
    raw = b"".join(p.read_bytes() for p in vault.iterdir() if p.is_file())
    assert [g for g in public if g.removeprefix("drawer_").encode() in raw] == []
    # Another vault (another key) derives other ids for the same guess: a key is per vault.
    palace.create_vault("other")
    with palace.open_vault("other", HashEmbedder()) as store:
        assert store.drawer_ids.source(WING, ROOM, SOURCE, 0) != mined[0]


def test_keyed_ids_survive_reopen_and_rotation_so_re_mining_updates_in_place(palace: Palace) -> None:
    mined, _ = _fill(palace, "default")
    rotate_vault(palace, "default", HashEmbedder())
    with palace.open_vault("default", HashEmbedder()) as store:
        assert store.drawer_ids.source(WING, ROOM, SOURCE, 0) == mined[0]
        [result] = store.write([DrawerWrite(_mined(store, 0, "chunk 0, corrected"))], screening=Screen())
        assert (result.id, result.outcome) == (mined[0], "updated")
        assert store.verify().ok


def test_an_older_vault_keeps_its_public_recipe(palace: Palace, monkeypatch: pytest.MonkeyPatch) -> None:
    """A vault created before keyed ids (no recipe recorded) keeps sha256-v1: its ids never move."""
    monkeypatch.setattr(ids_at_rest, "NEW_SEALED_RECIPE", VAULT_ID_RECIPE_PUBLIC)
    palace.create_vault("old")
    db = palace.home / "vaults" / "old" / "vault.db"
    with sqlite3.connect(db) as connection:  # exactly what an older build left: no recipe key at all
        connection.execute("DELETE FROM meta WHERE key = 'drawer_id_recipe'")
    monkeypatch.undo()
    mined, _ = _fill(palace, "old")
    assert mined == [source_drawer_id(WING, ROOM, SOURCE, i) for i in range(3)]
    rotate_vault(palace, "old", HashEmbedder())
    with palace.open_vault("old", HashEmbedder()) as store:
        assert store.drawer_ids.recipe == VAULT_ID_RECIPE_PUBLIC and store.verify().ok
    assert _recipe_bytes(db) is None


def test_a_flipped_byte_in_the_recorded_recipe_refuses_the_open(palace: Palace) -> None:
    _fill(palace, "default")
    db = palace.home / "vaults" / "default" / "vault.db"
    with sqlite3.connect(db) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # the row's bytes are in the main file
    raw = db.read_bytes()
    assert raw.count(b"hmac-v1") == 1
    db.write_bytes(raw.replace(b"hmac-v1", b"hmac-v2"))  # one byte of the stored value flipped
    with pytest.raises(SchemaMismatch, match="drawer id recipe"):
        palace.open_vault("default", HashEmbedder())


def test_a_recipe_downgraded_to_public_is_reported_by_verify_on_every_keyed_row(palace: Palace) -> None:
    mined, saved = _fill(palace, "default")
    db = palace.home / "vaults" / "default" / "vault.db"
    with sqlite3.connect(db) as connection:
        connection.execute("DELETE FROM meta WHERE key = 'drawer_id_recipe'")
    with palace.open_vault("default", HashEmbedder()) as store:
        report = store.verify()
    assert not report.ok
    assert sorted(report.mirror_drift) == sorted([*mined, saved])
