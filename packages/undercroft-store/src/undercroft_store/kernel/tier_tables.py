"""The PQ candidate tier's tables at rest (`search.tiers.pq`): every artifact sealed (sealed vaults) or tagged
(hmac-only) under its own domain. Kept in the kernel so stats, verify's leg and rotation's hook read them
without importing search.

Two tables, created on the first writable build (a vault that never enabled the tier has neither):

* ``tier_pq_meta (name, blob)`` — ``generation``: the codebook generation, in clear (a counter, nothing derived
  from content); ``header``, ``centroids``, ``codebook``: each under ``pqrow/g{generation}/{name}/pq``.
* ``tier_pq_rows (seq, blob)`` — one code row per coded drawer under ``pqrow/g{generation}/row/{seq}/pq``:
  the drawer's change mark (16 bytes: a digest of its tag and stored embedding blob) then its standalone code
  (the IVF list number and the PQ code). The list number is inside the seal: never in clear.

On a sealed vault a blob is the vault `Sealer`'s AEAD seal; on an hmac-only vault it is the plaintext followed
by an HMAC-SHA256 under the vault's MAC key over a distinct prefix, the AAD and the plaintext. A blob moved to
another seq, generation, artifact or vault fails to open. A failure is never trusted: the search encodes that
drawer again in RAM, verify names it (`search.tiers.integrity.tier_findings`), repair rebuilds the tables.
"""

from __future__ import annotations

import hmac
import sqlite3
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from undercroft_vault import BatchOpenFailed, Domain, IntegrityFailure, VaultKeys

from undercroft_store.kernel._internal.context import VaultContext

__all__ = [
    "META_TABLE",
    "ROWS_TABLE",
    "TIER_TABLES",
    "Envelope",
    "create_tables",
    "read_generation",
    "row_domain",
    "tables_exist",
    "tag_for",
]

META_TABLE: Final = "tier_pq_meta"
ROWS_TABLE: Final = "tier_pq_rows"
TIER_TABLES: Final = (META_TABLE, ROWS_TABLE)
_DDL: Final = (
    f"CREATE TABLE IF NOT EXISTS {META_TABLE} (name TEXT PRIMARY KEY, blob BLOB NOT NULL) STRICT",
    f"CREATE TABLE IF NOT EXISTS {ROWS_TABLE} (seq INTEGER PRIMARY KEY, blob BLOB NOT NULL) STRICT",
)
_TAG_PREFIX: Final = b"undercroft.pq-tag.v1\x00"
_TAG_BYTES: Final = 32
_OPEN_BATCH: Final = 1024


def row_domain(generation: int, seq: int) -> Domain:
    """The domain of one code row."""
    return Domain.pq_artifact(f"g{generation}/row/{seq}")


def artifact_domain(generation: int, name: str) -> Domain:
    """The domain of the header, the centroid set or the codebook of one generation."""
    return Domain.pq_artifact(f"g{generation}/{name}")


class Envelope:
    """Seal (sealed vault) or tag (hmac-only vault) the tier's blobs, and open them; `None` when one fails."""

    def __init__(self, context: VaultContext) -> None:
        """Bind to an open vault's keys."""
        self._context = context

    def close(self, domain: Domain, plain: bytes) -> bytes:
        """The at-rest blob of ``plain`` under ``domain``."""
        context = self._context
        if context.sealed:
            return context.sealer.seal(domain, plain)
        return plain + self._tag(domain, plain)

    def open(self, domain: Domain, blob: bytes) -> bytes | None:
        """The plaintext of ``blob``, or None when it fails its seal or tag (never partially trusted)."""
        context = self._context
        if context.sealed:
            try:
                return context.sealer.open(domain, blob)
            except IntegrityFailure:
                return None
        if len(blob) < _TAG_BYTES:
            return None
        plain, tag = blob[:-_TAG_BYTES], blob[-_TAG_BYTES:]
        return plain if hmac.compare_digest(self._tag(domain, plain), tag) else None

    def open_each(self, domains: Sequence[Domain], blobs: Sequence[bytes]) -> list[bytes | None]:
        """`open` over many blobs (a batched AEAD open on a sealed vault); None at each one that fails."""
        context = self._context
        if not context.sealed:
            return [self.open(domain, blob) for domain, blob in zip(domains, blobs, strict=True)]
        opened: list[bytes | None] = []
        while len(opened) < len(blobs):
            start = len(opened)
            stop = min(len(blobs), start + _OPEN_BATCH)  # bounded: a failure costs at most one batch again
            try:
                opened.extend(context.sealer.open_many(domains[start:stop], blobs[start:stop]))
            except BatchOpenFailed as error:  # keep what opened before it, distrust it, go on after it
                good = start + error.index
                opened.extend(context.sealer.open_many(domains[start:good], blobs[start:good]))
                opened.append(None)
        return opened

    def _tag(self, domain: Domain, plain: bytes) -> bytes:
        return tag_for(self._context.keys, self._context.vault_id, domain, plain)


def tag_for(keys: VaultKeys, vault_id: str, domain: Domain, plain: bytes) -> bytes:
    """The hmac-only blob tag of ``plain`` under ``domain`` and ``keys`` (rotation re-tags with the new keys)."""
    return hmac.digest(keys.mac.buffer(), _TAG_PREFIX + domain.aad(vault_id) + plain, "sha256")


def tables_exist(connection: sqlite3.Connection) -> bool:
    """Whether this vault holds the tier's tables."""
    names = {row[0] for row in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
    return all(table in names for table in TIER_TABLES)


def create_tables(connection: sqlite3.Connection) -> None:
    """Create the tier's tables if absent (inside the caller's transaction)."""
    for statement in _DDL:
        connection.execute(statement)


def read_generation(connection: sqlite3.Connection) -> int | None:
    """The stored codebook generation (None: no tables, or no codebook built yet)."""
    if not tables_exist(connection):
        return None
    row = connection.execute(f"SELECT blob FROM {META_TABLE} WHERE name = 'generation'").fetchone()  # noqa: S608
    if row is None:
        return None
    try:
        return int(bytes(row[0]).decode("ascii"))
    except (UnicodeDecodeError, ValueError):
        return -1  # unreadable: verify names it, the tier rebuilds


@dataclass(frozen=True, slots=True)
class StoredArtifacts:
    """What one generation's meta rows hold, opened (None where an artifact failed or is missing)."""

    generation: int
    header: bytes | None
    centroids: bytes | None
    codebook: bytes | None
    failed: tuple[str, ...]


def read_artifacts(connection: sqlite3.Connection, envelope: Envelope) -> StoredArtifacts | None:
    """Open the stored header, centroid set and codebook (None: nothing stored)."""
    generation = read_generation(connection)
    if generation is None:
        return None
    blobs = {str(name): bytes(blob) for name, blob in connection.execute(f"SELECT name, blob FROM {META_TABLE}")}  # noqa: S608
    if generation < 0:
        return StoredArtifacts(generation, None, None, None, ("generation",))
    opened: dict[str, bytes | None] = {}
    failed: list[str] = []
    if not any(name in blobs for name in ("header", "centroids", "codebook")):
        return StoredArtifacts(generation, None, None, None, ())  # emptied (rotation, repair): nothing to trust
    for name in ("header", "centroids", "codebook"):
        blob = blobs.get(name)
        plain = None if blob is None else envelope.open(artifact_domain(generation, name), blob)
        if plain is None:
            failed.append(name)
        opened[name] = plain
    return StoredArtifacts(generation, opened["header"], opened["centroids"], opened["codebook"], tuple(failed))


def write_artifacts(
    connection: sqlite3.Connection, envelope: Envelope, generation: int, artifacts: dict[str, bytes]
) -> None:
    """Replace the meta rows with ``generation`` and its sealed artifacts (inside the caller's transaction)."""
    connection.execute(f"DELETE FROM {META_TABLE}")  # noqa: S608
    rows = [("generation", str(generation).encode("ascii"))]
    rows += [(name, envelope.close(artifact_domain(generation, name), plain)) for name, plain in artifacts.items()]
    connection.executemany(f"INSERT INTO {META_TABLE} (name, blob) VALUES (?, ?)", rows)  # noqa: S608


def write_rows(
    connection: sqlite3.Connection, envelope: Envelope, generation: int, rows: Iterable[tuple[int, bytes]]
) -> None:
    """Upsert code rows ``(seq, plaintext)`` sealed under the generation (inside the caller's transaction)."""
    connection.executemany(
        f"INSERT OR REPLACE INTO {ROWS_TABLE} (seq, blob) VALUES (?, ?)",  # noqa: S608
        [(seq, envelope.close(row_domain(generation, seq), plain)) for seq, plain in rows],
    )


def delete_rows(connection: sqlite3.Connection, seqs: Iterable[int]) -> None:
    """Drop the code rows of ``seqs`` (inside the caller's transaction)."""
    connection.executemany(f"DELETE FROM {ROWS_TABLE} WHERE seq = ?", [(seq,) for seq in seqs])  # noqa: S608
