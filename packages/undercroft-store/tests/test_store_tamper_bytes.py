"""Single flipped bits in vault.db that the tamper campaign (undercroft-bench tamper) found escaping as
untyped errors: a schema object's SQL or name changed at rest, and TEXT that is no longer UTF-8. Each is
an integrity verdict (`DatabaseMalformed`, exit 2), whichever door meets it first."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_core.errors import IntegrityError
from undercroft_store import Palace, RecordTampered
from undercroft_store.errors import DatabaseMalformed


def _vault(palace: Palace, home: Path) -> Path:
    with palace.open_vault("default", HashEmbedder()) as store:
        for word in ("zebra", "quokka", "marmalade"):
            store.remember(f"The {word} memory.", wing="life", room="misc", added_by="t")
    database = home / "vaults" / "default" / "vault.db"
    with sqlite3.connect(database) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return database


def _flip_bit(database: Path, offset: int, bit: int) -> None:
    data = bytearray(database.read_bytes())
    data[offset] ^= 1 << bit
    database.write_bytes(bytes(data))


def _offset_in(database: Path, table: str, needle: bytes) -> int:
    """The file offset of ``needle`` inside one of ``table``'s b-tree pages (dbstat names them)."""
    with sqlite3.connect(database) as raw:
        size = int(raw.execute("PRAGMA page_size").fetchone()[0])
        pages = [int(r[0]) for r in raw.execute("SELECT pageno FROM dbstat WHERE name = ?", (table,))]
    data = database.read_bytes()
    for page in pages:
        found = data.find(needle, (page - 1) * size, page * size)
        if found >= 0:
            return found
    raise AssertionError(f"{needle!r} is in no page of {table}")


@pytest.mark.parametrize("read_only", [True, False])
def test_a_renamed_column_in_the_schema_is_refused_at_open(palace: Palace, home: Path, read_only: bool) -> None:
    database = _vault(palace, home)
    # 'meta_json' -> 'meta_jsoo' in the drawers table's CREATE statement: valid SQL, another table.
    at = _offset_in(database, "sqlite_schema", b"meta_json BLOB NOT NULL") + len("meta_jso")
    _flip_bit(database, at, 0)
    with Palace(home) as reopened, pytest.raises(DatabaseMalformed, match="schema differs from this build"):
        reopened.open_vault("default", HashEmbedder(), read_only=read_only)


def test_a_schema_name_that_is_not_utf8_is_refused_at_open(palace: Palace, home: Path) -> None:
    database = _vault(palace, home)
    # The high bit of a letter of the tombstones table's name: SQLite reports the malformed schema in a
    # message CPython cannot decode (a bare UnicodeDecodeError, exit 1, before the fix).
    at = _offset_in(database, "sqlite_schema", b"tabletombstonestombstones") + len("table") + 1
    _flip_bit(database, at, 7)
    with Palace(home) as reopened, pytest.raises(DatabaseMalformed, match="schema is not UTF-8"):
        reopened.open_vault("default", HashEmbedder(), read_only=True)


def test_an_audit_timestamp_that_is_not_utf8_is_an_integrity_verdict(palace: Palace, home: Path) -> None:
    database = _vault(palace, home)
    with sqlite3.connect(database) as raw:
        stamp = str(raw.execute("SELECT at FROM audit WHERE seq = 2").fetchone()[0])
    # The high bit of one digit of the timestamp: no longer UTF-8 (sqlite3's untyped OperationalError before).
    at = _offset_in(database, "audit", stamp.encode()) + len(stamp) - 3
    _flip_bit(database, at, 7)
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder(), read_only=True) as store:
        with pytest.raises(DatabaseMalformed, match="text value that is not UTF-8") as caught:
            store.verify()
    assert isinstance(caught.value, IntegrityError)


def test_a_drawer_id_that_is_not_utf8_is_an_integrity_verdict_on_every_read(palace: Palace, home: Path) -> None:
    database = _vault(palace, home)
    with sqlite3.connect(database) as raw:
        drawer_id = str(raw.execute("SELECT id FROM drawers ORDER BY seq LIMIT 1").fetchone()[0])
    at = _offset_in(database, "drawers", drawer_id.encode()) + len(drawer_id) - 1
    _flip_bit(database, at, 7)
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder(), read_only=True) as store:
        # The served-row rule reads the id as bytes and refuses it (RecordTampered); the strict decoder refuses
        # it first where a query reads it as TEXT (DatabaseMalformed): both are integrity verdicts.
        with pytest.raises((DatabaseMalformed, RecordTampered)):
            store.list_drawers(wing="life")
        with pytest.raises(DatabaseMalformed):
            store.verify()
