"""Per-seq change marks of a vault's drawers, for diffing the search caches across store generations.

A drawer's HMAC ``tag`` covers its id, meta and content, so a changed tag is a changed bag. Embeddings sit
outside the HMAC envelope (repair and migration re-embed in place), so the embedding cache marks each row by
a digest of its tag AND its stored embedding blob. Marks are never evidence of integrity: a row whose mark
moved is re-read through the verified path, and everything a search returns is read verified again.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray
from undercroft_vault import Domain, IntegrityFailure

from undercroft_store.errors import EmbeddingRefused, RecordTampered
from undercroft_store.kernel._internal.reading import report_tamper
from undercroft_store.kernel._internal.transaction import readable
from undercroft_store.kernel._internal.vectors import unpack_row
from undercroft_store.store import VaultStore

__all__ = [
    "REBUILD_SHARE",
    "SMALL_VAULT",
    "EmbeddingRows",
    "decode_codes",
    "decode_rows",
    "embedding_rows",
    "row_mark",
    "row_norms",
    "tag_marks",
    "tags_of",
    "too_many",
    "unit_rows",
]

#: A diff touching more than this share of the vault is replaced by a full rebuild (about as cheap by then).
REBUILD_SHARE: Final = 0.25
#: A vault this small is rebuilt whole: each search there hydrates its whole population anyway.
SMALL_VAULT: Final = 256


def too_many(touched: int, population: int) -> bool:
    """Whether a diff touching ``touched`` seqs of ``population`` should give way to a full rebuild."""
    return population <= SMALL_VAULT or touched > REBUILD_SHARE * population


def tag_marks(source: object) -> dict[int, bytes] | None:
    """``seq → tag`` of every drawer (None: the source is not a vault store, so nothing can be diffed)."""
    if not isinstance(source, VaultStore):
        return None
    connection = readable(source._context).connection
    return {int(seq): bytes(tag) for seq, tag in connection.execute("SELECT seq, tag FROM drawers")}


#: Seqs bound per ``IN (...)`` read of a change's rows.
_IN_BATCH: Final = 500


def _in_batches(seqs: set[int] | list[int]) -> list[list[int]]:
    ordered = sorted(seqs)
    return [ordered[first : first + _IN_BATCH] for first in range(0, len(ordered), _IN_BATCH)]


def tags_of(source: VaultStore, seqs: set[int]) -> dict[int, bytes]:
    """``seq → tag`` of those of ``seqs`` still in the vault (a change feed's rows, read in clear)."""
    connection = readable(source._context).connection
    found: dict[int, bytes] = {}
    for batch in _in_batches(seqs):
        sql = f"SELECT seq, tag FROM drawers WHERE seq IN ({','.join('?' * len(batch))})"  # noqa: S608 - marks only
        found.update((int(seq), bytes(tag)) for seq, tag in connection.execute(sql, batch))
    return found


@dataclass(frozen=True, slots=True)
class EmbeddingRows:
    """Every drawer's row as stored, ascending seq, with its mark (digest of tag and embedding blob)."""

    seqs: NDArray[np.int64]
    marks: list[bytes]
    ids: list[str]
    blobs: list[bytes]
    metas: list[bytes]


def embedding_rows(source: object, seqs: set[int] | None = None) -> EmbeddingRows | None:
    """One read of every drawer's seq, id, tag, embedding and meta, ascending seq — or of just those of
    ``seqs`` still in the vault (None: not a vault store)."""
    if not isinstance(source, VaultStore):
        return None
    connection = readable(source._context).connection
    columns = "SELECT seq, id, tag, embedding, meta_json FROM drawers"
    if seqs is None:
        rows = connection.execute(f"{columns} ORDER BY seq").fetchall()
    else:
        rows = []
        for batch in _in_batches(seqs):
            holes = ",".join("?" * len(batch))
            rows += connection.execute(f"{columns} WHERE seq IN ({holes}) ORDER BY seq", batch).fetchall()
    marks = [row_mark(bytes(tag), bytes(blob)) for _, _, tag, blob, _ in rows]
    return EmbeddingRows(
        seqs=np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows)),
        marks=marks,
        ids=[row[1] for row in rows],
        blobs=[bytes(row[3]) for row in rows],
        metas=[bytes(row[4]) for row in rows],
    )


def row_mark(tag: bytes, blob: bytes) -> bytes:
    """A row's change mark: a digest of its tag and its stored embedding blob."""
    return hashlib.blake2b(tag + blob, digest_size=16).digest()


def decode_rows(source: VaultStore, rows: EmbeddingRows, positions: list[int]) -> NDArray[np.float32]:
    """The unit float32 rows at ``positions`` of ``rows``: each sealed blob opened under ``{id}/emb`` (a
    failure is `RecordTampered`, as in `VaultStore.iter_embeddings`); a blob of another vector space is zero."""
    return unit_rows(*decode_codes(source, rows, positions))


def decode_codes(
    source: VaultStore, rows: EmbeddingRows, positions: list[int]
) -> tuple[NDArray[np.int8], NDArray[np.float32]]:
    """`decode_rows` before dequantising: the int8 codes and per-row scales (zero for another vector space)."""
    context = readable(source._context)
    dimension = context.embedder.dimension
    codes = np.zeros((len(positions), dimension), dtype=np.int8)
    scales = np.zeros(len(positions), dtype=np.float32)
    for row, position in enumerate(positions):
        drawer_id, blob = rows.ids[position], rows.blobs[position]
        try:
            packed = context.sealer.open(Domain.embedding(drawer_id), blob) if context.sealed else blob
        except IntegrityFailure as error:
            report_tamper(context, drawer_id, rows.metas[position])
            raise RecordTampered(f"embedding of {drawer_id} in vault {context.vault_id!r}: {error}") from None
        try:
            scales[row], codes[row] = unpack_row(packed, dimension)
        except EmbeddingRefused:
            pass  # semantically invisible until repair re-embeds it (a blob that opened is authentic)
    return codes, scales


def _dequantised(codes: NDArray[np.int8], scales: NDArray[np.float32]) -> NDArray[np.float32]:
    vectors = codes.astype(np.float32)
    vectors *= scales[:, np.newaxis]  # in place: the same products, one matrix-sized buffer fewer
    return vectors


def row_norms(codes: NDArray[np.int8], scales: NDArray[np.float32]) -> NDArray[np.float32]:
    """The norm `unit_rows` divides each dequantised row by (zero for a zero row), bit for bit."""
    norms: NDArray[np.float32] = np.linalg.norm(_dequantised(codes, scales), axis=1)
    return norms


def unit_rows(
    codes: NDArray[np.int8], scales: NDArray[np.float32], norms: NDArray[np.float32] | None = None
) -> NDArray[np.float32]:
    """Dequantise and normalise rows (zero rows stay zero); row by row, so a subset matches the whole.

    ``norms``: the rows' `row_norms` computed before (the search snapshot stores them), saving that pass."""
    vectors = _dequantised(codes, scales)
    if norms is None:
        norms = np.linalg.norm(vectors, axis=1)
    vectors /= np.where(norms > 0.0, norms, 1.0)[:, np.newaxis]
    return vectors
