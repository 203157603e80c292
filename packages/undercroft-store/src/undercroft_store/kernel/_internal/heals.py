"""The heal log: what writable opens repaired, kept in ``meta.heals`` so ``stats`` shows it afterwards.

A heal (an anchor fast-forwarded, a committed rotation's staged manifest promoted) erases the evidence it
acted on — an older vault.json restored beside the database reads exactly like a crash between a commit
and its anchor. The log keeps the newest `KEEP` entries. It is an operator's note in the clear ``meta``
table, not tamper evidence: someone who can edit the database can edit it (the chain and the witness are
the evidence; this says what an open did).
"""

from __future__ import annotations

import json
import sqlite3
from typing import Final

__all__ = ["HEALS_KEY", "KEEP", "record_heal_in_transaction", "recorded_heals"]

HEALS_KEY: Final = "heals"
KEEP: Final = 20


def recorded_heals(connection: sqlite3.Connection) -> list[str]:
    """The logged heals, oldest first, as ``<at> <what>`` lines (an unreadable log reads as one line saying so)."""
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (HEALS_KEY,)).fetchone()
    if row is None:
        return []
    try:
        entries = json.loads(bytes(row[0]).decode("utf-8"))
        return [f"{entry['at']} {entry['what']}" for entry in entries]
    except (ValueError, TypeError, KeyError, RecursionError):
        return ["(the heal log in meta.heals is unreadable)"]


def record_heal_in_transaction(connection: sqlite3.Connection, at: str, what: str) -> None:
    """Append one heal inside the caller's open write transaction (the newest `KEEP` are kept)."""
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (HEALS_KEY,)).fetchone()
    entries: list[dict[str, str]] = []
    if row is not None:
        try:
            loaded = json.loads(bytes(row[0]).decode("utf-8"))
            entries = [e for e in loaded if isinstance(e, dict)] if isinstance(loaded, list) else []
        except (ValueError, RecursionError):
            entries = []  # an unreadable log is replaced rather than blocking the heal
    entries = [*entries, {"at": at, "what": what}][-KEEP:]
    value = json.dumps(entries, ensure_ascii=True).encode("ascii")
    connection.execute(
        "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
        (HEALS_KEY, value),
    )
