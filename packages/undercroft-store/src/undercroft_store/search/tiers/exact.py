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

__all__ = ["ExactRows", "open_embeddings"]

#: Rows kept between searches of one generation (~1.5 KB each at 384 dimensions: at most ~50 MB).
_CACHE_ROWS: Final = 32_768
_CHUNK: Final = 500
_SCALE_BYTES: Final = 4


def open_embeddings(context: VaultContext, seqs: list[int]) -> dict[int, NDArray[np.float32]]:
    """Unit float32 rows of ``seqs`` still present (another vector space: a zero row).

    Each chunk's blobs are opened in one batched call (`Sealer.open_many`: AEAD under ``{id}/emb`` on a sealed
    vault, the first that fails is `RecordTampered`); the unpacking, the scale check and the normalisation
    run once over the whole chunk."""
    dimension = context.embedder.dimension
    width = _SCALE_BYTES + dimension
    found: dict[int, NDArray[np.float32]] = {}
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
        opened: list[int] = []
        packed: list[bytes] = []
        for (seq, _, _), plain in zip(rows, plains, strict=True):
            if len(plain) != width:  # another vector space: semantically invisible until repair re-embeds it
                found[int(seq)] = np.zeros(dimension, dtype=np.float32)
                continue
            opened.append(int(seq))
            packed.append(plain)
        if not opened:
            continue
        matrix = np.frombuffer(b"".join(packed), dtype=np.uint8).reshape(len(opened), width)
        scales = matrix[:, :_SCALE_BYTES].copy().view("<f4").reshape(-1).astype(np.float32)
        valid = np.isfinite(scales) & (scales >= 0)
        vectors = matrix[:, _SCALE_BYTES:].view(np.int8).astype(np.float32) * np.where(valid, scales, 0.0)[:, None]
        norms = np.linalg.norm(vectors, axis=1)
        vectors /= np.where(norms > 0.0, norms, 1.0)[:, None]
        for position, seq in enumerate(opened):
            found[seq] = vectors[position]
    return found


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
        missing = [seq for seq in wanted if seq not in self._rows]
        fresh = open_embeddings(context, missing) if missing else {}
        self.opened += len(fresh)
        picked = [
            fresh[seq] if seq in fresh else self._rows[seq] for seq in wanted if seq in fresh or seq in self._rows
        ]
        present = [seq for seq in wanted if seq in fresh or seq in self._rows]
        if len(self._rows) + len(fresh) > _CACHE_ROWS:
            self._rows.clear()
        self._rows.update(fresh)
        if not present:
            return np.zeros(0, dtype=np.int64), np.zeros((0, context.embedder.dimension), dtype=np.float32)
        return np.asarray(present, dtype=np.int64), np.stack(picked).astype(np.float32)
