"""The table holding a vault's sealed search snapshot (`search._internal.snapshot`), kept in the kernel so the
delete choke point and rotation's hook reach it without importing search.

``search_snapshot (part, blob)`` — created on the first snapshot a writable handle stores (a vault that never
stored one has no such table). Each row is one part of one snapshot, each sealed (sealed vault) or tagged
(hmac-only) under ``searchsnap/{part}/of/{parts}`` through the tier tables' `Envelope`; only the part numbers
are in clear. The table holds one snapshot or none: a new one replaces every row in one transaction.

The snapshot is derived from the drawers' content, so every path that deletes a drawer (`drop_rows` from
`kernel.writes`: forget, delete, retention, rulings) empties the table inside the delete's own transaction,
and rotation's hook (`drop_on_rotation`, wired in `undercroft_store.wiring`) empties it inside the rotation's:
nothing derived from a forgotten drawer, and nothing under an old key, outlives the commit that retires it.
"""

from __future__ import annotations

import sqlite3
from typing import TYPE_CHECKING, Final

from undercroft_vault import Domain

if TYPE_CHECKING:
    from undercroft_store.kernel.seams import Rekeying

__all__ = [
    "SNAPSHOT_TABLE",
    "create_table",
    "drop_on_rotation",
    "drop_rows",
    "part_domain",
    "read_parts",
    "table_exists",
]

SNAPSHOT_TABLE: Final = "search_snapshot"
_DDL: Final = f"CREATE TABLE IF NOT EXISTS {SNAPSHOT_TABLE} (part INTEGER PRIMARY KEY, blob BLOB NOT NULL) STRICT"


def part_domain(part: int, parts: int) -> Domain:
    """The domain of part ``part`` of a snapshot of ``parts`` parts (a part moved or a count edited fails)."""
    return Domain.search_snapshot(f"{part}/of/{parts}")


def table_exists(connection: sqlite3.Connection) -> bool:
    """Whether this vault holds the snapshot table."""
    row = connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (SNAPSHOT_TABLE,))
    return row.fetchone() is not None


def create_table(connection: sqlite3.Connection) -> None:
    """Create the table if absent (inside the caller's transaction)."""
    connection.execute(_DDL)


def read_parts(connection: sqlite3.Connection) -> list[tuple[int, bytes]]:
    """Every stored ``(part, blob)``, by part (empty: no table, or no snapshot stored)."""
    if not table_exists(connection):
        return []
    query = f"SELECT part, blob FROM {SNAPSHOT_TABLE} ORDER BY part"  # noqa: S608 - a constant name
    return [(int(part), bytes(blob)) for part, blob in connection.execute(query)]


def drop_rows(connection: sqlite3.Connection) -> None:
    """Delete the stored snapshot (inside the caller's transaction; nothing when the table is absent)."""
    if table_exists(connection):
        connection.execute(f"DELETE FROM {SNAPSHOT_TABLE}")  # noqa: S608 - a constant name


def drop_on_rotation(rekeying: Rekeying) -> list[tuple[str, bytes]]:
    """Rotation's hook: the snapshot sealed under the old keys is deleted in the rotation's transaction (the
    next open rebuilds it from the drawers under the new keys); no audit echo."""
    drop_rows(rekeying.connection)
    return []
