"""The FDE candidate tier's tables at rest (`search.tiers.fde`): every blob sealed (sealed vaults) or tagged
(hmac-only) through the PQ tables' `tier_tables.Envelope`, each under its own domain. Kept in the kernel so
verify's leg and rotation's hook read them without importing search.

Two tables, created on the first writable build (a vault that never enabled the tier has neither):

* ``tier_fde_meta (name, blob)`` — ``generation``: the parameter generation, in clear (a counter, nothing
  derived from content); ``params``: the MUVERA encoder's persisted parameters
  (`undercroft_core.fde.FdeEncoder.to_bytes`) under ``fdeparam/g{generation}/params/fde``
  (`undercroft_vault.Domain.fde_artifact`).
* ``tier_fde_rows (seq, blob)`` — one row per drawer whose token matrix was encoded, under the drawer's own
  ``fde/{id}/tok`` domain (`Domain.fde_tokens`): the plaintext is `pack_row`'s — the generation it was made
  under, the drawer's change mark (16 bytes: a digest of its tag and stored token-matrix blob) and the FDE
  as float32. A row moved to another drawer's seq or vault fails to open; one of another generation, or of
  the wrong length, opens but is not a row of this tier (never used either).

A failure is never trusted: the search encodes that drawer again in RAM from its token matrix, verify names
it (`search.tiers.fde_integrity.fde_findings`), repair rebuilds the tables. Rotation drops both tables' rows
(`search.tiers.fde_integrity.drop_on_rotation`): every blob is derived, and the next search rebuilds it.
"""

from __future__ import annotations

import sqlite3
import struct
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray
from undercroft_vault import Domain

from undercroft_store.kernel.tier_tables import Envelope

__all__ = [
    "FDE_TABLES",
    "MARK_BYTES",
    "META_TABLE",
    "ROWS_TABLE",
    "StoredParams",
    "create_tables",
    "delete_rows",
    "drop_for",
    "pack_row",
    "params_domain",
    "read_generation",
    "read_params",
    "tables_exist",
    "unpack_row",
    "write_params",
    "write_rows",
]

META_TABLE: Final = "tier_fde_meta"
ROWS_TABLE: Final = "tier_fde_rows"
FDE_TABLES: Final = (META_TABLE, ROWS_TABLE)
#: Bytes of the change mark inside each row.
MARK_BYTES: Final = 16
_DDL: Final = (
    f"CREATE TABLE IF NOT EXISTS {META_TABLE} (name TEXT PRIMARY KEY, blob BLOB NOT NULL) STRICT",
    f"CREATE TABLE IF NOT EXISTS {ROWS_TABLE} (seq INTEGER PRIMARY KEY, blob BLOB NOT NULL) STRICT",
)
_MAGIC: Final = b"UCF1"
_HEAD: Final = struct.Struct("<4sI16sI")  # magic, generation, change mark, FDE length


def params_domain(generation: int) -> Domain:
    """The domain of one generation's persisted encoder parameters."""
    return Domain.fde_artifact(f"g{generation}/params")


def pack_row(generation: int, mark: bytes, fde: NDArray[np.float32]) -> bytes:
    """The plaintext of one row: generation, change mark, then the FDE as float32-LE."""
    vector = np.ascontiguousarray(fde, dtype="<f4")
    return _HEAD.pack(_MAGIC, generation, mark, len(vector)) + vector.tobytes()


def unpack_row(plain: bytes, generation: int, length: int) -> tuple[bytes, NDArray[np.float32]] | None:
    """``(change mark, FDE)`` of a row made under ``generation`` with ``length`` components (None: not one)."""
    if len(plain) != _HEAD.size + 4 * length:
        return None
    magic, made_under, mark, stored_length = _HEAD.unpack_from(plain)
    if magic != _MAGIC or made_under != generation or stored_length != length:
        return None
    vector = np.frombuffer(plain, dtype="<f4", offset=_HEAD.size).astype(np.float32)
    if not np.isfinite(vector).all():
        return None  # a forged non-finite component would poison every inner product it enters
    return bytes(mark), vector


def tables_exist(connection: sqlite3.Connection) -> bool:
    """Whether this vault holds the tier's tables."""
    names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return all(table in names for table in FDE_TABLES)


def create_tables(connection: sqlite3.Connection) -> None:
    """Create the tier's tables if absent (inside the caller's transaction)."""
    for statement in _DDL:
        connection.execute(statement)


def read_generation(connection: sqlite3.Connection) -> int | None:
    """The stored parameter generation (None: no tables, or nothing built yet; -1: unreadable)."""
    if not tables_exist(connection):
        return None
    row = connection.execute(f"SELECT blob FROM {META_TABLE} WHERE name = 'generation'").fetchone()  # noqa: S608
    if row is None:
        return None
    try:
        return int(bytes(row[0]).decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return -1


@dataclass(frozen=True, slots=True)
class StoredParams:
    """One generation's stored parameters, opened (``params`` None: absent — emptied — or failed)."""

    generation: int
    params: bytes | None
    failed: bool


def read_params(connection: sqlite3.Connection, envelope: Envelope) -> StoredParams | None:
    """The stored generation and its opened parameters (None: nothing stored)."""
    generation = read_generation(connection)
    if generation is None:
        return None
    if generation < 0:
        return StoredParams(generation, None, True)
    row = connection.execute(f"SELECT blob FROM {META_TABLE} WHERE name = 'params'").fetchone()  # noqa: S608
    if row is None:
        return StoredParams(generation, None, False)  # emptied (rotation, repair): nothing to trust
    plain = envelope.open(params_domain(generation), bytes(row[0]))
    return StoredParams(generation, plain, plain is None)


def write_params(connection: sqlite3.Connection, envelope: Envelope, generation: int, params: bytes | None) -> None:
    """Replace the meta rows with ``generation`` and (when given) its sealed parameters (caller's transaction)."""
    connection.execute(f"DELETE FROM {META_TABLE}")  # noqa: S608
    rows = [("generation", str(generation).encode("ascii"))]
    if params is not None:
        rows.append(("params", envelope.close(params_domain(generation), params)))
    connection.executemany(f"INSERT INTO {META_TABLE} (name, blob) VALUES (?, ?)", rows)  # noqa: S608


def write_rows(connection: sqlite3.Connection, envelope: Envelope, rows: Iterable[tuple[int, str, bytes]]) -> None:
    """Upsert ``(seq, drawer id, plaintext)`` sealed under ``fde/{id}/tok`` (inside the caller's transaction)."""
    connection.executemany(
        f"INSERT OR REPLACE INTO {ROWS_TABLE} (seq, blob) VALUES (?, ?)",  # noqa: S608
        [(seq, envelope.close(Domain.fde_tokens(drawer_id), plain)) for seq, drawer_id, plain in rows],
    )


def delete_rows(connection: sqlite3.Connection, seqs: Iterable[int]) -> None:
    """Drop the rows of ``seqs`` (inside the caller's transaction)."""
    connection.executemany(f"DELETE FROM {ROWS_TABLE} WHERE seq = ?", [(int(seq),) for seq in seqs])  # noqa: S608


def drop_for(connection: sqlite3.Connection, seqs: list[int]) -> None:
    """The write path's drop: the rows of rewritten or deleted drawers go in the write's own transaction, so
    an FDE row never outlives the text it was encoded from (nothing when the tier never ran here)."""
    if seqs and tables_exist(connection):
        delete_rows(connection, seqs)
