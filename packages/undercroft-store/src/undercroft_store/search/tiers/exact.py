"""Exact unit rows on demand: the second stage of the index tiers, opened per candidate instead of per vault.

Each embedding is read and opened under ``{id}/emb`` (sealed vaults) only when a search asks for it, and
kept in a bounded RAM cache dropped whenever the store's generation moves. A blob that fails to open is
`RecordTampered`, exactly as in the full-scan cache.
"""

from __future__ import annotations

from typing import Final

import numpy as np
from numpy.typing import NDArray
from undercroft_vault import BatchOpenFailed, Domain

from undercroft_store.errors import RecordTampered
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.reading import report_tamper

__all__ = ["ExactRows", "open_embeddings", "open_rows"]

#: Rows kept between searches of one generation (~1.5 KB each at 384 dimensions: at most ~50 MB).
_CACHE_ROWS: Final = 32_768
_CHUNK: Final = 500
_SCALE_BYTES: Final = 4
_ZERO_SCALE: Final = b"\x00"  # a zero scale unpacks to a zero row


def open_rows(context: VaultContext, seqs: list[int]) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """``(present seqs, their unit float32 rows)`` in the order given (another vector space: a zero row).

    Each chunk's blobs are opened in one batched call (`Sealer.open_many`: AEAD under ``{id}/emb`` on a sealed
    vault, the first that fails is `RecordTampered`); the unpacking, the scale check and the normalisation
    run once over the whole request, with no per-row array."""
    dimension = context.embedder.dimension
    width = _SCALE_BYTES + dimension
    plain_of: dict[int, bytes] = {}
    for start in range(0, len(seqs), _CHUNK):
        chunk = seqs[start : start + _CHUNK]
        marks = ",".join("?" * len(chunk))
        query = f"SELECT seq, id, embedding FROM drawers WHERE seq IN ({marks})"  # noqa: S608
        rows = context.connection.execute(query, chunk).fetchall()
        if context.sealed:
            domains = [Domain.embedding(drawer_id) for _, drawer_id, _ in rows]
            try:
                plains = context.sealer.open_many(domains, [blob for _, _, blob in rows])
            except BatchOpenFailed as error:
                drawer_id = rows[error.index][1]
                row = context.connection.execute("SELECT meta_json FROM drawers WHERE id = ?", (drawer_id,)).fetchone()
                report_tamper(context, drawer_id, bytes(row[0]) if row is not None else b"")
                raise RecordTampered(f"embedding of {drawer_id} in vault {context.vault_id!r}: {error}") from None
        else:
            plains = [bytes(blob) for _, _, blob in rows]
        for (seq, _, _), plain in zip(rows, plains, strict=True):
            plain_of[int(seq)] = plain
    present = [seq for seq in seqs if seq in plain_of]
    # Another vector space (a blob of another width): a zero row, semantically invisible until repair re-embeds.
    packed = b"".join(
        plain if len(plain) == width else _ZERO_SCALE * width for plain in map(plain_of.__getitem__, present)
    )
    matrix = np.frombuffer(packed, dtype=np.uint8).reshape(len(present), width)
    scales = matrix[:, :_SCALE_BYTES].copy().view("<f4").reshape(-1).astype(np.float32)
    valid = np.isfinite(scales) & (scales >= 0)
    vectors = matrix[:, _SCALE_BYTES:].view(np.int8).astype(np.float32) * np.where(valid, scales, 0.0)[:, None]
    norms = np.linalg.norm(vectors, axis=1)
    vectors /= np.where(norms > 0.0, norms, 1.0)[:, None]
    return np.asarray(present, dtype=np.int64), vectors.astype(np.float32, copy=False)


def open_embeddings(context: VaultContext, seqs: list[int]) -> dict[int, NDArray[np.float32]]:
    """`open_rows` as ``seq → unit row`` (training and incremental coding)."""
    present, vectors = open_rows(context, seqs)
    return dict(zip(present.tolist(), vectors, strict=True))


class ExactRows:
    """The bounded, generation-scoped cache of exact unit rows."""

    def __init__(self) -> None:
        """Empty; rows are opened as searches ask for them."""
        self._rows: dict[int, NDArray[np.float32]] = {}
        self.opened = 0

    def ram_bytes(self) -> int:
        """RAM the cached rows hold now."""
        return sum(row.nbytes for row in self._rows.values())

    def clear(self) -> None:
        """Drop every row (the store's generation moved, or the vault closed)."""
        self._rows.clear()

    def matrix(self, context: VaultContext, seqs: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """``(present seqs, their unit rows)`` in the order given; seqs no longer present are dropped."""
        wanted = [int(seq) for seq in seqs]
        cached = self._rows
        missing = [seq for seq in wanted if seq not in cached]
        fresh_seqs, fresh = open_rows(context, missing) if missing else (np.zeros(0, dtype=np.int64), None)
        self.opened += len(fresh_seqs)
        if len(missing) == len(wanted):  # cold: the opened rows are already in the order asked
            present, unit = fresh_seqs, fresh
        else:
            opened = dict(zip(fresh_seqs.tolist(), range(len(fresh_seqs)), strict=True))
            present_list = [seq for seq in wanted if seq in cached or seq in opened]
            picked = [cached[seq] if seq in cached else fresh[opened[seq]] for seq in present_list]  # type: ignore[index]
            present = np.asarray(present_list, dtype=np.int64)
            unit = np.stack(picked).astype(np.float32) if picked else None
        if len(cached) + len(fresh_seqs) > _CACHE_ROWS:
            cached.clear()
        if fresh is not None and len(fresh_seqs) <= _CACHE_ROWS:
            cached.update(zip(fresh_seqs.tolist(), fresh, strict=True))
        if unit is None or not len(present):
            return np.zeros(0, dtype=np.int64), np.zeros((0, context.embedder.dimension), dtype=np.float32)
        return present, unit
