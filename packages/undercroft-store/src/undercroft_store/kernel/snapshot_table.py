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

import hashlib
import sqlite3
from typing import TYPE_CHECKING, Final

from undercroft_vault import AuditRow, Domain

from undercroft_store.kernel.tier_tables import Envelope

if TYPE_CHECKING:
    from undercroft_store.kernel._internal.context import VaultContext
    from undercroft_store.kernel.seams import Rekeying

__all__ = [
    "DIGEST_BYTES",
    "SNAPSHOT_TABLE",
    "create_table",
    "drop_on_rotation",
    "drop_rows",
    "open_payload",
    "part_domain",
    "read_parts",
    "repair_snapshot",
    "snapshot_findings",
    "snapshot_leg",
    "table_exists",
]

SNAPSHOT_TABLE: Final = "search_snapshot"
#: Part 0's plaintext opens with a BLAKE2b digest of this size over the whole payload (parts of two
#: snapshots never combine).
DIGEST_BYTES: Final = 32
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


def open_payload(envelope: Envelope, parts: list[tuple[int, bytes]]) -> tuple[bytes | None, str]:
    """The stored snapshot's payload, or ``(None, reason)``: ``seal`` when a part fails its seal or tag or the
    parts are not numbered 0..n-1 (a part moved, dropped or a count edited), ``torn`` when the opened parts
    do not make the payload part 0's digest names (parts of two snapshots)."""
    count = len(parts)
    opened = []
    for index, (part, blob) in enumerate(parts):
        plain = envelope.open(part_domain(index, count), blob) if part == index else None
        if plain is None:
            return None, "seal"
        opened.append(plain)
    digest, payload = opened[0][:DIGEST_BYTES], opened[0][DIGEST_BYTES:] + b"".join(opened[1:])
    if hashlib.blake2b(payload, digest_size=DIGEST_BYTES).digest() != digest:
        return None, "torn"
    return payload, ""


def snapshot_findings(context: VaultContext) -> list[str]:
    """Verify's leg: one line when the stored snapshot fails at rest (a part's seal, its numbering, the
    payload digest); empty when the vault holds none or it opens whole. A snapshot that merely lags the rows
    (another write since it was taken) is no finding: it is derived, refused at load and replaced."""
    parts = read_parts(context.connection)
    if not parts:
        return []
    _, reason = open_payload(Envelope(context), parts)
    if reason == "seal":
        return [f"{SNAPSHOT_TABLE}: a part of {len(parts)} fails its seal, or the parts are renumbered"]
    if reason == "torn":
        return [f"{SNAPSHOT_TABLE}: the {len(parts)} part(s) do not make the payload part 0 names (torn)"]
    return []


def snapshot_leg(context: VaultContext, _rows: list[AuditRow]) -> list[str]:
    """The verify leg as the kernel's seam calls it (`kernel.seams.VerifyLeg`): no audit records of its own."""
    return snapshot_findings(context)


def repair_snapshot(context: VaultContext) -> str | None:
    """Repair's step: a snapshot that fails at rest is deleted (the next full fill stores a fresh one); a
    sound one is kept, since it is bound to the rows and refused by itself once they move. None: nothing
    to report (no snapshot, a sound one, or a read-only handle)."""
    findings = snapshot_findings(context)
    if not findings or context.read_only:
        return None
    connection = context.connection
    connection.execute("BEGIN IMMEDIATE")
    try:
        drop_rows(connection)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return "a snapshot failing at rest was deleted; the next full search fill stores a fresh one"


def drop_rows(connection: sqlite3.Connection) -> None:
    """Delete the stored snapshot (inside the caller's transaction; nothing when the table is absent)."""
    if table_exists(connection):
        connection.execute(f"DELETE FROM {SNAPSHOT_TABLE}")  # noqa: S608 - a constant name


def drop_on_rotation(rekeying: Rekeying) -> list[tuple[str, bytes]]:
    """Rotation's hook: the snapshot sealed under the old keys is deleted in the rotation's transaction (the
    next open rebuilds it from the drawers under the new keys); no audit echo."""
    drop_rows(rekeying.connection)
    return []
