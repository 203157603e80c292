"""The vault database schema (version 1): every table, created on a writable open and checked on a read-only one.

Tables (each documented column by column in docs/store.md):

* ``meta`` — key/value: ``schema_version``, ``level``, ``vault_id``, ``keycheck``, ``blind_secret`` (sealed),
  ``embedder`` (identity label, recorded on first write), ``append_counter``, and on sealed vaults
  ``metadata`` (``sealed-v1``) and ``label_names`` (sealed registry).
* ``drawers`` — one row per live drawer; ``seq`` is write order (recency and scope filters), ``id`` the
  drawer id; ``wing``/``room``/``kind``/``supersedes`` mirror the HMAC-covered ``meta_json`` — the names on
  hmac-only, blind values on sealed vaults, whose ``meta_json`` is sealed (`_internal/meta_at_rest.py`).
* ``audit`` — the append-only trail the chain folds: ``record_id`` label, ``tag``, ``at``.
* ``chain_meta`` — the single committed chain head and height.
* ``tombstones`` — keyed evidence of every delete.
* ``drawers_fts`` — hmac-only vaults only: an FTS5 index over plaintext content (derived, outside the HMAC).
"""

from __future__ import annotations

import sqlite3
from functools import cache
from typing import Final

from undercroft_store.errors import DatabaseMalformed, SchemaMismatch
from undercroft_store.kernel._internal.governance_tables import (
    GOVERNANCE_DDL,
    GOVERNANCE_TABLES,
    GOVERNANCE_TAGGED_TABLES,
)
from undercroft_store.kernel._internal.retention_table import RETENTION_DDL, RETENTION_TABLE
from undercroft_store.kernel._internal.surface_tables import SURFACE_DDL, SURFACE_TABLES, SURFACE_TAGGED_TABLES

__all__ = [
    "DRAWER_TABLE",
    "FTS_TABLE",
    "SCHEMA_VERSION",
    "TAGGED_TABLES",
    "check_schema",
    "create_schema",
    "schema_version",
]

#: The schema this build writes and reads.
SCHEMA_VERSION: Final = 1
#: The system of record's drawer table (writes to it live in ``writes.py`` only).
DRAWER_TABLE: Final = "drawers"
#: The derived full-text index of an hmac-only vault.
FTS_TABLE: Final = "drawers_fts"
#: Every table whose rows carry an HMAC tag (rotation re-keys each; verify checks each).
TAGGED_TABLES: Final = (
    "drawers",
    "audit",
    "tombstones",
    *GOVERNANCE_TAGGED_TABLES,
    *SURFACE_TAGGED_TABLES,
    RETENTION_TABLE,
)

_CORE_DDL: Final = (
    "CREATE TABLE meta (key TEXT PRIMARY KEY, value BLOB NOT NULL) STRICT",
    """CREATE TABLE drawers (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        id TEXT NOT NULL UNIQUE,
        wing TEXT NOT NULL,
        room TEXT NOT NULL,
        kind TEXT,
        supersedes TEXT,
        meta_json BLOB NOT NULL,
        content BLOB NOT NULL,
        embedding BLOB NOT NULL,
        fingerprint BLOB NOT NULL,
        tag BLOB NOT NULL
    ) STRICT""",
    "CREATE INDEX drawers_scope ON drawers (wing, room)",
    "CREATE INDEX drawers_fingerprint ON drawers (fingerprint)",
    """CREATE TABLE audit (
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        record_id TEXT NOT NULL,
        tag BLOB NOT NULL,
        at TEXT NOT NULL
    ) STRICT""",
    """CREATE TABLE chain_meta (
        id INTEGER PRIMARY KEY CHECK (id = 1),
        head BLOB NOT NULL,
        height INTEGER NOT NULL
    ) STRICT""",
    """CREATE TABLE tombstones (
        drawer_id TEXT PRIMARY KEY,
        tag BLOB NOT NULL,
        at TEXT NOT NULL
    ) STRICT""",
)
_FTS_DDL: Final = f"CREATE VIRTUAL TABLE {FTS_TABLE} USING fts5(content, tokenize = 'unicode61')"

_EXPECTED: Final = {
    "meta",
    "drawers",
    "audit",
    "chain_meta",
    "tombstones",
    *GOVERNANCE_TABLES,
    *SURFACE_TABLES,
    RETENTION_TABLE,
}


def create_schema(connection: sqlite3.Connection, *, hmac_only: bool) -> None:
    """Create every table of a new vault (inside the caller's transaction) and stamp the version."""
    for statement in (*_CORE_DDL, *SURFACE_DDL):  # the memory surfaces' tables (surface_tables) ride along
        connection.execute(statement)
    for statement in (*GOVERNANCE_DDL, *RETENTION_DDL):  # the admission queue and wing trust (governance)
        connection.execute(statement)
    if hmac_only:
        connection.execute(_FTS_DDL)
    connection.execute("INSERT INTO meta (key, value) VALUES ('schema_version', ?)", (str(SCHEMA_VERSION).encode(),))


def schema_version(connection: sqlite3.Connection) -> int | None:
    """The stamped schema version, or None for a database with no ``meta`` table yet."""
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    if "meta" not in tables:
        return None
    row = connection.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchone()
    if row is None:
        return None
    try:
        return int(bytes(row[0]).decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        raise SchemaMismatch(f"schema_version is not a decimal number: {bytes(row[0])!r}") from None


_OBJECTS: Final = "SELECT name, type, tbl_name, sql FROM sqlite_master"


@cache
def _expected_objects(hmac_only: bool) -> dict[str, tuple[str, str, str | None]]:
    """Every schema object (name → type, table, SQL) `create_schema` makes at this level, built in memory once."""
    memory = sqlite3.connect(":memory:", isolation_level=None)
    try:
        create_schema(memory, hmac_only=hmac_only)
        return {name: (kind, table, sql) for name, kind, table, sql in memory.execute(_OBJECTS)}
    finally:
        memory.close()


def check_schema(connection: sqlite3.Connection, *, hmac_only: bool) -> None:
    """Refuse a database whose version or table set is not this build's (never migrates).

    Every object this build creates must be there with this build's exact SQL: a column renamed, an index
    re-pointed or a constraint dropped at rest (one flipped bit in ``sqlite_master``) is `DatabaseMalformed`
    (exit 2) at open, not an untyped "no such column" later. Objects this build does not create are left to
    rotation's inventory check (a table it cannot re-key is refused there)."""
    version = schema_version(connection)
    if version != SCHEMA_VERSION:
        raise SchemaMismatch(
            f"vault database has schema version {version}, this build reads version {SCHEMA_VERSION}; "
            "a database with no schema needs one writable open first"
        )
    tables = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    missing = sorted(_EXPECTED - tables)
    if hmac_only and FTS_TABLE not in tables:
        missing.append(FTS_TABLE)
    if missing:
        raise SchemaMismatch(f"vault database lacks the tables {', '.join(missing)}")
    found = {name: (kind, table, sql) for name, kind, table, sql in connection.execute(_OBJECTS)}
    changed = sorted(name for name, shape in _expected_objects(hmac_only).items() if found.get(name) != shape)
    if changed:
        raise DatabaseMalformed(
            f"the vault database's schema differs from this build's in {', '.join(changed)}: "
            "possible tampering or disk corruption"
        )
