"""Opening a vault database: writable (WAL + synchronous=FULL pinned) or read-only (mode=ro, query_only)."""

from __future__ import annotations

import os
import sqlite3
from pathlib import Path
from urllib.parse import quote

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


def connect_writable(path: Path) -> sqlite3.Connection:
    """A writable connection in autocommit mode (transactions are explicit BEGIN IMMEDIATE)."""
    connection = sqlite3.connect(path, isolation_level=None, timeout=_BUSY_TIMEOUT_MS / 1000, check_same_thread=False)
    connection.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
    mode = connection.execute("PRAGMA journal_mode = WAL").fetchone()[0]
    if str(mode).lower() != "wal":
        connection.close()
        raise sqlite3.OperationalError(f"could not switch {path.name} to WAL (journal_mode is {mode})")
    # FULL, not NORMAL: a commit must be on disk before its manifest anchor can be (the crash story).
    connection.execute("PRAGMA synchronous = FULL")
    connection.execute("PRAGMA foreign_keys = ON")
    return connection


def connect_read_only(path: Path) -> ReadOnlyOpen:
    """mode=ro + query_only; escalate to immutable=1 only when that fails on a write-protected directory."""
    try:
        connection = sqlite3.connect(
            _uri(path, mode="ro"), uri=True, isolation_level=None, check_same_thread=False, timeout=30
        )
        connection.execute("PRAGMA query_only = ON")
        connection.execute("SELECT count(*) FROM sqlite_master").fetchone()
        return ReadOnlyOpen(connection, immutable=False)
    except sqlite3.OperationalError:
        if os.access(path.parent, os.W_OK):
            raise
    # The open notes this in ``unhealed`` (opening.py), which every surface prints; no raw Python warning.
    connection = sqlite3.connect(
        _uri(path, mode="ro", immutable="1"), uri=True, isolation_level=None, check_same_thread=False
    )
    connection.execute("PRAGMA query_only = ON")
    return ReadOnlyOpen(connection, immutable=True)
