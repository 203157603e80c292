"""The PQ/IVF candidate tier (``UNDERCROFT_RETRIEVAL=pq``): sealed code rows, a decrypt-once RAM index, an
exact-cosine second stage.

Stage 1 ADC-scans product-quantised codes (48 B/vector at 384 dimensions) in the quarter of the IVF lists
nearest the query (``UNDERCROFT_IVF_NPROBE`` declares another count; one list, i.e. flat PQ, below
``UNDERCROFT_IVF_MIN`` drawers) and draws ``plan.stage_one`` candidates — at least live/``UNDERCROFT_POOL_DIV``,
sized by the scope for a declared scope, which is handed to faiss as an id selector so members are drawn,
never filtered afterwards (a scoped draw that comes back short probes every list). Stage 2 opens just those
candidates' embeddings (`exact.ExactRows`) and cuts them back to the hydration size by exact cosine, so the
pipeline downstream (BM25 joiners, verified hydration, fusion) is the full-scan tier's, unchanged.

The RAM index is built once per handle from the sealed tables (`kernel.tier_tables`) and kept in step with the vault by
a diff of change marks (a digest of each drawer's tag and stored embedding blob) whenever the store's
generation moves: rows of drawers deleted, forgotten, expired or rewritten are dropped, new or changed ones
are encoded with the current codebook (no retraining). Every write path is covered by that one diff, because
every one of them changes a drawer row. A rotation re-keys every tag and blob; its hook
(`integrity.drop_on_rotation`) drops the tables in the rotation's own transaction. Training draws a sample
capped per wing
(``UNDERCROFT_TRAIN_SOURCE_CAP``) ordered by a keyed digest of each seq (so it moves with a rotation), and
retrains — a new codebook generation — when the corpus has doubled since the last training.

Below `TRAIN_MIN` drawers nothing is trained: the tier opens the scope's rows and ranks them exactly.
An artifact or code row that fails its seal is never used: the drawer is encoded again in RAM from its
verified embedding, nothing is written over the evidence, and verify names it until repair rebuilds.
"""

from __future__ import annotations

import hashlib
import hmac
import json
from dataclasses import dataclass
from typing import Final

import numpy as np
from numpy.typing import NDArray
from undercroft_index import Codebook, IndexRefused, ProbeIndex, ivf_lists, train_codebook

from undercroft_store.kernel import tier_tables as tables
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.search.candidates import Candidates, PoolPlan
from undercroft_store.search.tiers.exact import ExactRows, open_embeddings
from undercroft_store.store import VaultStore

__all__ = ["MARK_BYTES", "TRAIN_MIN", "TRAIN_SAMPLE", "PQTier", "TierOptions", "live_marks", "ranked_exact"]

#: Fewest live drawers a codebook is trained on (below: exact over the scope's opened rows).
TRAIN_MIN: Final = 1024
#: Most vectors one training draws.
TRAIN_SAMPLE: Final = 8192
#: Bytes of the change mark stored at the front of each code row.
MARK_BYTES: Final = 16
#: Retrain once the live corpus is this many times the one the codebook was trained on.
_RETRAIN_GROWTH: Final = 2


@dataclass(frozen=True, slots=True)
class TierOptions:
    """The tier's declarations (``UNDERCROFT_IVF_MIN``, ``_IVF_NPROBE``, ``_TRAIN_SOURCE_CAP``)."""

    ivf_min: int = 8192
    nprobe: int | None = None
    train_source_cap: int | None = 4


@dataclass(frozen=True, slots=True)
class LiveMarks:
    """Every live drawer: seq (ascending), change mark, wing."""

    seqs: NDArray[np.int64]
    marks: NDArray[np.uint8]  # (n, MARK_BYTES)
    wings: list[str]


def live_marks(context: VaultContext) -> LiveMarks:
    """One read of every drawer's seq, tag, embedding blob and wing (the marks the diff compares)."""
    rows = context.connection.execute("SELECT seq, tag, embedding, wing FROM drawers ORDER BY seq").fetchall()
    marks = np.zeros((len(rows), MARK_BYTES), dtype=np.uint8)
    for i, (_, tag, blob, _) in enumerate(rows):
        marks[i] = np.frombuffer(hashlib.blake2b(bytes(tag) + bytes(blob), digest_size=MARK_BYTES).digest(), np.uint8)
    seqs = np.fromiter((row[0] for row in rows), dtype=np.int64, count=len(rows))
    return LiveMarks(seqs=seqs, marks=marks, wings=[str(row[3]) for row in rows])


def ranked_exact(
    seqs: NDArray[np.int64], unit: NDArray[np.float32], query: NDArray[np.float32], keep: int
) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
    """The best ``keep`` of ``seqs`` by exact cosine, best first, ties by write order (the full-scan order)."""
    cosines = (unit @ query).astype(np.float32) if len(seqs) else np.zeros(0, dtype=np.float32)
    keep = min(keep, len(seqs))
    top = np.argpartition(-cosines, keep - 1)[:keep] if 0 < keep < len(seqs) else np.arange(len(seqs))
    order = top[np.lexsort((seqs[top], -cosines[top]))]
    return seqs[order], cosines[order]


def training_sample(context: VaultContext, live: LiveMarks, cap: int | None, size: int) -> NDArray[np.int64]:
    """Seqs to train on: ordered by a keyed digest of each seq, no wing above ``size/cap`` while others can fill.

    The key is the vault's MAC key, so the draw moves with a rotation; within quota, the same corpus draws the
    same sample."""
    key = context.keys.mac.buffer()
    order = sorted(
        range(len(live.seqs)),
        key=lambda i: hmac.digest(key, b"undercroft.pq-sample.v1\x00" + int(live.seqs[i]).to_bytes(8, "big"), "sha256"),
    )
    size = min(size, len(order))
    if cap is None:
        picked = order[:size]
    else:
        quota = max(1, -(-size // cap))
        taken: dict[str, int] = {}
        picked, spill = [], []
        for i in order:
            wing = live.wings[i]
            if taken.get(wing, 0) < quota:
                taken[wing] = taken.get(wing, 0) + 1
                picked.append(i)
            else:
                spill.append(i)
            if len(picked) >= size:
                break
        picked += spill[: size - len(picked)]  # no other wing can fill the sample: the over-quota draws do
    return np.sort(live.seqs[picked])


@dataclass
class _State:
    generation: int
    trained_on: int
    book: Codebook
    index: ProbeIndex
    coded: NDArray[np.int64]  # ascending
    marks: NDArray[np.uint8]  # aligned with coded


class PQTier:
    """One vault handle's PQ/IVF tier: `prepare` keeps it in step, then it serves `CandidateTier` calls."""

    def __init__(self, options: TierOptions | None = None) -> None:
        """An empty tier; the first `prepare` loads or builds it."""
        self.options = options or TierOptions()
        self._state: _State | None = None
        self._context: VaultContext | None = None
        self._seen: int | None = None
        self._stored_seen: int | None = None
        self._seqs = np.zeros(0, dtype=np.int64)
        self._exact = ExactRows()
        #: Artifacts or rows that failed their seal at the last load (never used; verify names them).
        self.distrusted: list[str] = []
        #: Whether the tables at rest are clean enough to write to (False once anything failed).
        self._writable_at_rest = True
        self.trainings = 0
        self.encoded = 0

    @property
    def name(self) -> str:
        """``pq-ivf`` with inverted lists, ``pq`` flat, ``pq-exact`` below the training threshold."""
        if self._state is None:
            return "pq-exact"
        return "pq-ivf" if self._state.book.nlist > 1 else "pq"

    @property
    def generation(self) -> int | None:
        """The codebook generation in use (None: not trained)."""
        return None if self._state is None else self._state.generation

    @property
    def trained_on(self) -> int:
        """Live drawers when the codebook in use was trained."""
        return 0 if self._state is None else self._state.trained_on

    @property
    def nlist(self) -> int:
        """Inverted lists of the codebook in use (0: not trained)."""
        return 0 if self._state is None else self._state.book.nlist

    def ram_bytes(self) -> int:
        """RAM of the index: codes, ids, marks, live seqs and the codebook (not the bounded exact-row cache)."""
        state = self._state
        if state is None:
            return 0
        book = state.book.centroids.nbytes + state.book.codebook.nbytes
        return state.index.code_bytes() + state.coded.nbytes + state.marks.nbytes + self._seqs.nbytes + book

    def drop_exact_rows(self) -> None:
        """Empty the second stage's row cache (a benchmark's cold query; the next search opens its rows again)."""
        self._exact.clear()

    def exact_bytes(self) -> int:
        """RAM of the bounded exact-row cache of the second stage (dropped whenever the generation moves)."""
        return self._exact.ram_bytes()

    def coded(self) -> dict[int, bytes]:
        """``seq → standalone code`` of every coded drawer (what a from-scratch encode must equal)."""
        return {} if self._state is None else self._state.index.standalone_codes()

    @property
    def codebook(self) -> Codebook | None:
        """The codebook in use."""
        return None if self._state is None else self._state.book

    def clear(self) -> None:
        """Forget everything in RAM (a closed vault)."""
        self._state, self._context, self._seen, self._stored_seen = None, None, None, None
        self._exact.clear()

    # --- keeping in step --------------------------------------------------------------------------------
    def prepare(self, store: VaultStore) -> tuple[NDArray[np.int64], PQTier]:
        """Bring the tier to the store's current generation; returns ``(every live seq ascending, self)``."""
        return self.prepare_context(store._context, store.generation)

    def prepare_context(self, context: VaultContext, generation: int | None) -> tuple[NDArray[np.int64], PQTier]:
        """`prepare` over a context (repair's door); ``generation`` None always re-reads the marks."""
        if self._context is not context:
            self.clear()
            self._context = context
        if generation is not None and self._seen == generation:
            return self._seqs, self
        self._exact.clear()
        stored = tables.read_generation(context.connection)
        if self._state is not None and stored != self._stored_seen:
            self._state = None  # rebuilt, emptied or rotated by another door: load what is there now
        live = live_marks(context)
        self._seqs = live.seqs
        if self._state is None:
            self._state = self._load(context, live)
        state = self._state
        if (
            state is None
            or len(live.seqs) >= _RETRAIN_GROWTH * max(state.trained_on, 1)
            or self._geometry_moved(state, len(live.seqs))
        ):
            if len(live.seqs) >= TRAIN_MIN:
                self._state = self._train(context, live, 1 if state is None else state.generation + 1)
        else:
            self._sync(context, state, live)
        self._seen = generation
        self._stored_seen = tables.read_generation(context.connection)
        return self._seqs, self

    def _geometry_moved(self, state: _State, population: int) -> bool:
        """Crossing ``UNDERCROFT_IVF_MIN`` upwards: a flat codebook gives way to inverted lists."""
        return state.book.nlist == 1 and ivf_lists(population, self.options.ivf_min) > 1

    def _load(self, context: VaultContext, live: LiveMarks) -> _State | None:
        """The tier as stored, each row checked; None when nothing usable is stored."""
        self.distrusted = []
        if not tables.tables_exist(context.connection):
            return None
        envelope = tables.Envelope(context)
        stored = tables.read_artifacts(context.connection, envelope)
        if stored is None or (not stored.failed and stored.header is None):
            return None
        book = None
        if not stored.failed and stored.header is not None and stored.centroids is not None and stored.codebook:
            try:
                header = json.loads(stored.header)
                book = Codebook.from_bytes(
                    int(header["dimension"]), int(header["nlist"]), stored.centroids, stored.codebook
                )
                trained_on = int(header["trained_on"])
            except (ValueError, KeyError, TypeError, IndexRefused):
                book = None
        if book is None or book.dimension != context.embedder.dimension:
            self.distrusted = [f"codebook generation {stored.generation}: {', '.join(stored.failed) or 'header'}"]
            self._writable_at_rest = False
            return None
        coded: dict[int, tuple[bytes, bytes]] = {}
        rows = context.connection.execute(f"SELECT seq, blob FROM {tables.ROWS_TABLE}").fetchall()  # noqa: S608
        domains = [tables.row_domain(stored.generation, int(seq)) for seq, _ in rows]
        for (seq, _), plain in zip(rows, envelope.open_each(domains, [bytes(blob) for _, blob in rows]), strict=True):
            if plain is None or len(plain) != MARK_BYTES + book.code_size:
                self.distrusted.append(f"code row {int(seq)}")
                continue
            coded[int(seq)] = (plain[:MARK_BYTES], plain[MARK_BYTES:])
        if self.distrusted:
            self._writable_at_rest = False
        seqs = np.asarray(sorted(coded), dtype=np.int64)
        marks = np.zeros((len(seqs), MARK_BYTES), dtype=np.uint8)
        codes = np.zeros((len(seqs), book.code_size), dtype=np.uint8)
        for i, seq in enumerate(seqs.tolist()):
            marks[i] = np.frombuffer(coded[seq][0], np.uint8)
            codes[i] = np.frombuffer(coded[seq][1], np.uint8)
        state = _State(
            generation=stored.generation,
            trained_on=trained_on,
            book=book,
            index=book.index(codes, seqs),
            coded=seqs,
            marks=marks,
        )
        self._sync(context, state, live)
        return state

    def _train(self, context: VaultContext, live: LiveMarks, generation: int) -> _State:
        """Train a new codebook generation on a capped sample, encode every live drawer, persist."""
        stored = tables.read_generation(context.connection) if tables.tables_exist(context.connection) else None
        generation = max(generation, (stored or 0) + 1)
        nlist = ivf_lists(len(live.seqs), self.options.ivf_min)
        sample_size = max(TRAIN_SAMPLE, 40 * nlist)
        sample = training_sample(context, live, self.options.train_source_cap, sample_size)
        vectors = open_embeddings(context, sample.tolist())
        book = train_codebook(np.stack([vectors[int(seq)] for seq in sample if int(seq) in vectors]), nlist=nlist)
        self.trainings += 1
        empty = np.zeros(0, dtype=np.int64)
        state = _State(
            generation=generation,
            trained_on=len(live.seqs),
            book=book,
            index=book.index(np.zeros((0, book.code_size), dtype=np.uint8), empty),
            coded=empty,
            marks=np.zeros((0, MARK_BYTES), dtype=np.uint8),
        )
        # A table that failed its seal keeps its evidence: the new codebook lives in RAM until repair rebuilds.
        self._writable_at_rest = not self.distrusted
        header = json.dumps({"dimension": book.dimension, "nlist": book.nlist, "trained_on": len(live.seqs)}).encode()
        artifacts = {"header": header, "centroids": book.centroid_bytes(), "codebook": book.codebook_bytes()}
        self._sync(context, state, live, artifacts=artifacts)
        return state

    def _sync(
        self, context: VaultContext, state: _State, live: LiveMarks, *, artifacts: dict[str, bytes] | None = None
    ) -> None:
        """Drop the codes of vanished or changed drawers, encode the new or changed ones, persist the diff."""
        position = np.searchsorted(live.seqs, state.coded)
        position = np.minimum(position, max(len(live.seqs) - 1, 0))
        alive = (live.seqs[position] == state.coded) if len(live.seqs) else np.zeros(len(state.coded), dtype=bool)
        same = np.zeros(len(state.coded), dtype=bool)
        if len(live.seqs):
            same[alive] = (live.marks[position[alive]] == state.marks[alive]).all(axis=1)
        dropped = state.coded[~same]
        state.index.remove(dropped)
        kept, kept_marks = state.coded[same], state.marks[same]
        fresh_rows = ~np.isin(live.seqs, kept)
        fresh = live.seqs[fresh_rows]
        fresh_marks = live.marks[fresh_rows]
        written: list[tuple[int, bytes]] = []
        if len(fresh):
            vectors = open_embeddings(context, fresh.tolist())
            present = np.asarray([seq in vectors for seq in fresh.tolist()], dtype=bool)
            fresh, fresh_marks = fresh[present], fresh_marks[present]
            codes = state.book.encode(np.stack([vectors[int(seq)] for seq in fresh])) if len(fresh) else None
            if codes is not None:
                state.index.add(codes, fresh)
                self.encoded += len(fresh)
                for i, seq in enumerate(fresh.tolist()):
                    written.append((seq, fresh_marks[i].tobytes() + codes[i].tobytes()))
        merged = np.concatenate((kept, fresh))
        order = np.argsort(merged, kind="stable")
        state.coded = merged[order]
        state.marks = np.concatenate((kept_marks, fresh_marks))[order]
        self._persist(context, state, dropped, written, artifacts)

    def _persist(
        self,
        context: VaultContext,
        state: _State,
        dropped: NDArray[np.int64],
        written: list[tuple[int, bytes]],
        artifacts: dict[str, bytes] | None,
    ) -> None:
        """Write the diff at rest when this handle may (writable, tables clean, no transaction of the caller's)."""
        if context.read_only or not self._writable_at_rest or context.connection.in_transaction:
            return
        if artifacts is None and not written and not len(dropped):
            return
        connection = context.connection
        envelope = tables.Envelope(context)
        connection.execute("BEGIN IMMEDIATE")
        try:
            tables.create_tables(connection)
            if artifacts is not None:
                connection.execute(f"DELETE FROM {tables.ROWS_TABLE}")  # noqa: S608
                tables.write_artifacts(connection, envelope, state.generation, artifacts)
            else:
                tables.delete_rows(connection, dropped.tolist())
            tables.write_rows(connection, envelope, state.generation, written)
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        # Our own commit: the handle's data_version does not move for it, so no cache is disturbed.

    # --- the CandidateTier calls --------------------------------------------------------------------------
    def candidates(self, query: NDArray[np.float32], scope_seqs: NDArray[np.int64], plan: PoolPlan) -> Candidates:
        """Stage 1 from the codes (or every member of an exact scope), stage 2 by exact cosine."""
        context = self._require()
        state = self._state
        if plan.exact or state is None:
            seqs, unit = self._exact.matrix(context, scope_seqs)
            chosen, cosines = ranked_exact(seqs, unit, query, plan.hydrate)
            return Candidates(seqs=chosen, cosines=cosines, stage_one=len(seqs))
        whole = len(scope_seqs) == len(self._seqs)
        within = None if whole else scope_seqs
        nprobe = self.options.nprobe or max(1, state.book.nlist // 4)
        drawn = state.index.search(query, plan.stage_one, nprobe=nprobe, within=within)
        if len(drawn) < min(plan.stage_one, len(scope_seqs)) and nprobe < state.book.nlist:
            drawn = state.index.search(query, plan.stage_one, nprobe=state.book.nlist, within=within)
        seqs, unit = self._exact.matrix(context, np.sort(drawn))
        chosen, cosines = ranked_exact(seqs, unit, query, plan.hydrate)
        return Candidates(seqs=chosen, cosines=cosines, stage_one=len(drawn))

    def cosines(self, query: NDArray[np.float32], seqs: NDArray[np.int64]) -> NDArray[np.float32]:
        """Exact cosines of ``seqs`` (each still live) to ``query``."""
        present, unit = self._exact.matrix(self._require(), seqs)
        if len(present) != len(seqs):  # a concurrent delete: the engine's hydration drops those candidates
            lookup = dict(zip(present.tolist(), (unit @ query).tolist(), strict=True))
            return np.asarray([lookup.get(int(seq), -1.0) for seq in seqs], dtype=np.float32)
        found: NDArray[np.float32] = (unit @ query).astype(np.float32)
        return found

    def _require(self) -> VaultContext:
        if self._context is None:
            raise RuntimeError("the PQ tier serves candidates only after prepare()")
        return self._context
