"""The FDE candidate tier (``UNDERCROFT_RETRIEVAL=fde``): MUVERA encodings of the stored ColBERT token
matrices, kept in RAM, drawn by inner product with the query's FDE, cut back by exact cosine.

Each live drawer whose stored token matrix (`kernel.token_table`) opens, is this vault's late encoder's and is
as wide as the encoder's parameters is encoded once into a fixed-dimensional vector
(`undercroft_core.fde.FdeEncoder`, arXiv:2405.19504) whose dot product with a query's FDE approximates MaxSim.
A search encodes the query's token matrix with the same late encoder (its query side), scores every FDE of the
scope and draws the ``plan.stage_one`` best — at least live/``UNDERCROFT_POOL_DIV``, as the PQ tier — then
opens just those candidates' embeddings (`exact.ExactRows`) and cuts them back to the hydration size by exact
cosine, so everything downstream (BM25 joiners, verified hydration, fusion) is the full scan's, unchanged: a
stale or forged FDE changes what is drawn, never what is returned.

**A drawer with no usable matrix** (none stored yet — ``repair --tokens`` backfills — or one that fails its
seal, is another encoder's or another width) has no FDE and is **always drawn**: it joins stage 1 of every
search of its scope and competes in the exact second stage, as the full scan would rank it. Nothing is
excluded; such drawers only cost stage-2 work (``bare`` counts them). A query whose encoding fails (the role's
counted empty matrix) ranks the scope exactly, as the full scan does.

At rest (`kernel.fde_tables`) the encoder's parameters are persisted on the first build (from
``UNDERCROFT_FDE_REPS`` / ``_KSIM`` / ``_DPROJ`` / ``_SEED``, else the encoder's own defaults) and read back by
every later build, and each FDE row is sealed (hmac-tagged on hmac-only vaults) under its drawer's
``fde/{id}/tok`` domain with the drawer's change mark (a digest of its tag and stored token blob). The RAM tier
is kept in step by a diff of those marks whenever the store's generation moves; every write path moves one
(a rewrite or delete also drops the row at rest in its own transaction: `fde_tables.drop_for`). A row or
the parameters failing their seal are never used: the drawer is encoded again in RAM, nothing is written over
the evidence, verify names it (`fde_integrity`) until repair rebuilds.

**Compression in RAM.** At or above ``UNDERCROFT_FDE_PQ_MIN`` encoded drawers (never below 256: a codebook
needs that many to train) the handle trains an inner-product PQ codebook on the FDEs (`undercroft_index.pq`,
evenly spaced by seq, at most ``_TRAIN_CAP`` of them), keeps only the codes (a byte per 16 floats: 160 B for
the default 2,560-wide FDE instead of 10,240 B of floats) and draws stage 1 by asymmetric distance over them.
Above ``UNDERCROFT_FDE_IVF_MIN`` (opt-in) the codes are grouped into ⌈√N⌉ inverted lists, ``UNDERCROFT_FDE_NPROBE``
(default max(8, nlist/4)) probed per query, and a scoped draw that comes back short of its pool probes every
list, so a declared scope is never starved. New drawers are coded with the codebook in hand; when the coded
population has doubled since training, the handle reloads the rows at rest and trains again. The codebook is
never persisted (rows at rest stay the sealed floats): it is derived state of one handle, and a stale or
poisoned one can only change what is drawn, never what is returned.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, fields
from typing import Final

import numpy as np
from numpy.typing import NDArray
from undercroft_core.errors import InvalidInput
from undercroft_core.fde import FdeEncoder, FdeParameters
from undercroft_core.model_roles import LateEncoder
from undercroft_index.pq import Codebook, ProbeIndex, ivf_lists, train_codebook
from undercroft_vault import Domain

from undercroft_store.kernel import fde_tables as tables
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel.tier_tables import Envelope
from undercroft_store.kernel.token_codebook import read_codebook
from undercroft_store.kernel.token_table import TOKEN_TABLE, unpack_matrix
from undercroft_store.kernel.token_table import table_exists as tokens_exist
from undercroft_store.search.candidates import Candidates, PoolPlan
from undercroft_store.search.errors import InvalidSearch
from undercroft_store.search.tiers.exact import ExactRows
from undercroft_store.search.tiers.pq import ranked_exact
from undercroft_store.store import VaultStore

__all__ = ["NEEDS_COLBERT", "FdeDraw", "FdeOptions", "FdeTier"]

#: The refusal when the tier is declared without a late encoder to read the query with.
NEEDS_COLBERT: Final = (
    "UNDERCROFT_RETRIEVAL=fde draws candidates from ColBERT token matrices, and no ColBERT encoder is configured: "
    "declare UNDERCROFT_RERANKER=colbert (or colbert-ort) with UNDERCROFT_COLBERT_MODEL, "
    "UNDERCROFT_COLBERT_QUERY_MODEL and UNDERCROFT_COLBERT_TOKENIZER, or unset UNDERCROFT_RETRIEVAL"
)
_ENCODE_BATCH: Final = 256
_OPEN_BATCH: Final = 500
#: The fewest rows a PQ codebook trains on (256 centroids per sub-quantiser): a lower FDE_PQ_MIN waits for it.
_PQ_TRAIN_MIN: Final = 256
#: Rows a codebook trains on at most (evenly spaced by seq), and how many FDEs are coded per faiss call.
_TRAIN_CAP: Final = 16_384
_CODE_BATCH: Final = 4_096
#: FDE floats per byte of PQ code (16-wide sub-quantisers: 160 B for the default 2,560-wide FDE). Measured on
#: 20k drawers (benchmarks/RESULTS.md): 40 B kept 23 % of the float draw, 160 B 52 %, 320 B 64 % at 4× the training.
_FLOATS_PER_CODE_BYTE: Final = 16
#: The coded population's growth (× the trained population) that makes the handle train again.
_RETRAIN_GROWTH: Final = 2
#: The encoder's own fields (the rest of `FdeOptions` shapes the RAM compression, never the encoding).
_ENCODER_FIELDS: Final = ("repetitions", "bits", "projection", "seed")


@dataclass(frozen=True, slots=True)
class FdeOptions:
    """The declared encoder shape (None: the encoder's own default; read on the first build only) and the RAM
    compression: PQ at or above ``pq_min`` rows (None: never), IVF at or above ``ivf_min`` (None: off), lists
    probed ``nprobe`` (None: max(8, nlist/4))."""

    repetitions: int | None = None
    bits: int | None = None
    projection: int | None = None
    seed: int | None = None
    pq_min: int | None = 256
    ivf_min: int | None = None
    nprobe: int | None = None

    def parameters(self, dimension: int) -> FdeParameters:
        """The parameters of a first build over ``dimension``-wide token vectors."""
        declared = {
            f.name: getattr(self, f.name)
            for f in fields(self)
            if f.name in _ENCODER_FIELDS and getattr(self, f.name) is not None
        }
        return FdeParameters(dimension=dimension, **declared)


@dataclass
class _State:
    generation: int
    encoder: FdeEncoder
    rows: dict[int, NDArray[np.float32]]  # seq → FDE, the drawers with a usable matrix
    marks: dict[int, bytes]  # seq → change mark of every drawer examined (rows and bare ones)
    bare: set[int]  # seqs with no usable matrix: always drawn
    fresh_params: bool  # built in this handle: the parameters are not at rest yet
    matrix: tuple[NDArray[np.int64], NDArray[np.float32]] | None = None  # rows stacked by ascending seq
    book: Codebook | None = None  # the RAM codebook (None: uncompressed; `rows` then holds every FDE)
    coded: ProbeIndex | None = None  # the codes of every compressed drawer, by seq; `rows` holds the rest
    trained_on: int = 0  # rows the codebook was trained over


def _live(context: VaultContext) -> tuple[NDArray[np.int64], list[str], list[bytes], dict[int, bytes]]:
    """Every drawer's seq (ascending), id and change mark, and the stored token blob of those holding one."""
    connection = context.connection
    if tokens_exist(connection):
        query = (
            f"SELECT d.seq, d.id, d.tag, t.blob FROM drawers d LEFT JOIN {TOKEN_TABLE} t "  # noqa: S608
            "ON t.seq = d.seq ORDER BY d.seq"
        )
    else:
        query = "SELECT seq, id, tag, NULL FROM drawers ORDER BY seq"
    rows = connection.execute(query).fetchall()
    marks = [
        hashlib.blake2b(bytes(tag) + b"\x00" + (b"" if blob is None else bytes(blob)), digest_size=16).digest()
        for _, _, tag, blob in rows
    ]
    blobs = {int(seq): bytes(blob) for seq, _, _, blob in rows if blob is not None}
    seqs = np.fromiter((int(row[0]) for row in rows), dtype=np.int64, count=len(rows))
    return seqs, [str(row[1]) for row in rows], marks, blobs


class FdeTier:
    """One vault handle's FDE tier: `prepare` keeps it in step, `for_query` binds a search's query to it."""

    name = "fde"

    def __init__(self, options: FdeOptions | None = None) -> None:
        """An empty tier; the first `prepare` loads or builds it."""
        self.options = options or FdeOptions()
        self._state: _State | None = None
        self._context: VaultContext | None = None
        self._seen: int | None = None
        self._stored_seen: int | None = None
        self._seqs = np.zeros(0, dtype=np.int64)
        self._exact = ExactRows()
        #: Parameters or rows that failed their seal at the last load (never used; verify names them).
        self.distrusted: list[str] = []
        self._writable_at_rest = True
        #: Drawers encoded into an FDE over this object's life, and searches drawn exactly (a failed query).
        self.encoded = 0
        self.exact_fallbacks = 0
        #: Codebooks this object has trained (each handle's compression is its own; never persisted).
        self.trainings = 0

    @property
    def generation(self) -> int | None:
        """The parameter generation in use (None: not built)."""
        return None if self._state is None else self._state.generation

    @property
    def parameters(self) -> FdeParameters | None:
        """The encoder's parameters in use."""
        return None if self._state is None else self._state.encoder.parameters

    @property
    def bare(self) -> frozenset[int]:
        """Seqs with no usable token matrix: drawn by every search of their scope."""
        return frozenset() if self._state is None else frozenset(self._state.bare)

    def rows(self) -> dict[int, NDArray[np.float32]]:
        """``seq → FDE`` of every encoded drawer still in floats (all of them when uncompressed: what a
        from-scratch build must equal)."""
        return {} if self._state is None else dict(self._state.rows)

    @property
    def codebook(self) -> Codebook | None:
        """The RAM codebook in use (None: uncompressed)."""
        return None if self._state is None else self._state.book

    def codes(self) -> dict[int, bytes]:
        """``seq → standalone PQ code`` of every compressed drawer (empty when uncompressed)."""
        state = self._state
        return {} if state is None or state.coded is None else state.coded.standalone_codes()

    def ram_bytes(self) -> int:
        """RAM of the FDEs or their codes, the codebook and the seqs (not the bounded exact-row cache)."""
        state = self._state
        if state is None:
            return 0
        floats = sum(row.nbytes for row in state.rows.values()) + 8 * len(state.rows)
        coded = 0
        if state.coded is not None and state.book is not None:
            coded = state.coded.code_bytes() + state.book.centroids.nbytes + state.book.codebook.nbytes
        return floats + coded + 16 * len(state.marks)

    def clear(self) -> None:
        """Forget everything in RAM (a closed vault)."""
        self._state, self._context, self._seen, self._stored_seen = None, None, None, None
        self._exact.clear()

    # --- keeping in step --------------------------------------------------------------------------------
    def prepare(self, store: VaultStore) -> tuple[NDArray[np.int64], FdeTier]:
        """Bring the tier to the store's current generation; returns ``(every live seq ascending, self)``."""
        return self.prepare_context(store._context, store.generation)

    def prepare_context(self, context: VaultContext, generation: int | None) -> tuple[NDArray[np.int64], FdeTier]:
        """`prepare` over a context (repair's door); ``generation`` None always re-reads the marks."""
        role = context.late_encoder
        if role is None:
            raise InvalidSearch(NEEDS_COLBERT)
        if self._context is not context:
            self.clear()
            self._context = context
        if generation is not None and self._seen == generation:
            return self._seqs, self
        self._exact.clear()
        stored = tables.read_generation(context.connection)
        if self._state is not None and stored != self._stored_seen:
            self._state = None  # rebuilt, emptied or rotated by another door: load what is there now
        seqs, ids, marks, blobs = _live(context)
        self._seqs = seqs
        if self._state is None:
            self._state = self._load(context, role, stored)
        self._sync(context, self._state, role, (seqs, ids, marks, blobs))
        state = self._state
        if state.coded is not None and state.coded.size + len(state.rows) >= _RETRAIN_GROWTH * state.trained_on:
            # Grown past what the codebook saw: the floats again from rest (what rest lacks is encoded anew).
            self._state = state = self._load(context, role, tables.read_generation(context.connection))
            self._sync(context, state, role, (seqs, ids, marks, blobs))
        self._compress(state)
        self._seen = generation
        self._stored_seen = tables.read_generation(context.connection)
        return self._seqs, self

    def _load(self, context: VaultContext, role: LateEncoder, stored_generation: int | None) -> _State:
        """The tier as stored, each blob checked; fresh parameters when none usable are stored."""
        self.distrusted = []
        connection = context.connection
        envelope = Envelope(context)
        stored = tables.read_params(connection, envelope) if tables.tables_exist(connection) else None
        encoder = None
        if stored is not None and stored.params is not None:
            try:
                encoder = FdeEncoder.from_bytes(stored.params)
            except InvalidInput:
                encoder = None
            if encoder is not None and encoder.parameters.dimension != role.dimension:
                encoder = None  # another encoder's width: a new generation for this one (not a tamper)
            elif encoder is None:
                self.distrusted.append(f"parameters of generation {stored.generation}")
        elif stored is not None and stored.failed:
            self.distrusted.append(f"parameters of generation {stored.generation}")
        if self.distrusted:
            self._writable_at_rest = False  # the evidence stays until repair rebuilds
        if encoder is None or stored is None:
            generation = max(stored_generation or 0, 0) + 1
            try:
                fresh = FdeEncoder.from_seed(self.options.parameters(role.dimension))
            except InvalidInput as error:
                raise InvalidSearch(f"the FDE parameters do not build: {error}") from None
            return _State(generation, fresh, {}, {}, set(), fresh_params=True)
        state = _State(stored.generation, encoder, {}, {}, set(), fresh_params=False)
        length = encoder.parameters.output_dimension
        rows = connection.execute(
            f"SELECT r.seq, d.id, r.blob FROM {tables.ROWS_TABLE} r JOIN drawers d ON d.seq = r.seq"  # noqa: S608
        ).fetchall()
        domains = [Domain.fde_tokens(str(drawer_id)) for _, drawer_id, _ in rows]
        opened = envelope.open_each(domains, [bytes(blob) for _, _, blob in rows])
        for (seq, _, _), plain in zip(rows, opened, strict=True):
            row = None if plain is None else tables.unpack_row(plain, stored.generation, length)
            if row is None:
                self.distrusted.append(f"row of seq {int(seq)}")
                continue
            state.marks[int(seq)], state.rows[int(seq)] = row
        if self.distrusted:
            self._writable_at_rest = False
        return state

    def _sync(
        self,
        context: VaultContext,
        state: _State,
        role: LateEncoder,
        live: tuple[NDArray[np.int64], list[str], list[bytes], dict[int, bytes]],
    ) -> None:
        """Drop vanished or changed drawers, encode the new or changed ones, persist the diff."""
        seqs, ids, marks, blobs = live
        present = set(seqs.tolist())
        vanished = [seq for seq in state.marks if seq not in present]
        changed = [
            (seq, drawer_id, mark)
            for seq, drawer_id, mark in zip(seqs.tolist(), ids, marks, strict=True)
            if state.marks.get(seq) != mark
        ]
        for seq in vanished:
            state.marks.pop(seq, None)
            state.rows.pop(seq, None)
            state.bare.discard(seq)
        if state.coded is not None and (vanished or changed):
            state.coded.remove(np.asarray(vanished + [seq for seq, _, _ in changed], dtype=np.int64))
        written: list[tuple[int, str, bytes]] = []
        if changed:
            matrices = self._matrices(context, role, state, [(seq, drawer_id) for seq, drawer_id, _ in changed], blobs)
            usable = [(seq, drawer_id, mark) for seq, drawer_id, mark in changed if seq in matrices]
            for start in range(0, len(usable), _ENCODE_BATCH):
                chunk = usable[start : start + _ENCODE_BATCH]
                encoded = state.encoder.encode_documents([matrices[seq] for seq, _, _ in chunk])
                for (seq, drawer_id, mark), fde in zip(chunk, encoded, strict=True):
                    state.rows[seq] = fde
                    state.bare.discard(seq)
                    written.append((seq, drawer_id, tables.pack_row(state.generation, mark, fde)))
                self.encoded += len(chunk)
            for seq, _, mark in changed:
                state.marks[seq] = mark
                if seq not in matrices:
                    state.rows.pop(seq, None)
                    state.bare.add(seq)
        if vanished or changed:
            state.matrix = None
        if state.fresh_params:  # a new generation: every row is written under it, not just this diff's
            id_of = dict(zip(seqs.tolist(), ids, strict=True))
            written = [
                (seq, id_of[seq], tables.pack_row(state.generation, state.marks[seq], fde))
                for seq, fde in state.rows.items()
            ]
        self._persist(context, state, vanished + [seq for seq, _, _ in changed if seq not in state.rows], written)

    def _matrices(
        self,
        context: VaultContext,
        role: LateEncoder,
        state: _State,
        wanted: list[tuple[int, str]],
        blobs: dict[int, bytes],
    ) -> dict[int, NDArray[np.float32]]:
        """The usable token matrix of each wanted drawer holding one: it opens under ``{id}/tok``, decodes,
        was made by ``role`` and is as wide as the parameters. Anything else is absent (the drawer stays bare)."""
        envelope = Envelope(context)
        holding = [(seq, drawer_id) for seq, drawer_id in wanted if seq in blobs]
        codebook = read_codebook(context.connection, envelope).stored if holding else None
        width = state.encoder.parameters.dimension
        found: dict[int, NDArray[np.float32]] = {}
        for start in range(0, len(holding), _OPEN_BATCH):
            chunk = holding[start : start + _OPEN_BATCH]
            plains = envelope.open_each(
                [Domain.tokens(drawer_id) for _, drawer_id in chunk], [blobs[seq] for seq, _ in chunk]
            )
            for (seq, _), plain in zip(chunk, plains, strict=True):
                matrix = None if plain is None else unpack_matrix(plain, codebook)
                if matrix is not None and matrix.encoder == role.name and matrix.tokens.shape[1] == width:
                    found[seq] = matrix.tokens
        return found

    def _persist(
        self, context: VaultContext, state: _State, dropped: list[int], written: list[tuple[int, str, bytes]]
    ) -> None:
        """Write the diff at rest when this handle may (writable, tables clean, no transaction of the caller's)."""
        if context.read_only or not self._writable_at_rest or context.connection.in_transaction:
            return
        if not state.fresh_params and not written and not dropped:
            return
        connection = context.connection
        envelope = Envelope(context)
        connection.execute("BEGIN IMMEDIATE")
        try:
            # A drawer another handle deleted since the marks were read gets no row: never an orphan at rest.
            live = set(connection.execute("SELECT seq, id FROM drawers").fetchall()) if written else set()
            written = [row for row in written if (row[0], row[1]) in live]
            tables.create_tables(connection)
            if state.fresh_params:
                connection.execute(f"DELETE FROM {tables.ROWS_TABLE}")  # noqa: S608
                tables.write_params(connection, envelope, state.generation, state.encoder.to_bytes())
            else:
                tables.delete_rows(connection, dropped)
            tables.write_rows(connection, envelope, written)
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        state.fresh_params = False

    def _compress(self, state: _State) -> None:
        """Code the FDEs still in floats: train a codebook first once there are enough, add to it after."""
        pq_min = self.options.pq_min
        if pq_min is None or not state.rows:
            return
        if state.coded is None:
            population = len(state.rows)
            if population < max(pq_min, _PQ_TRAIN_MIN):
                return
            order = sorted(state.rows)
            step = max(1, -(-population // _TRAIN_CAP))
            sample = np.stack([state.rows[seq] for seq in order[::step]])
            ivf_min = self.options.ivf_min
            nlist = 1 if ivf_min is None else ivf_lists(population, ivf_min)
            state.book = train_codebook(
                sample,
                nlist=min(nlist, len(sample)),
                inner_product=True,
                code_bytes=max(1, sample.shape[1] // _FLOATS_PER_CODE_BYTE),
            )
            state.coded = state.book.index(np.zeros((0, state.book.code_size), np.uint8), np.zeros(0, np.int64))
            state.trained_on = population
            self.trainings += 1
        book, coded = state.book, state.coded
        assert book is not None
        order = sorted(state.rows)
        for start in range(0, len(order), _CODE_BATCH):
            chunk = order[start : start + _CODE_BATCH]
            coded.add(book.encode(np.stack([state.rows[seq] for seq in chunk])), np.asarray(chunk, dtype=np.int64))
        state.rows.clear()
        state.matrix = None

    # --- drawing --------------------------------------------------------------------------------------------
    def for_query(self, text: str) -> FdeDraw:
        """This search's draw: the query's token matrix (the late encoder's query side) encoded into an FDE."""
        context = self._require()
        state = self._state
        role = context.late_encoder
        query_fde: NDArray[np.float32] | None = None
        if state is not None and role is not None:
            before = role.late_failures
            try:
                tokens = role.encode_query(text)
            except Exception:  # noqa: BLE001 - a role that breaks its no-raise contract costs recall, never a search
                tokens = np.zeros((0, role.dimension), dtype=np.float32)
            if role.late_failures == before and tokens.shape[0] > 0 and tokens.shape[1] == role.dimension:
                query_fde = state.encoder.encode_queries([tokens])[0]
        if query_fde is None:
            self.exact_fallbacks += 1
        return FdeDraw(self, query_fde)

    def _stacked(self) -> tuple[NDArray[np.int64], NDArray[np.float32]]:
        state = self._state
        assert state is not None
        if state.matrix is None:
            order = sorted(state.rows)
            length = state.encoder.parameters.output_dimension
            matrix = np.stack([state.rows[seq] for seq in order]) if order else np.zeros((0, length), np.float32)
            state.matrix = (np.asarray(order, dtype=np.int64), matrix.astype(np.float32, copy=False))
        return state.matrix

    def _draw_codes(
        self,
        coded: ProbeIndex,
        query_fde: NDArray[np.float32],
        scope_seqs: NDArray[np.int64],
        whole: bool,
        plan: PoolPlan,
    ) -> NDArray[np.int64]:
        """Stage 1 over the codes: the ``plan.stage_one`` largest approximate inner products in the scope."""
        within = None if whole else scope_seqs
        nprobe = self.options.nprobe or max(8, coded.nlist // 4)
        drawn = coded.search(query_fde, plan.stage_one, nprobe=nprobe, within=within)
        if len(drawn) < min(plan.stage_one, len(scope_seqs)) and nprobe < coded.nlist:
            drawn = coded.search(query_fde, plan.stage_one, nprobe=coded.nlist, within=within)  # never starved
        return np.sort(drawn)

    def _require(self) -> VaultContext:
        if self._context is None:
            raise RuntimeError("the FDE tier serves candidates only after prepare()")
        return self._context


class FdeDraw:
    """One search's `CandidateTier` over an `FdeTier`: the query's FDE bound to it."""

    name = "fde"

    def __init__(self, tier: FdeTier, query_fde: NDArray[np.float32] | None) -> None:
        """Bind ``query_fde`` (None: the query's encoding failed — every draw ranks the scope exactly)."""
        self._tier = tier
        self._query_fde = query_fde

    def candidates(self, query: NDArray[np.float32], scope_seqs: NDArray[np.int64], plan: PoolPlan) -> Candidates:
        """Stage 1 by FDE inner product (plus every bare member), stage 2 by exact cosine."""
        tier = self._tier
        context = tier._require()
        state = tier._state
        if plan.exact or self._query_fde is None or state is None:
            seqs, unit = tier._exact.matrix(context, scope_seqs)
            chosen, cosines = ranked_exact(seqs, unit, query, plan.hydrate)
            return Candidates(seqs=chosen, cosines=cosines, stage_one=len(seqs))
        whole = len(scope_seqs) == len(tier._seqs)
        encoded, matrix = tier._stacked()
        rows = np.arange(len(encoded)) if whole else np.flatnonzero(np.isin(encoded, scope_seqs, assume_unique=True))
        scores = matrix[rows] @ self._query_fde
        keep = min(plan.stage_one, len(rows))
        top = np.argpartition(-scores, keep - 1)[:keep] if 0 < keep < len(rows) else np.arange(len(rows))
        bare = np.fromiter(state.bare, dtype=np.int64, count=len(state.bare))
        bare = bare[np.isin(bare, scope_seqs)]
        drawn = np.union1d(encoded[rows[top]], bare)
        if state.coded is not None:
            drawn = np.union1d(drawn, tier._draw_codes(state.coded, self._query_fde, scope_seqs, whole, plan))
        seqs, unit = tier._exact.matrix(context, drawn)
        chosen, cosines = ranked_exact(seqs, unit, query, plan.hydrate)
        return Candidates(seqs=chosen, cosines=cosines, stage_one=len(drawn))

    def cosines(self, query: NDArray[np.float32], seqs: NDArray[np.int64]) -> NDArray[np.float32]:
        """Exact cosines of ``seqs`` (each still live) to ``query``."""
        present, unit = self._tier._exact.matrix(self._tier._require(), seqs)
        if len(present) != len(seqs):  # a concurrent delete: the engine's hydration drops those candidates
            lookup = dict(zip(present.tolist(), (unit @ query).tolist(), strict=True))
            return np.asarray([lookup.get(int(seq), -1.0) for seq in seqs], dtype=np.float32)
        found: NDArray[np.float32] = (unit @ query).astype(np.float32)
        return found
