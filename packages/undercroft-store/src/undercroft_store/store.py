"""`VaultStore`: one opened vault — verified reads, the write entry points, the change counter, bulk readers.

Open one with `Palace.open_vault(name, embedder, *, read_only=False)` and use it as a context manager;
closing wipes its keys. Every content read verifies the row's HMAC before decrypting or returning
anything, and serves a row only under the served-row rule (`_internal.reading`: its clear mirror columns
equal its HMAC-covered meta, its id not written back after a recorded delete); a failure is
`RecordTampered`, never partial data. An unscoped listing is under the vault's trust floor (`trust.Floor`).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from types import TracebackType

import numpy as np
import undercroft_obs as obs
from numpy.typing import NDArray
from undercroft_config import resolution
from undercroft_core.chunking import chunk
from undercroft_core.drawer import Drawer
from undercroft_core.embedder import Embedder
from undercroft_core.ids import ID_RECIPE_APPEND, DrawerIds, validate_drawer_id
from undercroft_core.model_roles import CrossEncoder, LateEncoder
from undercroft_core.normalisation import is_blank, normalise
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_obs import names
from undercroft_vault import Domain, IntegrityFailure

from undercroft_store.errors import (
    DrawerNotFound,
    EmbeddingRefused,
    InvalidDrawer,
    NothingToRemember,
    RecordTampered,
    StoreClosed,
)
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.hydration import hydrate_many as _hydrate_many
from undercroft_store.kernel._internal.meta_at_rest import stored_label
from undercroft_store.kernel._internal.opening import wipe_quietly
from undercroft_store.kernel._internal.read_door import audited_read, open_door
from undercroft_store.kernel._internal.reading import (
    SERVED_BY_ID,
    SERVED_BY_SEQ,
    SERVED_COLUMNS,
    report_tamper,
    served_drawers,
)
from undercroft_store.kernel._internal.structure import guard_scope_index
from undercroft_store.kernel._internal.vectors import unpack_row
from undercroft_store.kernel.screening import Screen, Screening
from undercroft_store.kernel.seams import verifier
from undercroft_store.kernel.tier_tables import Envelope
from undercroft_store.kernel.token_codebook import read_codebook
from undercroft_store.kernel.token_table import Matrix, portable, read_blobs, unpack_matrix
from undercroft_store.kernel.trust import Floor, read_floor
from undercroft_store.kernel.verdict import VerifyReport
from undercroft_store.kernel.writes import DrawerWrite, WriteResult, delete_drawers, record_embedder, write_drawers
from undercroft_store.stats import VaultStats, vault_stats

__all__ = ["EmbeddingMatrix", "VaultStore"]


@dataclass(frozen=True)
class EmbeddingMatrix:
    """Every stored embedding, decrypted once: ``vector[i] ≈ codes[i] * scales[i]`` for drawer ``ids[i]``."""

    seqs: NDArray[np.int64]
    ids: list[str]
    codes: NDArray[np.int8]
    scales: NDArray[np.float32]


class VaultStore:
    """One opened vault. Not thread-safe: one handle per thread (SQLite connections are per handle)."""

    def __init__(self, context: VaultContext) -> None:
        """Wrap an opened, reconciled context (use `Palace.open_vault`, not this).

        ``UNDERCROFT_READ_AUDIT`` is resolved here, once per handle: garbage refuses to open, and a read-only
        handle warns that it serves unaudited.
        """
        self._context = context
        open_door(context)

    # --- posture -------------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        """The vault id."""
        return self._context.vault_id

    @property
    def level(self) -> str:
        """``sealed`` or ``hmac-only``."""
        return self._context.manifest.level

    @property
    def read_only(self) -> bool:
        """True when opened read-only (mode=ro, query_only)."""
        return self._context.read_only

    @property
    def unhealed(self) -> tuple[str, ...]:
        """What the open declined or was unable to repair, plus the repairs a writable open made (past tense)."""
        return tuple(self._context.unhealed) + tuple(self._context.healed)

    @property
    def healed(self) -> tuple[str, ...]:
        """The repairs this (writable) open made, past tense — each also logged in ``meta.heals`` (`stats`)."""
        return tuple(self._context.healed)

    @property
    def generation(self) -> int:
        """A change counter: bumped on every committed write of this handle and on any other connection's commit."""
        context = self._live()
        version = int(context.connection.execute("PRAGMA data_version").fetchone()[0])
        if version != context.data_version:
            context.data_version = version
            context.generation += 1
        return context.generation

    def _live(self) -> VaultContext:
        if self._context.closed:
            raise StoreClosed(f"vault {self._context.vault_id!r} is closed")
        return self._context

    def close(self) -> None:
        """Close the connection and wipe the vault keys (idempotent)."""
        wipe_quietly(self._context)

    def __enter__(self) -> VaultStore:
        """Use as a context manager."""
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Close on leaving the ``with`` block."""
        self.close()

    def stats(self) -> VaultStats:
        """Records, wings, rooms, chain height and head, size, posture, unhealed, embed failures.

        Each stats read also sets the vault's gauges (drawers, chain height, bytes) on the telemetry sink: a
        no-op by default; a server under per-vault isolation suppresses them at its sink."""
        stats = vault_stats(self._live(), list(self.unhealed))
        obs.set_gauge(names.GAUGE_DRAWERS, stats.drawers, vault=stats.vault)
        obs.set_gauge(names.GAUGE_AUDIT_CHAIN_HEIGHT, stats.chain_records, vault=stats.vault)
        obs.set_gauge(names.GAUGE_STORE_BYTES, stats.db_bytes, vault=stats.vault)
        return stats

    def verify(self, *, deep: bool = False) -> VerifyReport:
        """Run every verify leg (a read: nothing is written or re-anchored); ``deep``: full integrity_check."""
        return verifier()(self._live(), deep=deep)  # integrity.verify, wired by undercroft_store.wiring

    # --- writes --------------------------------------------------------------------------------------
    def write(self, items: Sequence[DrawerWrite], *, screening: Screening) -> list[WriteResult]:
        """Write a batch through the choke point (`writes.write_drawers`)."""
        return write_drawers(self._live(), items, screening=screening)

    @property
    def embedder(self) -> Embedder:
        """The embedder this handle was opened with (the vault's vector space)."""
        return self._live().embedder

    @property
    def cross_encoder(self) -> CrossEncoder | None:
        """The rescore stage's cross-encoder attached to this handle (None: no stage; `search.rescore`)."""
        return self._live().cross_encoder

    def attach_cross_encoder(self, encoder: CrossEncoder) -> None:
        """Rerank this handle's searches with ``encoder`` (the composition root's, built once per process).

        ``stats().rerank_failures`` then counts the pair scores it degraded since this call, so a model shared
        by several vaults charges each handle only its own failures."""
        if not isinstance(encoder, CrossEncoder):
            raise TypeError(f"a cross-encoder implements undercroft_core.model_roles.CrossEncoder, got {encoder!r}")
        context = self._live()
        context.cross_encoder = encoder
        context.rerank_failures_at_attach = encoder.rerank_failures

    @property
    def late_encoder(self) -> LateEncoder | None:
        """The late-interaction stage's encoder attached to this handle (None: no stage; `search.late`)."""
        return self._live().late_encoder

    def attach_late_encoder(self, encoder: LateEncoder, *, backend: str = "onnx") -> None:
        """Store each written drawer's token matrix and rescore searches by MaxSim over them (`search.late`).

        From this call on, every drawer this handle writes gets its matrix encoded once and stored sealed under
        ``{id}/tok`` (`kernel.token_table`); drawers written before it are backfilled by ``repair --tokens``.
        ``stats().late_failures`` counts the matrices the role degraded to empty since this call; ``backend``
        (``onnx`` or ``ort``) labels ``late_failures_total``."""
        if not isinstance(encoder, LateEncoder):
            raise TypeError(f"a late encoder implements undercroft_core.model_roles.LateEncoder, got {encoder!r}")
        if not 0 < len(encoder.name.encode("utf-8")) <= 255:  # the name is stored inside every matrix
            raise InvalidDrawer(f"a late encoder's name is 1 to 255 UTF-8 bytes, got {encoder.name!r}")
        context = self._live()
        context.late_encoder = encoder
        context.late_failures_at_attach = encoder.late_failures
        context.late_backend = backend
        pq_min = resolution.value("UNDERCROFT_TOK_PQ_MIN")
        context.late_pq_min = pq_min if isinstance(pq_min, int) else 256

    def record_embedder(self) -> None:
        """Record this handle's embedder identity now, before any drawer (see `writes.record_embedder`)."""
        record_embedder(self._live())

    @property
    def drawer_ids(self) -> DrawerIds:
        """This vault's drawer-id recipe: derive the id of every drawer written here with it (a source chunk
        with ``.source(...)``, an API save with ``.append(...)``). Keyed (``hmac-v1``) on a sealed vault
        created since issue 29, public (``sha256-v1``) on older and hmac-only vaults; ``.recipe`` names it."""
        return self._live().drawer_ids

    def allocate_append_indices(self, count: int) -> int:
        """Reserve ``count`` unique append indices (for ``append``-recipe ids); returns the first.

        A drawer written through this handle with one of them must be new: the write refuses with
        `AppendCollision` (nothing written) when its id already holds a drawer or a tombstone."""
        context = self._live()
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise InvalidDrawer(f"append index count must be a positive integer, got {count!r}")
        connection = context.connection
        connection.execute("BEGIN IMMEDIATE")
        try:
            row = connection.execute("SELECT value FROM meta WHERE key = 'append_counter'").fetchone()
            first = int(bytes(row[0]).decode("ascii")) if row is not None else 0
            connection.execute(
                "INSERT INTO meta (key, value) VALUES ('append_counter', ?) "
                "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                (str(first + count).encode("ascii"),),
            )
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        # The write of a drawer carrying one of these must create: the choke point refuses a replace.
        context.fresh_appends.update(range(first, first + count))
        return first

    def remember(
        self,
        text: str,
        *,
        wing: str,
        room: str,
        added_by: str,
        kind: str | None = None,
        agent: str | None = None,
        screening: Screening | None = None,
        vector: Sequence[float] | None = None,
    ) -> list[WriteResult]:
        """Normalise, chunk and save ``text`` as append-recipe drawers (screened unless told otherwise).

        ``agent`` is recorded as the writer's claim on every drawer; text that normalises to nothing raises
        `NothingToRemember`. ``vector`` is the caller's own embedding of the text (an ``external:`` vault takes
        no other): it describes one drawer, so text that chunks into more than one is refused (`InvalidDrawer`),
        before anything is written."""
        context = self._live()
        if context.read_only:
            return write_drawers(context, [], screening=Screen())  # raises ReadOnlyStore
        normalised = normalise(text)
        if is_blank(normalised):  # zero-width characters are no more a memory than spaces are
            raise NothingToRemember("nothing to remember: the text is empty or whitespace (invisible characters count)")
        pieces = chunk(normalised)
        if vector is not None and len(pieces) != 1:
            raise InvalidDrawer(
                f"a supplied vector describes one drawer, but the text chunks into {len(pieces)} pieces: "
                "save each piece with its own vector"
            )
        first = self.allocate_append_indices(len(pieces))
        filed_at = context.now()
        drawers = [
            Drawer(
                id=context.drawer_ids.append(wing, room, first + offset),
                content=piece.text,
                wing=wing,
                room=room,
                chunk_index=first + offset,
                id_recipe=ID_RECIPE_APPEND,
                added_by=added_by,
                filed_at=filed_at,
                kind=kind,
                agent=agent,
            )
            for offset, piece in enumerate(pieces)
        ]
        return self.write([DrawerWrite(d, vector) for d in drawers], screening=screening or Screen())

    def delete(self, drawer_id: str) -> None:
        """Delete one drawer (tombstone + audit record); `DrawerNotFound` when it does not exist."""
        delete_drawers(self._live(), [drawer_id])

    # --- verified reads (each public one audited: one ``read/<op>`` record per outermost read) ---------
    @audited_read("get", subject=lambda a: str(a["drawer_id"]), scope=lambda a: {"wing": a["wing"]})
    def get(self, drawer_id: str, *, wing: str | None = None) -> Drawer:
        """The verified drawer ``drawer_id``; `DrawerNotFound`, or `RecordTampered` on an HMAC failure.

        A resident of the quarantine wing answers only a caller naming it (``wing="quarantine-pending"``).
        """
        context = self._live()
        try:
            validate_drawer_id(drawer_id)
        except ValueError as error:
            raise InvalidDrawer(str(error)) from None
        row = context.connection.execute(SERVED_BY_ID, (drawer_id,)).fetchone()
        if row is None:
            raise DrawerNotFound(f"no drawer {drawer_id} in vault {context.vault_id!r}")
        [drawer] = served_drawers(context, [row])
        if drawer.wing == QUARANTINE_WING and wing != QUARANTINE_WING:  # the quarantine fence (HMAC-covered wing)
            raise DrawerNotFound(
                f"no drawer {drawer_id} in vault {context.vault_id!r} outside {QUARANTINE_WING!r} "
                "(name the wing to review it)"
            )
        return drawer

    def scope_seqs(
        self,
        *,
        wing: str | None = None,
        room: str | None = None,
        kind: str | None = None,
        include_quarantine: bool = False,
    ) -> NDArray[np.int64]:
        """The ``seq`` of every drawer in a scope, ascending (the quarantine wing only when named or asked)."""
        context = self._live()
        clauses, params = _scope(context, wing, room, kind, include_quarantine, None)
        sql = f"SELECT seq FROM drawers{clauses} ORDER BY seq"  # noqa: S608 - fixed clauses, bound values
        if wing is not None or room is not None:
            guard_scope_index(context)  # a damaged index would answer short, silently
        rows = context.connection.execute(sql, params).fetchall()
        return np.fromiter((r[0] for r in rows), dtype=np.int64, count=len(rows))

    @audited_read(
        "list",
        subject=lambda a: "",
        scope=lambda a: {k: a[k] for k in ("wing", "room", "kind", "limit", "include_quarantine")},
    )
    def list_drawers(
        self,
        *,
        wing: str | None = None,
        room: str | None = None,
        kind: str | None = None,
        limit: int | None = None,
        include_quarantine: bool = False,
        trust_floor: bool = True,
    ) -> list[Drawer]:
        """Verified drawers in a scope, newest first (the quarantine wing only when named).

        Unscoped (no `wing`), the listing is under the vault's trust floor (``UNDERCROFT_TRUST_FLOOR``, the one
        rule `trust.read_floor` resolves for every unscoped read); naming a wing bypasses it. ``trust_floor=False``
        is for the engine deciding a write from the listing, never for a read that hands content out.
        """
        if limit is not None and (isinstance(limit, bool) or not isinstance(limit, int) or limit < 1):
            raise InvalidDrawer(f"limit must be a positive integer, got {limit!r}")
        context = self._live()
        floor = read_floor(self, wing=wing) if trust_floor else None
        clauses, params = _scope(context, wing, room, kind, include_quarantine, floor)
        sql = f"SELECT {SERVED_COLUMNS} FROM drawers{clauses} ORDER BY seq DESC"  # noqa: S608 - fixed clauses
        if limit is not None:
            sql += f" LIMIT {int(limit)}"
        if wing is not None or room is not None:
            guard_scope_index(context)  # a damaged index would answer short, silently
        return served_drawers(context, context.connection.execute(sql, params).fetchall())

    def count(self) -> int:
        """Live drawers, the quarantine wing included."""
        return int(self._live().connection.execute("SELECT count(*) FROM drawers").fetchone()[0])

    @audited_read("get", subject=lambda a: "hydrate")
    def hydrate(self, keys: Iterable[int | str]) -> list[Drawer]:
        """Verified drawers for ``seq`` numbers or ids, in the order given; keys no longer present are skipped."""
        context = self._live()
        rows = []
        for key in keys:
            if isinstance(key, str):
                row = context.connection.execute(SERVED_BY_ID, (key,)).fetchone()
            elif isinstance(key, int | np.integer) and not isinstance(key, bool):
                row = context.connection.execute(SERVED_BY_SEQ, (int(key),)).fetchone()
            else:
                raise InvalidDrawer(f"hydrate takes seq numbers or drawer ids, got {type(key).__name__}")
            if row is not None:
                rows.append(row)
        return served_drawers(context, rows)

    @audited_read("get", subject=lambda a: "hydrate")
    def hydrate_many(self, seqs: Iterable[int]) -> dict[int, Drawer]:
        """Verified drawers by ``seq`` in the order given, read in batches (seqs no longer present are skipped).

        Each row's HMAC is checked before it is opened, as in `hydrate`; any failure raises `RecordTampered`.
        """
        context = self._live()
        wanted: list[int] = []
        for seq in seqs:
            if isinstance(seq, bool) or not isinstance(seq, int | np.integer):
                raise InvalidDrawer(f"hydrate_many takes seq numbers, got {type(seq).__name__}")
            wanted.append(int(seq))
        return _hydrate_many(context, wanted)

    def token_matrices(self, seqs: Sequence[int]) -> dict[int, Matrix | None]:
        """The late stage's stored matrices of ``seqs`` (`kernel.token_table`), each opened under its drawer's
        ``{id}/tok`` domain: a seq holding none is absent, one whose blob fails its seal or format maps to None
        (never trusted: the caller encodes that drawer again, verify names it). Whether a matrix is *current*
        (same encoder, same content) is the caller's check (`Matrix.current`), against the verified content."""
        context = self._live()
        stored = read_blobs(context.connection, [int(seq) for seq in seqs])
        envelope = Envelope(context)
        domains = [Domain.tokens(drawer_id) for drawer_id, _ in stored.values()]
        plains = envelope.open_each(domains, [blob for _, blob in stored.values()])  # one batched open
        codebook = read_codebook(context.connection, envelope).stored if stored else None
        return {
            seq: None if plain is None else unpack_matrix(plain, codebook)
            for seq, plain in zip(stored, plains, strict=True)
        }

    def token_artifacts(self, seqs: Sequence[int]) -> dict[str, bytes]:
        """``drawer id -> matrix`` for ``seqs`` in the portable plaintext form (`kernel.token_table.pack_matrix`),
        each opened under its drawer's ``{id}/tok`` domain — what an export line carries so an import stores
        by copy. A seq holding none, or one whose blob fails its seal or format, is absent (never exported)."""
        context = self._live()
        stored = read_blobs(context.connection, [int(seq) for seq in seqs])
        envelope = Envelope(context)
        domains = [Domain.tokens(drawer_id) for drawer_id, _ in stored.values()]
        plains = envelope.open_each(domains, [blob for _, blob in stored.values()])
        codebook = read_codebook(context.connection, envelope).stored if stored else None
        found: dict[str, bytes] = {}
        for (drawer_id, _), plain in zip(stored.values(), plains, strict=True):
            carried = None if plain is None else portable(plain, codebook)  # PQ codes are decoded to int8
            if carried is not None:
                found[drawer_id] = carried
        return found

    def iter_embeddings(self) -> EmbeddingMatrix:
        """Every embedding decrypted once (sealed blobs open under ``{id}/emb``, bound to their id)."""
        context = self._live()
        dimension = context.embedder.dimension
        rows = context.connection.execute("SELECT seq, id, embedding, meta_json FROM drawers ORDER BY seq").fetchall()
        seqs = np.empty(len(rows), dtype=np.int64)
        codes = np.empty((len(rows), dimension), dtype=np.int8)
        scales = np.empty(len(rows), dtype=np.float32)
        ids: list[str] = []
        for i, (seq, drawer_id, blob, meta) in enumerate(rows):
            try:
                packed = (
                    context.sealer.open(Domain.embedding(drawer_id), bytes(blob)) if context.sealed else bytes(blob)
                )
            except IntegrityFailure as error:
                report_tamper(context, drawer_id, bytes(meta))
                raise RecordTampered(f"embedding of {drawer_id} in vault {context.vault_id!r}: {error}") from None
            try:
                scale, vector = unpack_row(packed, dimension)
            except EmbeddingRefused:
                # Another vector space (a pending upgrade or a forced swap): semantically invisible until
                # repair re-embeds it. Not a tamper verdict: a sealed blob that opened is authentic.
                scale, vector = 0.0, np.zeros(dimension, dtype=np.int8)
            seqs[i], scales[i] = seq, scale
            codes[i] = vector
            ids.append(drawer_id)
        return EmbeddingMatrix(seqs=seqs, ids=ids, codes=codes, scales=scales)


def _scope(
    context: VaultContext,
    wing: str | None,
    room: str | None,
    kind: str | None,
    include_quarantine: bool,
    floor: Floor | None,
) -> tuple[str, tuple[str, ...]]:
    # Label-column filters (blind values on a sealed vault): a row they select is served only if its
    # columns equal its covered meta.
    clauses: list[str] = []
    params: list[str] = []
    for column, value in (("wing", wing), ("room", room), ("kind", kind)):
        if value is not None:
            clauses.append(f"{column} = ?")
            params.append(str(stored_label(context, column, value)))
    if wing is None and not include_quarantine:
        clauses.append("wing != ?")
        params.append(str(stored_label(context, "wing", QUARANTINE_WING)))
    if floor is not None:
        condition, values = floor.clause()
        clauses.append(condition)
        params.extend(str(stored_label(context, "wing", value)) for value in values)
    return ((" WHERE " + " AND ".join(clauses)) if clauses else "", tuple(params))
