"""The seqs of the drawers a handle's own commits touched, so the search caches apply just those (issue 19 item 3).

Connection-local TEMP triggers on ``main.drawers`` (they live in the connection's temporary schema, never in
the vault file) log the seq of every row inserted, updated or deleted through this handle's connection —
writes, updates in place, deletes, forgets, retention, rulings, repair's re-embedding, rotation's re-keying:
the SQL statement is the choke point every path goes through. The log row is written in the change's own
transaction, so a rolled-back write leaves none. Only seqs are logged (already in clear in the vault file),
nothing derived from content.

A commit by any other connection moves ``PRAGMA data_version``, and the feed cannot see what it touched: every
reader behind that point gets None and falls back to the full diff of tags and embedding blobs. So does a
reader that never synced, or one older than the feed's retained log. The feed is a hint of where to look, never
evidence: every row it names is re-read, and every drawer a search returns is read verified.
"""

from __future__ import annotations

import sqlite3
import weakref
from typing import Final

from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.transaction import readable
from undercroft_store.store import VaultStore

__all__ = ["RETAINED", "ChangeFeed", "change_feed"]

#: Logged seqs kept for readers lagging behind; a reader further back falls back to the full diff.
RETAINED: Final = 1 << 16

#: The log's entry for "another connection committed here" (seqs are positive).
_UNKNOWN: Final = -1
_TABLE: Final = "undercroft_search_changes"  # the TEMP log table the triggers below fill
_INSTALL: Final = (
    "CREATE TEMP TABLE IF NOT EXISTS undercroft_search_changes (id INTEGER PRIMARY KEY, seq INTEGER NOT NULL)",
    "CREATE TEMP TRIGGER IF NOT EXISTS undercroft_search_insert AFTER INSERT ON main.drawers "
    "BEGIN INSERT INTO undercroft_search_changes (seq) VALUES (new.seq); END",
    "CREATE TEMP TRIGGER IF NOT EXISTS undercroft_search_update AFTER UPDATE ON main.drawers "
    "BEGIN INSERT INTO undercroft_search_changes (seq) VALUES (old.seq); "
    "INSERT INTO undercroft_search_changes (seq) VALUES (new.seq); END",
    "CREATE TEMP TRIGGER IF NOT EXISTS undercroft_search_delete AFTER DELETE ON main.drawers "
    "BEGIN INSERT INTO undercroft_search_changes (seq) VALUES (old.seq); END",
)


class ChangeFeed:
    """The ordered log of seqs one connection's commits touched; readers hold a position in it."""

    def __init__(self, connection: sqlite3.Connection) -> None:
        """Install the triggers on ``connection`` (changes before this are unknown: no reader starts before)."""
        for statement in _INSTALL:
            connection.execute(statement)
        self._connection = connection
        self._log: list[int] = []
        self._base = 0  # the position of _log[0]
        self._version = self._data_version()

    def _data_version(self) -> int:
        return int(self._connection.execute("PRAGMA data_version").fetchone()[0])

    def _pull(self) -> None:
        if self._connection.in_transaction:
            return  # mid-transaction rows may still roll back: read them once committed
        rows = self._connection.execute(f"SELECT id, seq FROM {_TABLE} ORDER BY id").fetchall()  # noqa: S608
        if rows:
            self._connection.execute(f"DELETE FROM {_TABLE} WHERE id <= ?", (rows[-1][0],))  # noqa: S608
            self._log.extend(int(seq) for _, seq in rows)
        version = self._data_version()
        if version != self._version:
            # Another connection committed since the last pull: a marker no reader behind it can step over.
            self._version = version
            self._log.append(_UNKNOWN)
        if len(self._log) > RETAINED:
            cut = len(self._log) - RETAINED // 2
            del self._log[:cut]
            self._base += cut

    def since(self, position: int | None) -> tuple[set[int] | None, int]:
        """The seqs touched after ``position`` (None: unknown — never synced, another connection committed
        since, or the log no longer reaches back) and the position to hold from now on."""
        self._pull()
        end = self._base + len(self._log)
        if position is None or position < self._base or position > end:
            return None, end
        named = set(self._log[position - self._base :])
        return (None if _UNKNOWN in named else named), end


_FEEDS: dict[int, tuple[weakref.ref[VaultContext], ChangeFeed | None]] = {}


def _forget(key: int) -> None:
    _FEEDS.pop(key, None)


def change_feed(source: object) -> ChangeFeed | None:
    """The feed of an open vault store's handle, installed on first use (None: not a vault store, or its
    connection refuses temporary triggers — readers then diff in full)."""
    if not isinstance(source, VaultStore):
        return None
    context = readable(source._context)
    key = id(context)
    held = _FEEDS.get(key)
    if held is not None and held[0]() is context:
        return held[1]
    try:
        feed: ChangeFeed | None = ChangeFeed(context.connection)
    except sqlite3.Error:
        feed = None
    _FEEDS[key] = (weakref.ref(context, lambda _: _forget(key)), feed)
    return feed
