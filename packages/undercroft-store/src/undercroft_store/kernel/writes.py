"""The write choke point: every drawer write (save, update, import, restore, dedup refresh, diversion) goes here.

`write_drawers` validates (names, kind, id shape and recipe, content bound, vector dimension and
finiteness), applies or bypasses the admission screen, decides from the VERIFIED stored rows what is
unchanged (a row failing its tag is `RecordTampered`: `_internal/write_decision.py`), embeds, seals and
tags only what it will write, and then — in ONE ``BEGIN IMMEDIATE``
transaction — writes the drawer rows, the audit rows and the advanced chain head. The manifest anchor is
written after the commit, so a crash leaves it equal or behind (healed at the next open), never ahead.
`delete_drawers`, `refresh_embeddings`, `refresh_fingerprints` (repair) and `rekey_drawers` (rotation) are
the only other statements that touch the drawer table; a
test fails if any other module of the store issues INSERT/UPDATE/DELETE on it.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np
import undercroft_obs as obs
from numpy.typing import NDArray
from undercroft_core.drawer import Drawer
from undercroft_core.errors import InvalidInput
from undercroft_core.ids import ID_RECIPE_APPEND, validate_drawer_id
from undercroft_core.quantisation import QuantisedVectors
from undercroft_core.vocabulary import QUARANTINE_WING, names_quarantine_wing, reserved_wing_refusal, validate_kind
from undercroft_obs import names
from undercroft_vault import AuditRow, Domain, compute_tag

from undercroft_store.errors import (
    AppendCollision,
    DrawerNotFound,
    EmbedderMismatch,
    InvalidDrawer,
    ReadOnlyStore,
    StoreClosed,
)
from undercroft_store.kernel._internal.chain_append import append_in_transaction, commit_and_anchor
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.meta_at_rest import register_names, seal_metas, stored_label, stored_labels
from undercroft_store.kernel._internal.structure import read_counter
from undercroft_store.kernel._internal.vectors import embed_quantised, pack_rows, quantise_supplied
from undercroft_store.kernel._internal.write_decision import (
    LOOKUP_CHUNK,
    Incoming,
    StoredRow,
    incoming,
    is_unchanged,
    stored_rows,
)
from undercroft_store.kernel.fde_tables import drop_for as drop_fde_rows
from undercroft_store.kernel.screening import Bypass, BypassReason, Screen, Screening
from undercroft_store.kernel.seams import Diverted, write_screen
from undercroft_store.kernel.snapshot_table import drop_rows as drop_search_snapshot
from undercroft_store.kernel.tier_tables import Envelope
from undercroft_store.kernel.token_codebook import codebook_present, compress_matrices, read_codebook
from undercroft_store.kernel.token_table import count_rows as count_token_rows
from undercroft_store.kernel.token_table import delete_seqs as drop_token_rows
from undercroft_store.kernel.token_table import pack_matrix, pack_pq, supplied_current
from undercroft_store.kernel.token_table import write_rows as write_token_rows

__all__ = [
    "MAX_BATCH",
    "MAX_CONTENT_BYTES",
    "DrawerWrite",
    "WriteOutcome",
    "WriteResult",
    "delete_drawers",
    "delete_within",
    "record_embedder",
    "refresh_embeddings",
    "refresh_fingerprints",
    "rekey_drawers",
    "relabel_drawers",
    "write_drawers",
]

#: Largest drawer content accepted, in UTF-8 bytes (a chunk is ~800 characters; this bounds imports).
MAX_CONTENT_BYTES = 64 * 1024
#: Largest batch one transaction takes.
MAX_BATCH = 10_000

WriteOutcome = Literal["created", "updated", "deduped", "quarantined"]
# The bypasses that may put a drawer into the reserved quarantine wing.
_QUARANTINE_PATHS = frozenset({BypassReason.ALREADY_DIVERTED, BypassReason.RESTORE, BypassReason.ROTATION})


@dataclass(frozen=True, slots=True)
class DrawerWrite:
    """One drawer to write, optionally with a caller-supplied vector (import, external embedder) and token matrix.

    ``tokens`` is a matrix in the stored plaintext form (`kernel.token_table.pack_matrix`: an import's line).
    It is stored by copy only when it is current for this drawer and the attached late encoder (same encoder,
    same width, made from exactly this content); otherwise — or with no encoder attached — it is ignored and
    the write path encodes the drawer as it would any other."""

    drawer: Drawer
    vector: NDArray[np.floating] | Sequence[float] | None = None
    tokens: bytes | None = None


@dataclass(frozen=True, slots=True)
class WriteResult:
    """What happened to one drawer: its id, its ``seq`` (write order) and the outcome.

    A diverted write says ``quarantined``: ``id`` is the queue slot it actually landed under and
    ``intended_id`` the id it aimed at (None for every write that was not diverted).
    """

    id: str
    seq: int
    outcome: WriteOutcome
    intended_id: str | None = None

    @property
    def diverted(self) -> bool:
        """True when the admission screen diverted this write into the quarantine wing."""
        return self.intended_id is not None


@dataclass(slots=True)
class _Prepared:
    drawer: Drawer
    meta: bytes
    content: bytes
    embedding: bytes
    fingerprint: bytes
    tag: bytes
    tokens: bytes | None = None  # the late stage's packed matrix (None: no encoder attached, or it failed)


# A drawer's packed embedding row: supplied (validated) or still to embed (None).
_Vector = bytes | None


def _check_open(context: VaultContext) -> None:
    if context.closed:
        raise StoreClosed(f"vault {context.vault_id!r} is closed")
    if context.read_only:
        raise ReadOnlyStore(f"vault {context.vault_id!r} is open read-only: writes are refused")


def _validate(context: VaultContext, drawer: object, position: int) -> Drawer:
    if not isinstance(drawer, Drawer):
        raise InvalidDrawer(f"write {position}: expected a Drawer, got {type(drawer).__name__}")
    try:
        validate_drawer_id(drawer.id)
        # The recipe re-derives the id from the wing and room and validates both names on the way: one
        # pass, not a second one here (a forged name is still refused: test_store_writes_perf.py).
        expected = drawer.expected_id(context.drawer_ids)  # the vault's own recipe (keyed on new sealed vaults)
        if drawer.kind is not None:
            validate_kind(drawer.kind)
    except InvalidInput as error:
        raise InvalidDrawer(f"write {position}: {error}") from None
    if expected != drawer.id:
        raise InvalidDrawer(
            f"write {position}: drawer id {drawer.id} does not match its {drawer.id_recipe!r} recipe "
            f"(expected {expected} for this wing, room, source and chunk index)"
        )
    size = len(drawer.content.encode("utf-8"))
    if size > MAX_CONTENT_BYTES:
        raise InvalidDrawer(f"write {position}: content is {size} UTF-8 bytes, the bound is {MAX_CONTENT_BYTES}")
    return drawer


def _supplied(context: VaultContext, items: Sequence[DrawerWrite]) -> list[_Vector]:
    """Every supplied vector validated and packed (a bad one is refused even when its drawer dedups)."""
    dimension = context.embedder.dimension
    return [
        None if item.vector is None else pack_rows(quantise_supplied(item.vector, dimension, f"write {i}"))[0]
        for i, item in enumerate(items)
    ]


def _embed_missing(context: VaultContext, drawers: Sequence[Drawer], packed: Sequence[_Vector]) -> list[bytes]:
    """The packed rows of `drawers`: the supplied ones as given, the rest embedded in one sliced call."""
    missing = [i for i, row in enumerate(packed) if row is None]
    rows = list(packed)
    if missing:
        before = context.embedder.embed_failures
        quantised: QuantisedVectors = embed_quantised(context.embedder, [drawers[i].content for i in missing])
        failures = context.embedder.embed_failures - before
        if failures > 0:
            _count_embed_failures(context, failures)
        for i, row in zip(missing, pack_rows(quantised), strict=True):
            rows[i] = row
    return [row for row in rows if row is not None]


def _count_embed_failures(context: VaultContext, failures: int) -> None:
    backend = context.embedder.identity.name.split(":", 1)[0].split("-", 1)[0]
    if backend in names.EMBED_BACKENDS:
        obs.increment(names.EMBED_FAILURES_TOTAL, failures, backend=backend)


#: Runs inside the write transaction (after BEGIN IMMEDIATE, before the rows): returns audit records to append.
TransactionHook = Callable[[str], list[AuditRow]]


def _screen(
    context: VaultContext, items: list[DrawerWrite], screening: Screening
) -> tuple[list[DrawerWrite], TransactionHook | None, dict[str, Diverted]]:
    """The admission screen (`seams.write_screen`, governance's quarantine); a Bypass skips it by name.

    Screen off returns the batch as is; an unwired screen refuses the write (`SeamMissing`) before anything lands.
    """
    if isinstance(screening, Bypass):
        return items, None, {}
    batch, hook, slots = write_screen().divert(context, list(items))
    return [item for item in batch if isinstance(item, DrawerWrite)], hook, slots


def _prepare(
    context: VaultContext, items: Sequence[Incoming], packed: Sequence[_Vector], supplied: Sequence[bytes | None]
) -> list[_Prepared]:
    """Embed what has no vector, then seal (sealed vaults) and tag: the meta and fingerprint were encoded once."""
    keys, sealer, sealed = context.keys, context.sealer, context.sealed
    embeddings = _embed_missing(context, [item.drawer for item in items], packed)
    matrices = _encode_tokens(context, [item.drawer for item in items], supplied)
    ids = [item.drawer.id for item in items]
    contents = [item.plain for item in items]
    if sealed:
        # One batched seal per artifact kind, each blob under its own domain and fresh nonce (`seal_many`).
        contents = sealer.seal_many([Domain.content(drawer_id) for drawer_id in ids], contents)
        embeddings = sealer.seal_many([Domain.embedding(drawer_id) for drawer_id in ids], embeddings)
    # The tag covers the meta AT REST (sealed on a sealed vault), as it covers the content at rest.
    metas = seal_metas(context, ids, [item.meta for item in items])
    return [
        _Prepared(
            item.drawer,
            meta,
            at_rest,
            embedding,
            item.fingerprint,
            compute_tag(keys, item.drawer.id, meta, at_rest),
            tokens,
        )
        for item, meta, at_rest, embedding, tokens in zip(items, metas, contents, embeddings, matrices, strict=True)
    ]


def _encode_tokens(
    context: VaultContext, drawers: Sequence[Drawer], supplied: Sequence[bytes | None]
) -> list[bytes | None]:
    """The late stage's packed matrix of each drawer, encoded once at write time (`kernel.token_table`).

    A supplied matrix that is current for its drawer and this encoder is kept as given (an import's copy: no
    forward); every other drawer is encoded. None for every drawer when no late encoder is attached; None for
    a drawer whose matrix degraded to empty (counted in ``late_failures`` by the role): the write lands, and
    ``repair --tokens`` backfills it."""
    encoder = context.late_encoder
    if encoder is None or not drawers:
        return [None] * len(drawers)
    out: list[bytes | None] = [
        plain if supplied_current(plain, encoder.name, encoder.dimension, drawer.content) else None
        for drawer, plain in zip(drawers, supplied, strict=True)
    ]
    todo = [i for i, plain in enumerate(out) if plain is None]
    if not todo:
        return out
    before = encoder.late_failures
    try:
        matrices = list(encoder.encode_documents([drawers[i].content for i in todo]))
    except Exception:  # noqa: BLE001 - a role that breaks its no-raise contract must not cost the write
        matrices = []
    failed = encoder.late_failures - before
    if failed > 0 and context.late_backend in names.RERANK_BACKENDS:
        obs.increment(names.LATE_FAILURES_TOTAL, failed, backend=context.late_backend, side="doc")
    if len(matrices) != len(todo):
        return out  # nothing encoded stored: repair --tokens backfills, the search encodes in RAM
    for i, matrix in zip(todo, matrices, strict=True):
        out[i] = _packed(encoder.name, encoder.dimension, drawers[i].content, matrix)
    return out


def _packed(name: str, dimension: int, content: str, matrix: NDArray[np.floating]) -> bytes | None:
    """The stored form of one matrix, or None for one not worth storing (empty, non-finite, another width)."""
    array = np.asarray(matrix)
    if array.ndim != 2 or array.shape[0] == 0 or array.shape[1] != dimension or not np.isfinite(array).all():
        return None
    return pack_matrix(name, content, array)


def record_embedder(context: VaultContext) -> None:
    """Record the handle's embedder identity before any write (an ``external:`` vault declares its space at
    creation, so every later open knows it); refuses a different recorded identity like a write would."""
    if context.read_only:
        raise ReadOnlyStore(f"vault {context.vault_id!r} is open read-only: writes are refused")
    connection = context.connection
    connection.execute("BEGIN IMMEDIATE")
    try:
        _record_embedder(context)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise


def _record_embedder(context: VaultContext) -> None:
    label = context.embedder.identity.label
    row = context.connection.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
    if row is None:
        context.connection.execute("INSERT INTO meta (key, value) VALUES ('embedder', ?)", (label.encode(),))
    elif bytes(row[0]).decode() != label and not context.force_embedder:
        raise EmbedderMismatch(
            f"vault {context.vault_id!r} records embedder {bytes(row[0]).decode()!r}, this write offers {label!r}; "
            "set UNDERCROFT_FORCE_EMBEDDER=1 and run repair to re-embed"
        )


_UPSERT = """INSERT INTO drawers (id, wing, room, kind, supersedes, meta_json, content, embedding, fingerprint, tag)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
           ON CONFLICT (id) DO UPDATE SET wing = excluded.wing, room = excluded.room, kind = excluded.kind,
             supersedes = excluded.supersedes, meta_json = excluded.meta_json, content = excluded.content,
             embedding = excluded.embedding, fingerprint = excluded.fingerprint, tag = excluded.tag"""


def _seqs(context: VaultContext, ids: Sequence[str]) -> dict[str, int]:
    """``id -> seq`` of the rows just written, in chunked ``IN`` queries."""
    found: dict[str, int] = {}
    for first in range(0, len(ids), LOOKUP_CHUNK):
        chunk = ids[first : first + LOOKUP_CHUNK]
        query = f"SELECT id, seq FROM drawers WHERE id IN ({','.join('?' * len(chunk))})"  # noqa: S608 - marks only
        found.update((drawer_id, int(seq)) for drawer_id, seq in context.connection.execute(query, chunk))
    return found


def _upsert(context: VaultContext, items: list[_Prepared]) -> dict[str, int]:
    """Write every row in one executemany (the FTS rows too on hmac-only); returns ``id -> seq``."""
    connection = context.connection
    register_names(context, {(f, n) for i in items for f, n in (("wing", i.drawer.wing), ("room", i.drawer.room))})
    connection.executemany(
        _UPSERT,
        [
            (i.drawer.id, *stored_labels(context, i.drawer), i.meta, i.content, i.embedding, i.fingerprint, i.tag)
            for i in items
        ],
    )
    seqs = _seqs(context, [i.drawer.id for i in items])
    # A rewritten drawer's old matrix never outlives its old text: replaced by the new one, or dropped.
    drop_token_rows(connection, [seqs[i.drawer.id] for i in items if i.tokens is None])
    drop_fde_rows(connection, [seqs[i.drawer.id] for i in items])  # so is its FDE row (the tier encodes anew)
    matrices = [(seqs[i.drawer.id], i.drawer.id, i.tokens) for i in items if i.tokens is not None]
    envelope = Envelope(context)
    # Read under the write lock: a matrix is coded against the codebook the vault holds as it commits.
    codebook = read_codebook(connection, envelope).stored if matrices else None
    if codebook is not None:
        matrices = [(seq, drawer_id, pack_pq(plain, codebook)) for seq, drawer_id, plain in matrices]
    write_token_rows(connection, envelope, matrices)
    if not context.sealed:
        connection.executemany("DELETE FROM drawers_fts WHERE rowid = ?", [(seqs[i.drawer.id],) for i in items])
        connection.executemany(
            "INSERT INTO drawers_fts (rowid, content) VALUES (?, ?)",
            [(seqs[i.drawer.id], i.drawer.content) for i in items],
        )
    return seqs


def write_drawers(
    context: VaultContext,
    items: Sequence[DrawerWrite],
    *,
    screening: Screening,
    within: TransactionHook | None = None,
) -> list[WriteResult]:
    """THE write choke point: validate, screen, seal, tag, and commit rows + audit + chain head together.

    ``within`` (governance rulings) runs inside the transaction before the rows are written and may refuse.
    """
    _check_open(context)
    if not isinstance(screening, Screen | Bypass):
        raise InvalidDrawer(f"screening must be Screen() or Bypass(reason), got {screening!r}")
    batch = list(items)
    if len(batch) > MAX_BATCH:
        raise InvalidDrawer(f"a batch holds at most {MAX_BATCH} drawers, got {len(batch)}")
    seen: set[str] = set()
    for position, item in enumerate(batch):
        if not isinstance(item, DrawerWrite):
            raise InvalidDrawer(f"write {position}: expected a DrawerWrite, got {type(item).__name__}")
        drawer = _validate(context, item.drawer, position)
        if drawer.id in seen:
            raise InvalidDrawer(f"write {position}: drawer id {drawer.id} appears twice in one batch")
        seen.add(drawer.id)
        diverted = isinstance(screening, Bypass) and screening.reason in _QUARANTINE_PATHS
        if names_quarantine_wing(drawer.wing) and not (diverted and drawer.wing == QUARANTINE_WING):
            raise InvalidDrawer(f"write {position}: {reserved_wing_refusal(drawer.wing)}")
    if not batch:
        return []
    with obs.span(names.SPAN_SAVE, vault=context.vault_id, drawers=len(batch)) as span:
        results = _write_screened(context, batch, screening, within)
        for outcome in ("created", "deduped", "quarantined"):
            span.set(outcome, sum(1 for result in results if result.outcome == outcome))
    _maybe_compress_tokens(context)
    return results


def _maybe_compress_tokens(context: VaultContext) -> None:
    """Past ``UNDERCROFT_TOK_PQ_MIN`` stored matrices, the first write to reach it trains the token codebook and
    PQ-codes every matrix, in its own transaction after this write's commit (`kernel.token_codebook`)."""
    if context.late_encoder is None:
        return
    stored = count_token_rows(context.connection)
    if stored < max(context.late_pq_min, context.late_pq_next) or codebook_present(context.connection):
        return
    if not compress_matrices(context, context.late_pq_min):
        # Nothing to train on yet (too few tokens, mixed widths): the next try waits for twice the matrices,
        # so a vault that cannot train costs a bounded, amortised number of surveys.
        context.late_pq_next = 2 * stored


def _write_screened(
    context: VaultContext, batch: list[DrawerWrite], screening: Screening, within: TransactionHook | None
) -> list[WriteResult]:
    """`write_drawers` after validation: screen, dedup-decide, prepare and commit the batch."""
    batch, diversion, slots = _screen(context, batch, screening)
    packed = _supplied(context, batch)
    supplied = [item.tokens if isinstance(item.tokens, bytes) else None for item in batch]
    arriving = [incoming(context, item.drawer) for item in batch]
    # Dedup is decided first, outside the lock, from VERIFIED rows: only what will be written is embedded,
    # sealed and tagged (a re-sweep of a filed tree embeds nothing). The lock re-checks every row.
    stored = stored_rows(context, [item.drawer.id for item in arriving])
    unchanged = {
        item.drawer.id
        for item in arriving
        if (row := stored.get(item.drawer.id)) is not None and is_unchanged(context, item, row)
    }
    to_write = [i for i, item in enumerate(arriving) if item.drawer.id not in unchanged]
    prepared = _prepare(
        context, [arriving[i] for i in to_write], [packed[i] for i in to_write], [supplied[i] for i in to_write]
    )
    hooks = [hook for hook in (within, diversion) if hook is not None]
    decided = _Decided(stored, unchanged, {item.drawer.id: item for item in prepared}, packed, supplied)
    results = _commit_batch(context, arriving, decided, hooks, slots)
    if isinstance(screening, Screen):
        committed = zip(arriving, results, strict=True)
        writers = [item.drawer.added_by for item, result in committed if result.outcome != "deduped"]
        write_screen().record_commits(context, writers)
    return results


@dataclass(slots=True)
class _Decided:
    """What was decided outside the lock: the rows seen, the ids unchanged, the rows prepared to write."""

    seen: dict[str, StoredRow]
    unchanged: set[str]
    prepared: dict[str, _Prepared]
    packed: list[_Vector]
    supplied: list[bytes | None]

    def still_unchanged(self, context: VaultContext, item: Incoming, row: StoredRow) -> bool:
        """The decision under the lock: reused when the row holds the very bytes verified before, else re-taken."""
        if row == self.seen.get(item.drawer.id):
            return item.drawer.id in self.unchanged
        return is_unchanged(context, item, row)


def _commit_batch(
    context: VaultContext,
    arriving: list[Incoming],
    decided: _Decided,
    hooks: Sequence[TransactionHook] = (),
    slots: dict[str, Diverted] | None = None,
) -> list[WriteResult]:
    connection = context.connection
    slots = slots or {}
    # Per drawer: (seq or None until written, outcome, intended id); rows to write, in batch order.
    outcomes: list[tuple[int | None, WriteOutcome, str | None]] = []
    writes: list[int] = []
    audit: list[AuditRow] = []
    at = context.now()
    connection.execute("BEGIN IMMEDIATE")
    try:
        _record_embedder(context)
        for hook in hooks:
            audit.extend(hook(at))
        current = stored_rows(context, [item.drawer.id for item in arriving])
        fresh = _refuse_append_collisions(context, arriving, current)
        for position, item in enumerate(arriving):
            row = current.get(item.drawer.id)
            diverted = slots.get(item.drawer.id)
            intended = None if diverted is None else diverted.intended_id
            if row is not None and decided.still_unchanged(context, item, row):
                converged: WriteOutcome = "quarantined" if intended is not None else "deduped"
                outcomes.append((row.seq, converged, intended))
                continue
            writes.append(position)
            outcome: WriteOutcome = "updated" if row is not None else "created"
            if item.drawer.wing == QUARANTINE_WING:
                outcome = "quarantined"
            outcomes.append((None, outcome, intended))
        rows = _rows_to_write(context, arriving, decided, writes)
        audit.extend(AuditRow(f"drawer/{item.drawer.id}", item.tag, at) for item in rows)
        seqs = _upsert(context, rows) if rows else {}
        _keep_counter_ahead(context, rows)
        results = [
            WriteResult(item.drawer.id, seqs[item.drawer.id] if seq is None else seq, outcome, intended)
            for item, (seq, outcome, intended) in zip(arriving, outcomes, strict=True)
        ]
        append_in_transaction(context, audit)
        commit_and_anchor(context, len(audit))
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    context.fresh_appends.difference_update(fresh)
    _signal_writes(context, results, [item.drawer for item in arriving], slots)
    return results


def _keep_counter_ahead(context: VaultContext, rows: list[_Prepared]) -> None:
    """``meta.append_counter`` stays above every append index written, on every path (a save, an import that
    keeps its ids, a hand-built batch), so verify can read a counter at or below one as an edit."""
    indices = [
        item.drawer.chunk_index
        for item in rows
        if item.drawer.id_recipe == ID_RECIPE_APPEND and item.drawer.wing != QUARANTINE_WING
    ]
    if not indices:
        return
    counter = read_counter(context.connection)
    if counter is None or counter <= max(indices):
        context.connection.execute(
            "INSERT INTO meta (key, value) VALUES ('append_counter', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(max(indices) + 1).encode("ascii"),),
        )


def _refuse_append_collisions(
    context: VaultContext, arriving: list[Incoming], current: dict[str, StoredRow]
) -> set[int]:
    """Under the write lock: a drawer carrying an append index this handle allocated must be NEW.

    Its id holding a live row or a tombstone means the allocator was moved back (``meta.append_counter``
    edited or rolled back): an upsert there would replace someone's words, so nothing is written.
    Returns the fresh indices of this batch (released once it commits).
    """
    fresh: set[int] = set()
    for item in arriving:
        drawer = item.drawer
        # A diverted write's slot id is derived from its words (a repeat converges on one slot): not fresh.
        if (
            drawer.id_recipe != ID_RECIPE_APPEND
            or drawer.wing == QUARANTINE_WING
            or drawer.chunk_index not in context.fresh_appends
        ):
            continue
        fresh.add(drawer.chunk_index)
        taken = "a live drawer" if drawer.id in current else None
        if (
            taken is None
            and context.connection.execute("SELECT 1 FROM tombstones WHERE drawer_id = ?", (drawer.id,)).fetchone()
        ):
            taken = "a tombstone"
        if taken is not None:
            counter = context.connection.execute("SELECT value FROM meta WHERE key = 'append_counter'").fetchone()
            raise AppendCollision(
                f"vault {context.vault_id!r}: append index {drawer.chunk_index} was allocated for a new drawer but "
                f"its id {drawer.id} already holds {taken}; meta.append_counter "
                f"({bytes(counter[0]).decode('ascii', 'replace') if counter else 'absent'}) was moved back. "
                "Nothing was written; run undercroft verify, then undercroft repair to restore the counter"
            )
    return fresh


def _rows_to_write(
    context: VaultContext, arriving: list[Incoming], decided: _Decided, writes: list[int]
) -> list[_Prepared]:
    """The prepared rows of `writes`, in batch order; a row that changed since the unlocked decision and now
    needs writing is prepared here, under the lock (a race with another writer: rare, and still correct)."""
    late = [i for i in writes if arriving[i].drawer.id not in decided.prepared]
    if late:
        more = _prepare(
            context, [arriving[i] for i in late], [decided.packed[i] for i in late], [decided.supplied[i] for i in late]
        )
        decided.prepared.update((item.drawer.id, item) for item in more)
    return [decided.prepared[arriving[i].drawer.id] for i in writes]


def _signal_writes(
    context: VaultContext, results: list[WriteResult], drawers: list[Drawer], slots: dict[str, Diverted]
) -> None:
    """One event per drawer; the counter moves once per outcome by the batch's count (same totals).

    A diverted write's event carries its signal codes (a closed vocabulary), never the flagged text or offsets.
    """
    counts: dict[str, int] = {}
    for result, drawer in zip(results, drawers, strict=True):
        if result.outcome == "quarantined":
            label = names.OUTCOME_QUARANTINED
            obs.emit(
                names.EVENT_DRAWER_QUARANTINED,
                vault=context.vault_id,
                intended_wing=drawer.intended_wing,
                room=drawer.intended_room,
                signals=diverted.signals if (diverted := slots.get(drawer.id)) is not None else (),
            )
        else:
            deduped = result.outcome == "deduped"
            label = names.OUTCOME_DEDUPED if deduped else names.OUTCOME_CREATED
            obs.emit(
                names.EVENT_DRAWER_SAVED, vault=context.vault_id, wing=drawer.wing, room=drawer.room, deduped=deduped
            )
        counts[label] = counts.get(label, 0) + 1
    for label, count in counts.items():
        obs.increment(names.DRAWER_WRITES_TOTAL, count, outcome=label)


def delete_drawers(context: VaultContext, ids: Sequence[str], *, allow_quarantine: bool = False) -> int:
    """Delete drawers: each leaves a keyed tombstone and a ``delete/<id>`` audit record, in one transaction."""
    _check_open(context)
    wanted = [validate_drawer_id(drawer_id) for drawer_id in ids]
    if len(set(wanted)) != len(wanted):
        raise InvalidDrawer("a delete batch names the same drawer twice")
    connection = context.connection
    at = context.now()
    connection.execute("BEGIN IMMEDIATE")
    try:
        audit = _delete_rows(context, wanted, at, allow_quarantine=allow_quarantine)
        append_in_transaction(context, audit)
        commit_and_anchor(context, len(audit))
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    for _ in audit:
        obs.increment(names.DRAWER_DELETES_TOTAL)
        obs.emit(names.EVENT_DRAWER_DELETED, vault=context.vault_id)
    return len(audit)


def _delete_rows(context: VaultContext, wanted: Sequence[str], at: str, *, allow_quarantine: bool) -> list[AuditRow]:
    connection = context.connection
    audit: list[AuditRow] = []
    # The search snapshot is derived from every drawer's words: none of a deleted drawer's may outlive this
    # transaction, sealed or not (the next open rebuilds it from what remains).
    drop_search_snapshot(connection)
    for drawer_id in wanted:
        row = connection.execute("SELECT seq, wing, tag FROM drawers WHERE id = ?", (drawer_id,)).fetchone()
        if row is None:
            raise DrawerNotFound(f"no drawer {drawer_id} in vault {context.vault_id!r}")
        if row[1] == stored_label(context, "wing", QUARANTINE_WING) and not allow_quarantine:
            raise InvalidDrawer(f"drawer {drawer_id} is in {QUARANTINE_WING!r}: rule on it with admission instead")
        label = f"delete/{drawer_id}"
        tombstone = compute_tag(context.keys, label, at.encode("ascii"), bytes(row[2]))
        connection.execute("DELETE FROM drawers WHERE id = ?", (drawer_id,))
        drop_token_rows(connection, [int(row[0])])  # the matrix is derived from the content: gone with it
        drop_fde_rows(connection, [int(row[0])])  # and so is the FDE row encoded from that matrix
        if not context.sealed:
            connection.execute("DELETE FROM drawers_fts WHERE rowid = ?", (int(row[0]),))
        connection.execute(
            "INSERT INTO tombstones (drawer_id, tag, at) VALUES (?, ?, ?) "
            "ON CONFLICT (drawer_id) DO UPDATE SET tag = excluded.tag, at = excluded.at",
            (drawer_id, tombstone, at),
        )
        audit.append(AuditRow(label, tombstone, at))
    return audit


def delete_within(context: VaultContext, ids: Sequence[str], at: str) -> list[AuditRow]:
    """Rulings only: delete queue residents inside the CALLER's open write transaction (a `within` hook).

    Each leaves a tombstone; the returned ``delete/<id>`` records are the caller's to append to the chain.
    """
    _check_open(context)
    if not context.connection.in_transaction:
        raise InvalidDrawer("delete_within must run inside a write transaction")
    wanted = [validate_drawer_id(drawer_id) for drawer_id in ids]
    return _delete_rows(context, wanted, at, allow_quarantine=True)


def refresh_embeddings(
    context: VaultContext,
    rows: Sequence[tuple[str, bytes]],
    *,
    screening: Screening,
    meta: tuple[str, bytes] | None = None,
) -> int:
    """Replace stored embeddings (packed int8 rows) of existing drawers: migration and repair only.

    Embeddings are derived data outside the HMAC envelope, so no audit record is written; the rows are
    sealed under ``{id}/emb`` in a sealed vault exactly as on a first write. ``meta`` (key, value) is
    written in the same transaction: a resumable re-embed's progress marker moves with the rows it counts.
    """
    _check_open(context)
    if not isinstance(screening, Bypass) or screening.reason not in (BypassReason.MIGRATION, BypassReason.REPAIR):
        raise InvalidDrawer("refreshing embeddings needs Bypass(MIGRATION) or Bypass(REPAIR)")
    values = []
    for drawer_id, packed in rows:
        validate_drawer_id(drawer_id)
        blob = context.sealer.seal(Domain.embedding(drawer_id), packed) if context.sealed else packed
        values.append((blob, drawer_id))
    connection = context.connection
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.executemany("UPDATE drawers SET embedding = ? WHERE id = ?", values)
        if meta is not None:
            connection.execute(
                "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                meta,
            )
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    context.generation += 1
    return len(values)


def rekey_drawers(
    context: VaultContext, rows: Sequence[tuple[str, bytes, bytes, bytes, bytes, bytes]], *, screening: Screening
) -> int:
    """Rotation only: replace ``(id, meta, content, embedding, fingerprint, tag)`` of existing drawers.

    The meta is re-sealed on a sealed vault (and passed back unchanged on hmac-only); the label columns are
    not touched: their blind values are keyed with the blind-index secret, which rotation never regenerates.

    Runs inside the CALLER's open transaction (rotation re-keys rows, chain and keycheck in one commit),
    so it neither begins nor commits; the rows were verified and re-sealed by the caller.
    """
    _check_open(context)
    if not isinstance(screening, Bypass) or screening.reason is not BypassReason.ROTATION:
        raise InvalidDrawer("re-keying drawers needs Bypass(ROTATION)")
    if not context.connection.in_transaction:
        raise InvalidDrawer("re-keying drawers must run inside the rotation's transaction")
    context.connection.executemany(
        "UPDATE drawers SET meta_json = ?, content = ?, embedding = ?, fingerprint = ?, tag = ? WHERE id = ?",
        [(meta, content, embedding, mark, tag, drawer_id) for drawer_id, meta, content, embedding, mark, tag in rows],
    )
    return len(rows)


def refresh_fingerprints(context: VaultContext, rows: Sequence[tuple[str, bytes]], *, screening: Screening) -> int:
    """Repair only: replace stored content fingerprints (derived, outside the tag; no audit record)."""
    _check_open(context)
    if not isinstance(screening, Bypass) or screening.reason is not BypassReason.REPAIR:
        raise InvalidDrawer("refreshing fingerprints needs Bypass(REPAIR)")
    connection = context.connection
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.executemany("UPDATE drawers SET fingerprint = ? WHERE id = ?", [(f, i) for i, f in rows])
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    context.generation += 1
    return len(rows)


def relabel_drawers(
    context: VaultContext,
    rows: Sequence[tuple[str | None, str | None, str | None, str | None, bytes, bytes, int]],
    *,
    screening: Screening,
) -> int:
    """The metadata migration only: replace ``(wing, room, kind, supersedes, meta_json, tag)`` by ``seq``.

    Runs inside the CALLER's open transaction (`_internal.meta_migration` commits rows, records and chain
    together); the rows were verified under the current keys and re-sealed by the caller."""
    _check_open(context)
    if not isinstance(screening, Bypass) or screening.reason is not BypassReason.MIGRATION:
        raise InvalidDrawer("relabelling drawers needs Bypass(MIGRATION)")
    if not context.connection.in_transaction:
        raise InvalidDrawer("relabelling drawers must run inside the migration's transaction")
    context.connection.executemany(
        "UPDATE drawers SET wing = ?, room = ?, kind = ?, supersedes = ?, meta_json = ?, tag = ? WHERE seq = ?",
        rows,
    )
    return len(rows)
