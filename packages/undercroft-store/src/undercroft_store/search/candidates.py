"""Candidate generation: the decrypt-once embedding cache, the pool sizing, and the default full-scan tier.

Sealed embeddings are decrypted once per open into a float32 matrix of unit rows; a committed write by this
or any other connection bumps the generation and the next search diffs the rows (tag and embedding blob per
seq) and opens only the new or changed ones again.

The pool is two-stage. Stage 1 draws at least ``population / UNDERCROFT_POOL_DIV`` candidates (never fewer
than the hydration size); stage 2 cuts them back to the hydration size by exact cosine. The hydration size
is ``max(256, depth · 32)`` — floored, because on a sealed vault hydration is the only door through which
BM25 evidence reaches fusion. A search pinned by ``ranked_at`` sizes it for ``max(depth, TILED_DEPTH)``
(3,200 for every page ending at rank 100 or above it): BM25 takes its statistics from the pool, so a pool
sized by the page would rank a shallow page differently from a deep one and pinned pages would not tile one
ranking. A declared scope sizes the pool by its own population; an exclusion keeps the unscoped geometry.
A scope no larger than the hydration size is scanned exactly (every member hydrated).

When the scope is larger than the hydration size, lexical evidence joins the cut: the scope's drawers
holding the query's rarest terms (`postings.Postings.rare_holders`, at most the hydration size of them) are
appended to the cosine candidates (`joined`), so a drawer whose words answer the query reaches BM25 and
fusion whatever its cosine rank. On an hmac-only vault above ``UNDERCROFT_FTS_PREFILTER_MIN`` those joiners come
from its FTS5 table instead (`fts.fts_joiners`), and the RAM postings are never built.

The scaled tiers (`search.tiers`: PQ/IVF, HNSW) implement :class:`CandidateTier`; everything downstream is identical.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

import numpy as np
from numpy.typing import NDArray

from undercroft_store.search._internal.change_feed import change_feed
from undercroft_store.search._internal.row_marks import (
    EmbeddingRows,
    decode_codes,
    decode_rows,
    embedding_rows,
    too_many,
    unit_rows,
)
from undercroft_store.store import EmbeddingMatrix, VaultStore

__all__ = [
    "HYDRATION_FLOOR",
    "HYDRATION_PER_RANK",
    "TILED_DEPTH",
    "CandidateTier",
    "Candidates",
    "EmbeddingCache",
    "EmbeddingSource",
    "FullFill",
    "FullScanTier",
    "PoolPlan",
    "joined",
    "plan_pool",
]

#: Fewest candidates hydrated for any page.
HYDRATION_FLOOR: Final = 256
#: Candidates hydrated per rank of depth.
HYDRATION_PER_RANK: Final = 32
#: Pinned pages (``ranked_at``) ending at this rank or above it are slices of ONE ranking: the pool of a
#: pinned search is sized for at least this depth, whatever the page.
TILED_DEPTH: Final = 100


class EmbeddingSource(Protocol):
    """What the cache reads from a vault: its change counter and every embedding, decrypted once."""

    @property
    def generation(self) -> int:
        """Bumped on every committed write (any connection)."""
        ...

    def iter_embeddings(self) -> EmbeddingMatrix:
        """Every embedding: seq (ascending), id, int8 codes and per-vector scales."""
        ...


@dataclass(frozen=True, slots=True)
class FullFill:
    """What a full fill decoded: the rows (ascending seq) as int8 codes and scales, with their change marks."""

    generation: int
    seqs: NDArray[np.int64]
    codes: NDArray[np.int8]
    scales: NDArray[np.float32]
    marks: dict[int, bytes]


@dataclass(frozen=True, slots=True)
class _Snapshot:
    generation: int
    seqs: NDArray[np.int64]
    unit: NDArray[np.float32]
    marks: dict[int, bytes] | None  # seq → digest of (tag, embedding blob); None: not diffable
    position: int | None = None  # in the handle's change feed (None: no feed)


class EmbeddingCache:
    """The decrypt-once RAM cache of one vault's embeddings, as unit float32 rows ordered by seq.

    When the generation moves, a vault store's rows are diffed by a digest of each row's tag and sealed
    embedding blob: only new or changed rows are opened again (a full reload past a quarter of the vault).
    """

    def __init__(self) -> None:
        """An empty cache; the first search fills it."""
        self._snapshot: _Snapshot | None = None
        # Rows past the snapshot's own, where appends land without copying the matrix (its unit and seqs are
        # views of these): rows a snapshot holds are never written again, so an older view stays whole.
        self._spare: tuple[NDArray[np.int64], NDArray[np.float32]] | None = None
        #: Refreshes for a moved generation (full or incremental), and rows opened by incremental ones.
        self.rebuilds = 0
        self.reopened = 0
        #: Set by the search snapshot: a full fill then keeps the int8 codes it decoded (`FullFill`), which the
        #: snapshot seals and then releases (they are the matrix's stored form, a quarter of its size).
        self.keep_codes = False
        self.full_fill: FullFill | None = None

    def load(self, source: EmbeddingSource) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """``(seqs, unit rows)`` for the source's current generation, refreshed only when it moved."""
        generation = source.generation
        snapshot = self._snapshot
        if snapshot is None or snapshot.generation != generation:
            snapshot = self._refresh(source, generation, snapshot)
            self._snapshot = snapshot
            self.rebuilds += 1
        return snapshot.seqs, snapshot.unit

    def _refresh(self, source: EmbeddingSource, generation: int, old: _Snapshot | None) -> _Snapshot:
        feed = change_feed(source)
        touched, position = feed.since(None if old is None else old.position) if feed is not None else (None, None)
        if touched is not None and old is not None and old.marks is not None and isinstance(source, VaultStore):
            if not too_many(len(touched), len(old.marks)):
                return self._apply(source, generation, old, old.marks, touched, position)
        rows = embedding_rows(source)
        if rows is None or not isinstance(source, VaultStore):
            matrix = source.iter_embeddings()
            order = np.argsort(matrix.seqs, kind="stable")
            unit = unit_rows(matrix.codes[order], matrix.scales[order])
            return _Snapshot(generation, np.ascontiguousarray(matrix.seqs[order]), unit, None)
        marks = dict(zip(rows.seqs.tolist(), rows.marks, strict=True))
        known = old.marks if old is not None else None
        every = list(range(len(rows.marks)))
        if old is None or known is None:
            return self._full(source, generation, rows, marks, position)
        stale = [i for i, (seq, mark) in enumerate(marks.items()) if known.get(seq) != mark]
        if too_many(len(stale) + len(known.keys() - marks.keys()), len(every)):
            return self._full(source, generation, rows, marks, position)
        # Unchanged rows are copied from the old matrix in one gather (a new array: a caller may still hold
        # the old one); only the stale rows, overwritten below, are opened again.
        if len(old.seqs) == 0:
            return self._full(source, generation, rows, marks, position)
        unit = old.unit[np.minimum(np.searchsorted(old.seqs, rows.seqs), len(old.seqs) - 1)]
        if stale:
            unit[stale] = decode_rows(source, rows, stale)
            self.reopened += len(stale)
        return _Snapshot(generation, rows.seqs, unit, marks, position)

    def _full(
        self, source: VaultStore, generation: int, rows: EmbeddingRows, marks: dict[int, bytes], position: int | None
    ) -> _Snapshot:
        """Every row opened again (kept as codes too when the snapshot asked: `keep_codes`)."""
        codes, scales = decode_codes(source, rows, list(range(len(rows.marks))))
        self.full_fill = FullFill(generation, rows.seqs, codes, scales, marks) if self.keep_codes else None
        return _Snapshot(generation, rows.seqs, unit_rows(codes, scales), marks, position)

    def adopt(
        self,
        generation: int,
        seqs: NDArray[np.int64],
        unit: NDArray[np.float32],
        marks: dict[int, bytes],
        position: int | None,
    ) -> None:
        """Hold ``unit`` (rows by ascending ``seqs``, each row's change mark in ``marks``) as the matrix of
        ``generation``: a verified snapshot's, read as of the handle's change-feed ``position``."""
        self._snapshot = _Snapshot(generation, seqs, unit, marks, position)
        self._spare = None

    def _apply(
        self,
        source: VaultStore,
        generation: int,
        old: _Snapshot,
        known: dict[int, bytes],
        touched: set[int],
        position: int | None,
    ) -> _Snapshot:
        """``old`` with just the rows the change feed names re-read: O(change) reads, not O(vault)."""
        rows = embedding_rows(source, touched)
        assert rows is not None  # a vault store
        stale = [
            i
            for i, (seq, mark) in enumerate(zip(rows.seqs.tolist(), rows.marks, strict=True))
            if known.get(seq) != mark
        ]
        fresh = decode_rows(source, rows, stale) if stale else np.zeros((0, old.unit.shape[1]), dtype=np.float32)
        self.reopened += len(stale)
        if len(stale) == len(rows.seqs) and (not len(old.seqs) or min(touched) > int(old.seqs[-1])):
            seqs, unit = self._appended(old, rows.seqs, fresh)
        else:
            self._spare = None
            seqs, unit = _merged(old, touched, rows, stale, fresh)
        # The marks move in place (no copy of a vault-sized dictionary) only once the new matrix exists: a
        # failure above leaves the old snapshot whole, marks included.
        for seq in touched:
            known.pop(seq, None)
        known.update(zip(rows.seqs.tolist(), rows.marks, strict=True))
        return _Snapshot(generation, seqs, unit, known, position)

    def _appended(
        self, old: _Snapshot, seqs: NDArray[np.int64], unit: NDArray[np.float32]
    ) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        """``old`` followed by new rows (higher seqs): written past its end in the spare buffers (grown by a
        quarter when full), so an append costs its own rows, not a copy of the matrix."""
        held, added = len(old.seqs), len(seqs)
        spare = self._spare
        if spare is None or spare[1].shape[0] < held + added or old.unit.base is not spare[1]:
            capacity = held + added + max(64, (held + added) // 4)
            grown = (np.empty(capacity, dtype=np.int64), np.empty((capacity, old.unit.shape[1]), dtype=np.float32))
            grown[0][:held], grown[1][:held] = old.seqs, old.unit
            spare = self._spare = grown
        spare[0][held : held + added] = seqs
        spare[1][held : held + added] = unit
        return spare[0][: held + added], spare[1][: held + added]

    def clear(self) -> None:
        """Drop the cached matrix (closing a vault wipes it with the keys)."""
        self._snapshot = None
        self._spare = None
        self.full_fill = None


def _merged(
    old: _Snapshot, touched: set[int], rows: EmbeddingRows, stale: list[int], fresh: NDArray[np.float32]
) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """The old rows minus every touched seq, plus the touched seqs still present (their stale rows ``fresh``,
    the others — tag and blob unchanged — copied from the old matrix), ascending seq."""
    gone = np.fromiter(touched, dtype=np.int64, count=len(touched))
    kept = ~np.isin(old.seqs, gone)
    present = rows.seqs
    rows_unit = np.zeros((len(present), old.unit.shape[1]), dtype=np.float32)
    if len(present):
        same = np.ones(len(present), dtype=bool)
        same[stale] = False
        if same.any():
            at = np.minimum(np.searchsorted(old.seqs, present[same]), max(len(old.seqs) - 1, 0))
            rows_unit[same] = old.unit[at]
        rows_unit[~same] = fresh
    kept_seqs = old.seqs[kept]
    if len(present) and (not len(kept_seqs) or present[0] > kept_seqs[-1]):
        # appends only (the common case): concatenate, no re-sort
        return np.concatenate((kept_seqs, present)), np.concatenate((old.unit[kept], rows_unit))
    seqs = np.concatenate((kept_seqs, present))
    order = np.argsort(seqs, kind="stable")
    return seqs[order], np.concatenate((old.unit[kept], rows_unit))[order]


@dataclass(frozen=True, slots=True)
class PoolPlan:
    """How many candidates each stage draws for one search."""

    stage_one: int
    hydrate: int
    exact: bool


def plan_pool(scope_size: int, geometry: int, depth: int, pool_div: int | None) -> PoolPlan:
    """Size the pool: hydration ``max(256, depth·32)``; stage 1 at least ``geometry / pool_div``."""
    hydrate = max(HYDRATION_FLOOR, depth * HYDRATION_PER_RANK)
    if scope_size <= hydrate:
        return PoolPlan(stage_one=scope_size, hydrate=scope_size, exact=True)
    wide = geometry // pool_div if pool_div else 0
    stage_one = min(scope_size, max(hydrate, wide))
    return PoolPlan(stage_one=stage_one, hydrate=hydrate, exact=False)


@dataclass(frozen=True, slots=True)
class Candidates:
    """The candidates to hydrate, best cosine first, with their exact cosines."""

    seqs: NDArray[np.int64]
    cosines: NDArray[np.float32]
    stage_one: int


class CandidateTier(Protocol):
    """A candidate generator: the scope's members most similar to the query, exact cosine attached."""

    @property
    def name(self) -> str:
        """The tier's name, as the search trace reports it."""
        ...

    def candidates(self, query: NDArray[np.float32], scope_seqs: NDArray[np.int64], plan: PoolPlan) -> Candidates:
        """Draw ``plan.stage_one`` members of the scope, cut to ``plan.hydrate`` by exact cosine."""
        ...

    def cosines(self, query: NDArray[np.float32], seqs: NDArray[np.int64]) -> NDArray[np.float32]:
        """Exact cosines of ``seqs`` (ascending, each live) to ``query``: the joiners' and content channel's."""
        ...


class FullScanTier:
    """The default tier: exact cosine over the scope's rows of the cached matrix (stage 1 is already exact)."""

    name = "full-scan"

    def __init__(self, seqs: NDArray[np.int64], unit: NDArray[np.float32]) -> None:
        """Serve candidates from a cache snapshot (``seqs`` ascending, one unit row each)."""
        self._seqs = seqs
        self._unit = unit

    def candidates(self, query: NDArray[np.float32], scope_seqs: NDArray[np.int64], plan: PoolPlan) -> Candidates:
        """Exact cosine over the scope, the best ``plan.hydrate`` kept (all of a small scope)."""
        rows = _members(self._seqs, scope_seqs)
        whole = len(rows) == len(self._seqs)
        cosines = (self._unit @ query) if whole else (self._unit[rows] @ query)
        keep = min(plan.hydrate, len(rows))
        if keep < len(rows):
            top = np.argpartition(-cosines, keep - 1)[:keep]
        else:
            top = np.arange(len(rows))
        # Best cosine first; ties by write order so the draw is deterministic.
        order = top[np.lexsort((top, -cosines[top]))]
        chosen = rows[order] if not whole else order
        return Candidates(seqs=self._seqs[chosen], cosines=cosines[order].astype(np.float32), stage_one=len(rows))

    def cosines(self, query: NDArray[np.float32], seqs: NDArray[np.int64]) -> NDArray[np.float32]:
        """Exact cosines of the cached rows of ``seqs`` (ascending, each one cached) to ``query``."""
        found: NDArray[np.float32] = (self._unit[np.searchsorted(self._seqs, seqs)] @ query).astype(np.float32)
        return found


def joined(drawn: Candidates, seqs: NDArray[np.int64], cosines: NDArray[np.float32]) -> Candidates:
    """``drawn`` followed by those of ``seqs`` it does not hold, best cosine first (ties by write order)."""
    # Membership by a binary search over the drawn seqs, not `np.isin`: its sorting path calls `np.unique`,
    # whose first plain call imports `numpy.ma` (~10 ms of a cold CLI search, issue 18 §4).
    held = np.sort(drawn.seqs)
    at = np.minimum(np.searchsorted(held, seqs), max(len(held) - 1, 0))
    fresh = held[at] != seqs if len(held) else np.ones(len(seqs), dtype=np.bool_)
    seqs, cosines = seqs[fresh], cosines[fresh]
    order = np.lexsort((seqs, -cosines))
    return Candidates(
        seqs=np.concatenate((drawn.seqs, seqs[order])),
        cosines=np.concatenate((drawn.cosines, cosines[order])).astype(np.float32),
        stage_one=drawn.stage_one,
    )


def _members(seqs: NDArray[np.int64], wanted: NDArray[np.int64]) -> NDArray[np.intp]:
    if len(wanted) == len(seqs) and np.array_equal(wanted, seqs):
        return np.arange(len(seqs), dtype=np.intp)  # the whole vault: one comparison, no binary searches
    rows = np.searchsorted(seqs, wanted)
    inside = rows < len(seqs)
    rows = rows[inside]
    found: NDArray[np.intp] = rows[seqs[rows] == wanted[inside]]
    return found
