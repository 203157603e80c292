"""Opening a vault database: writable (WAL + synchronous=FULL pinned) or read-only (mode=ro, query_only).

Every connection decodes TEXT strictly: the store only ever writes ``str``, so a TEXT value that is not
UTF-8 was changed at rest and raises `DatabaseMalformed` (exit 2), never sqlite3's untyped "Could not
decode to UTF-8" (exit 1). The schema is loaded once at connect, where a schema whose SQL is not UTF-8
(SQLite then reports it in an error message CPython cannot decode) is the same verdict.
"""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

from undercroft_store.errors import DatabaseMalformed

__all__ = ["ReadOnlyOpen", "connect_read_only", "connect_writable"]

_BUSY_TIMEOUT_MS = 30_000


class ReadOnlyOpen:
    """What a read-only open had to do: whether it escalated to immutable=1 (and the warning it gave)."""

    def __init__(self, connection: sqlite3.Connection, immutable: bool) -> None:
        self.connection = connection
        self.immutable = immutable


def _uri(path: Path, **params: str) -> str:
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return f"file:{quote(str(path))}?{query}"


def _strict_text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DatabaseMalformed(
            f"the vault database holds a text value that is not UTF-8 ({error.reason} at byte {error.start}): "
            "possible tampering or disk corruption"
        ) from None


def _load_schema(connection: sqlite3.Connection) -> None:
    """Make SQLite parse the schema now; a schema whose error text is not UTF-8 is a malformed database."""
    connection.text_factory = _strict_text
    try:
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
    except UnicodeDecodeError:  # CPython decoding SQLite's own "malformed database schema (…)" message
        connection.close()
        raise DatabaseMalformed(
            "the vault database's schema is not UTF-8 text: possible tampering or disk corruption"
        ) from None


def connect_writable(path: Path) -> sqlite3.Connection:
    """A writable connection in autocommit mode (transactions are explicit BEGIN IMMEDIATE)."""
    connection = sqlite3.connect(path, isolation_level=None, timeout=_BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    _load_schema(connection)
    connection.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
    mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        connection.close()
        raise sqlite3.OperationalError(f"could not switch {path.name} to WAL (journal_mode is {mode})")
    # FULL, not NORMAL: a commit must be on disk before its manifest anchor can be (the crash story).
    connection.execute("PRAGMA synchronous = FULL")
    connection.execute("PRAGMA foreign_keys = ON")
    # Deleted cells are zeroed, whatever this SQLite was compiled with: a forgotten drawer's sealed content,
    # embedding and token matrix leave no bytes in freed space (forget then checkpoints the WAL over them).
    connection.execute("PRAGMA secure_delete = ON")
    return connection


def connect_read_only(path: Path) -> ReadOnlyOpen:
    """mode=ro + query_only; escalate to immutable=1 only when that fails on a write-protected directory."""
    try:
        connection = sqlite3.connect(
            _uri(path, mode="ro"), uri=True, isolation_level=None, check_same_thread=False, timeout=30
        )
        connection.execute("PRAGMA query_only = ON")
        _load_schema(connection)
        return ReadOnlyOpen(connection, immutable=False)
    except sqlite3.OperationalError:
        if os.access(path.parent, os.W_OK):
            raise
    # The open notes this in ``unhealed`` (opening.py), which every surface prints; no raw Python warning.
    connection = sqlite3.connect(
        _uri(path, mode="ro", immutable="1"), uri=True, isolation_level=None, check_same_thread=False
    )
    connection.execute("PRAGMA query_only = ON")
    _load_schema(connection)
    return ReadOnlyOpen(connection, immutable=True)
