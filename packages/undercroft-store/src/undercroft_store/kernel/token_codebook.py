"""The late stage's token codebook at rest: PQ-compressing stored matrices to ~16 B/token past
``UNDERCROFT_TOK_PQ_MIN`` (256) matrices (`undercroft_index.token_pq`).

``drawer_tokens_meta (name, blob)`` — created when a vault first trains one:

* ``generation`` — the codebook generation, in clear (a counter, nothing derived from content; the
  ``codebook_generation_tok_codebook`` gauge and ``stats().token_codebook_generation``);
* ``codebook`` — ``b"UCB1" | u16 dimension | float32 centroids (m, 256, d/m)`` sealed (sealed vault) or
  tagged (hmac-only) through the tier tables' `Envelope` under ``pqrow/tok/g{generation}/codebook/pq``: a
  codebook edited by one bit, moved from another vault, or paired with an edited generation fails to open.

`compress_matrices` trains the codebook on a sample of the stored matrices' tokens (once the vault holds at
least ``pq_min`` of them and none is trained) with no lock held, then stores it and re-codes EVERY stored matrix
against it in one short transaction, so no row is ever coded against a codebook the vault does not hold. From
then on the write path stores new matrices PQ-coded (`kernel.token_table.pack_pq`); the late stage decodes them
(`kernel.token_table.unpack_matrix`). A codebook that fails to open is never used: its rows are undecodable,
so verify fails them and names the codebook, and repair drops both (``repair --tokens`` rebuilds).
Rotation re-seals the codebook under the new keys (`reseal_on_rotation`).
"""

from __future__ import annotations

import sqlite3
import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

import numpy as np
from numpy.typing import NDArray
from undercroft_index import IndexRefused
from undercroft_index.token_pq import TokenCodebook, train_token_codebook
from undercroft_vault import Domain

from undercroft_store.kernel.tier_tables import Envelope, tag_for
from undercroft_store.kernel.token_table import (
    TOKEN_TABLE,
    StoredCodebook,
    open_for_rotation,
    pack_pq,
    table_exists,
    unpack_matrix,
)

if TYPE_CHECKING:
    from undercroft_store.kernel._internal.context import VaultContext
    from undercroft_store.kernel.seams import Rekeying

__all__ = [
    "CODEBOOK_TABLE",
    "CodebookState",
    "StoredCodebook",
    "codebook_domain",
    "codebook_present",
    "compress_matrices",
    "drop_codebook",
    "read_codebook",
    "read_generation",
    "reseal_on_rotation",
]

CODEBOOK_TABLE: Final = "drawer_tokens_meta"
_DDL: Final = f"CREATE TABLE IF NOT EXISTS {CODEBOOK_TABLE} (name TEXT PRIMARY KEY, blob BLOB NOT NULL) STRICT"
_MAGIC: Final = b"UCB1"
_HEADER: Final = struct.Struct("<H")
#: Token rows the codebook trains on at most (an even stride over every stored matrix's tokens).
_SAMPLE: Final = 65536


def codebook_domain(generation: int) -> Domain:
    """The domain the codebook of ``generation`` is sealed under."""
    return Domain.pq_artifact(f"tok/g{generation}/codebook")


@dataclass(frozen=True)
class CodebookState:
    """What the vault holds: no codebook, an opened one, or one that failed (never used; ``failure`` says why)."""

    stored: StoredCodebook | None = None
    failure: str | None = None


def _table_exists(connection: sqlite3.Connection) -> bool:
    row = connection.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?", (CODEBOOK_TABLE,))
    return row.fetchone() is not None


def codebook_present(connection: sqlite3.Connection) -> bool:
    """Whether the vault holds a codebook row (opened or not): while it does, none is trained."""
    if not _table_exists(connection):
        return False
    query = f"SELECT 1 FROM {CODEBOOK_TABLE} WHERE name = 'codebook'"  # noqa: S608
    return connection.execute(query).fetchone() is not None


def read_generation(connection: sqlite3.Connection) -> int | None:
    """The stored codebook generation (None: none trained)."""
    if not _table_exists(connection):
        return None
    row = connection.execute(f"SELECT blob FROM {CODEBOOK_TABLE} WHERE name = 'generation'").fetchone()  # noqa: S608
    try:
        return None if row is None else int(bytes(row[0]).decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return None


def read_codebook(connection: sqlite3.Connection, envelope: Envelope) -> CodebookState:
    """The vault's codebook, opened under its generation's domain (a failure is reported, never used)."""
    if not _table_exists(connection):
        return CodebookState()
    rows = dict(connection.execute(f"SELECT name, blob FROM {CODEBOOK_TABLE}").fetchall())  # noqa: S608
    blob = rows.get("codebook")
    if blob is None:  # none trained, or repair dropped a failed one (the generation row stays: the next steps)
        return CodebookState()
    generation = read_generation(connection)
    if generation is None:
        return CodebookState(failure="the token codebook's generation row is missing or unreadable")
    plain = envelope.open(codebook_domain(generation), bytes(blob))
    if plain is None:
        return CodebookState(failure="the token codebook fails its seal (altered, moved, or its generation edited)")
    parsed = _parse(plain)
    if parsed is None:
        return CodebookState(failure="the token codebook opens but is not a codebook")
    return CodebookState(StoredCodebook(generation, parsed))


def _parse(plain: bytes) -> TokenCodebook | None:
    start = len(_MAGIC) + _HEADER.size
    if len(plain) < start or plain[: len(_MAGIC)] != _MAGIC:
        return None
    (dimension,) = _HEADER.unpack_from(plain, len(_MAGIC))
    try:
        return TokenCodebook.from_bytes(dimension, plain[start:])
    except IndexRefused:
        return None


def _serialise(codebook: TokenCodebook) -> bytes:
    return _MAGIC + _HEADER.pack(codebook.dimension) + codebook.to_bytes()


def drop_codebook(connection: sqlite3.Connection) -> None:
    """Remove the codebook (inside the caller's transaction; repair drops a failed one). The generation row
    stays, so the next codebook trained is the next generation, never a reused number."""
    if _table_exists(connection):
        connection.execute(f"DELETE FROM {CODEBOOK_TABLE} WHERE name = 'codebook'")  # noqa: S608


def _sample(matrices: list[NDArray[np.float32]]) -> NDArray[np.float32]:
    rows = np.concatenate(matrices, axis=0)
    if len(rows) <= _SAMPLE:
        return rows
    return np.ascontiguousarray(rows[np.linspace(0, len(rows) - 1, _SAMPLE).astype(np.int64)])


_ROWS: Final = f"SELECT t.seq, d.id, t.blob FROM {TOKEN_TABLE} t JOIN drawers d ON d.seq = t.seq"  # noqa: S608


def _opened(envelope: Envelope, rows: list[Any]) -> list[tuple[int, str, bytes, bytes, NDArray[np.float32]]]:
    """``(seq, drawer id, stored blob, plaintext, tokens)`` of every row that opens to a matrix (others skipped:
    verify names them)."""
    found = []
    for seq, drawer_id, blob in rows:
        plain = envelope.open(Domain.tokens(str(drawer_id)), bytes(blob))
        matrix = None if plain is None else unpack_matrix(plain)
        if plain is not None and matrix is not None:
            found.append((int(seq), str(drawer_id), bytes(blob), plain, matrix.tokens))
    return found


def compress_matrices(context: VaultContext, pq_min: int) -> int:
    """Train the codebook and PQ-code every stored matrix; returns how many were coded.

    Nothing happens (0) while fewer than ``pq_min`` matrices are stored, when a codebook is already held
    (opened or failed: a failed one is repair's to drop), or when the matrices are of more than one width
    or too few tokens to train on. A matrix that fails its seal is left as it is (verify names it).

    Two phases, so writers are not held up by the training (seconds at a few hundred matrices): the rows are read,
    the codebook trained and every row coded and sealed with NO lock held; then one short write transaction
    checks that no other handle trained meanwhile, codes again just the rows written or changed since the read
    (a stored blob is compared byte for byte), and stores the codebook with every re-coded row together — so no
    row is ever coded against a codebook the vault does not hold, and none is left uncoded beside it."""
    connection = context.connection
    if context.read_only or not table_exists(connection) or connection.in_transaction:
        return 0
    if codebook_present(connection):
        return 0
    envelope = Envelope(context)
    opened = _opened(envelope, connection.execute(_ROWS).fetchall())
    widths = {tokens.shape[1] for *_, tokens in opened}
    tokens_held = sum(tokens.shape[0] for *_, tokens in opened)
    if len(opened) < pq_min or len(widths) != 1 or tokens_held < 256:
        return 0
    generation = (read_generation(connection) or 0) + 1
    stored = StoredCodebook(generation, train_token_codebook(_sample([tokens for *_, tokens in opened])))
    coded = {
        seq: (drawer_id, blob, envelope.close(Domain.tokens(drawer_id), pack_pq(plain, stored)))
        for seq, drawer_id, blob, plain, _ in opened
    }
    width = widths.pop()
    connection.execute("BEGIN IMMEDIATE")
    try:
        if codebook_present(connection) or (read_generation(connection) or 0) + 1 != generation:
            connection.execute("ROLLBACK")  # another handle trained while this one did: its codebook stands
            return 0
        updates: list[tuple[bytes, int]] = []
        changed: list[Any] = []
        for seq, drawer_id, blob in connection.execute(_ROWS).fetchall():
            before = coded.get(int(seq))
            if before is not None and before[0] == str(drawer_id) and before[1] == bytes(blob):
                updates.append((before[2], int(seq)))
            else:
                changed.append((seq, drawer_id, blob))
        for seq, drawer_id, _, plain, tokens in _opened(envelope, changed):  # written during the training
            if tokens.shape[1] == width:
                updates.append((envelope.close(Domain.tokens(drawer_id), pack_pq(plain, stored)), seq))
        connection.execute(_DDL)
        connection.executemany(
            f"INSERT OR REPLACE INTO {CODEBOOK_TABLE} (name, blob) VALUES (?, ?)",  # noqa: S608
            [
                ("generation", str(generation).encode("ascii")),
                ("codebook", envelope.close(codebook_domain(generation), _serialise(stored.codebook))),
            ],
        )
        connection.executemany(f"UPDATE {TOKEN_TABLE} SET blob = ? WHERE seq = ?", updates)  # noqa: S608
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    return len(updates)


def reseal_on_rotation(rekeying: Rekeying) -> list[tuple[str, bytes]]:
    """Rotation's hook: the codebook re-sealed (or re-tagged) under the new keys in the rotation's transaction.

    One that fails under the old keys is dropped with every row coded against it left undecodable — the token
    leg then fails them and repair rebuilds — rather than carrying an unverifiable codebook forward."""
    connection = rekeying.connection
    generation = read_generation(connection)
    if not codebook_present(connection):
        return []
    row = connection.execute(f"SELECT blob FROM {CODEBOOK_TABLE} WHERE name = 'codebook'").fetchone()  # noqa: S608
    domain = codebook_domain(generation or 0)
    plain = None if generation is None else open_for_rotation(rekeying, domain, bytes(row[0]))
    if plain is None:
        drop_codebook(connection)
        return []
    if rekeying.sealed:
        fresh = rekeying.new_sealer.seal(domain, plain)
    else:
        fresh = plain + tag_for(rekeying.new_keys, rekeying.vault_id, domain, plain)
    connection.execute(f"UPDATE {CODEBOOK_TABLE} SET blob = ? WHERE name = 'codebook'", (fresh,))  # noqa: S608
    return []
