"""Carrying a vault's id key to a copy (issue 29): `export_id_key` and `adopt_id_key`.

Pinned: a new sealed vault that adopts another's key derives the same drawer ids, blind labels and entity ids
for the same writes, verifies clean, keeps them across its own rotation, and records one ``id-key/adopted``
audit record; adoption into a vault that holds anything, a malformed key, a read-only handle or a key of the
wrong length is refused with a precise message and changes nothing (the stored secret and the chain are
byte-identical afterwards).
"""

from __future__ import annotations

import binascii
import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_core.drawer import Drawer
from undercroft_core.ids import ID_RECIPE_SOURCE
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.errors import ReadOnlyStore
from undercroft_store.integrity.rotation import rotate_vault
from undercroft_store.kernel.id_key import ADOPTED_LABEL, InvalidIdKey, adopt_id_key, export_id_key
from undercroft_store.memory.kg.graph import KnowledgeGraph

WING, ROOM, SOURCE = "casefiles", "witnesses", "interviews/alder-2031.md"
TEXTS = ("Alder saw the ferry leave at dusk.", "Birch kept the harbour ledger that winter.")


def _write(store) -> tuple[list[str], list[str], list[str]]:  # type: ignore[no-untyped-def]
    """The same writes in any vault: two sourced chunks, one API save, one fact. Their ids, wing/room columns
    as stored, and entity ids."""
    drawers = [
        Drawer(
            id=store.drawer_ids.source(WING, ROOM, SOURCE, i),
            content=text,
            wing=WING,
            room=ROOM,
            chunk_index=i,
            id_recipe=ID_RECIPE_SOURCE,
            added_by="miner",
            filed_at="2026-05-01T09:00:00.000000Z",
            source_file=SOURCE,
        )
        for i, text in enumerate(TEXTS)
    ]
    store.write([DrawerWrite(d) for d in drawers], screening=Screen())
    saved = store.remember("Cedar moved to the mill in spring.", wing=WING, room=ROOM, added_by="agent")
    KnowledgeGraph(store).add("cedar", "works_at", "millrace")
    connection = store._context.connection
    columns = [f"{w}/{r}" for w, r in connection.execute("SELECT wing, room FROM drawers ORDER BY seq")]
    entities = sorted(str(r[0]) for r in connection.execute("SELECT id FROM kg_entities"))
    return [*(d.id for d in drawers), saved[0].id], columns, entities


def _state(home: Path, vault: str) -> tuple[bytes, int, int]:
    with sqlite3.connect(home / "vaults" / vault / "vault.db") as connection:
        secret = bytes(connection.execute("SELECT value FROM meta WHERE key = 'blind_secret'").fetchone()[0])
        height = int(connection.execute("SELECT height FROM chain_meta").fetchone()[0])
        audit = int(connection.execute("SELECT count(*) FROM audit").fetchone()[0])
    return secret, height, audit


def test_an_adopted_key_reproduces_every_id_label_and_entity(palace: Palace, home: Path) -> None:
    palace.create_vault("copy")
    palace.create_vault("stranger")
    with palace.open_vault("default", HashEmbedder()) as source:
        written = _write(source)
        key = export_id_key(source)
    with palace.open_vault("copy", HashEmbedder()) as copy:
        adopt_id_key(copy, key)
        assert _write(copy) == written  # drawer ids, blind wing/room columns, entity ids: byte for byte
        assert copy.verify().ok
    with palace.open_vault("stranger", HashEmbedder()) as stranger:
        ids, columns, entities = _write(stranger)
        assert set(ids).isdisjoint(written[0]) and columns != written[1]  # the premise: keys differ otherwise
        assert set(entities).isdisjoint(written[2])
    rotate_vault(palace, "copy", HashEmbedder())
    with palace.open_vault("copy", HashEmbedder()) as copy:
        assert copy.verify().ok
        assert [d.id for d in copy.hydrate(written[0])] == written[0]  # rotation re-seals the adopted key
        assert export_id_key(copy) == key
    with sqlite3.connect(home / "vaults" / "copy" / "vault.db") as connection:
        labels = [str(r[0]) for r in connection.execute("SELECT record_id FROM audit")]
    assert labels.count(ADOPTED_LABEL) == 1 and labels[0] == ADOPTED_LABEL  # recorded before any write


def test_a_vault_that_holds_anything_refuses_and_keeps_its_key(palace: Palace, home: Path) -> None:
    palace.create_vault("copy")
    with palace.open_vault("default", HashEmbedder()) as source:
        key = export_id_key(source)
    with palace.open_vault("copy", HashEmbedder()) as copy:
        copy.remember("One drawer is enough to refuse.", wing=WING, room=ROOM, added_by="agent")
    before = _state(home, "copy")
    with palace.open_vault("copy", HashEmbedder()) as copy:
        with pytest.raises(InvalidIdKey, match=r"already holds drawers \(1\).*new, empty vault"):
            adopt_id_key(copy, key)
        assert copy.verify().ok
    assert _state(home, "copy") == before


def test_a_vault_whose_only_row_was_deleted_still_refuses(palace: Palace) -> None:
    palace.create_vault("copy")
    with palace.open_vault("default", HashEmbedder()) as source:
        key = export_id_key(source)
    with palace.open_vault("copy", HashEmbedder()) as copy:
        [saved] = copy.remember("Written, then deleted.", wing=WING, room=ROOM, added_by="agent")
        copy.delete(saved.id)
        with pytest.raises(InvalidIdKey, match=r"tombstones \(1\)"):
            adopt_id_key(copy, key)


@pytest.mark.parametrize(
    ("key", "message"),
    [
        (b"bytes", "a base64 string, got bytes"),
        ("not base64!", "not valid base64"),
        (binascii.b2a_base64(b"\x01" * 16, newline=False).decode(), "holds 16 bytes, not 32"),
        ("é", "not valid base64"),
    ],
)
def test_a_malformed_key_is_refused_and_nothing_changes(palace: Palace, home: Path, key: object, message: str) -> None:
    palace.create_vault("copy")
    before = _state(home, "copy")
    with palace.open_vault("copy", HashEmbedder()) as copy, pytest.raises(InvalidIdKey, match=message):
        adopt_id_key(copy, key)  # type: ignore[arg-type]
    assert _state(home, "copy") == before


def test_a_read_only_handle_refuses(palace: Palace, home: Path) -> None:
    palace.create_vault("copy")
    with palace.open_vault("default", HashEmbedder()) as source:
        key = export_id_key(source)
    before = _state(home, "copy")
    with palace.open_vault("copy", HashEmbedder(), read_only=True) as copy, pytest.raises(ReadOnlyStore):
        adopt_id_key(copy, key)
    assert _state(home, "copy") == before
