"""Repair, in one run: backfill derived data, re-embed a forced embedder change, vacuum, re-verify.

Every step touches derived data only — embeddings, fingerprints and the hmac-only FTS index sit outside
the HMAC envelope — and reads its source through the verified reader, so a tampered drawer is skipped
(counted, and named by the closing verify), never re-derived into something that looks healthy:

1. **backfill** — an embedding that is missing (empty blob), a counted zero vector (a failed embed) or of
   another dimension is re-embedded; a fingerprint that differs from the content's keyed fingerprint is
   recomputed; on hmac-only vaults a missing or differing FTS row is re-inserted and an orphan one dropped;
2. **re-embed** — when the recorded embedder identity differs from the offered one (an open forced with
   ``UNDERCROFT_FORCE_EMBEDDER=1``) every drawer is re-embedded and the new identity recorded LAST; each
   batch commits with a keyed progress marker (`integrity.resume`), so an interrupted run resumes after the
   last batch it committed instead of re-embedding done rows;
3. **counter** — ``meta.append_counter`` moved back below a live append drawer's index (an edit or a
   restored row) is set one past the highest, so the next save is handed a fresh index again;
4. **reindex** — when SQLite's ``integrity_check`` or the scope-index check finds an index that disagrees
   with its table, ``REINDEX`` rebuilds every index from the table rows (VACUUM alone would copy the damage);
5. **tokens** — the late stage's stored matrices (`integrity.tokens`): a matrix failing its seal or left by a
   gone drawer is dropped; with ``tokens=True`` (``repair --tokens``) every missing or stale one is encoded by
   the attached late encoder, a committed transaction per batch (resumable: done matrices are current);
6. **vacuum** — ``VACUUM`` (bytes before and after, each measured after a WAL checkpoint as the database
   file plus its WAL, so a vacuum's own un-checkpointed WAL is never counted as growth);
7. **verify** — every leg, SQLite's full ``integrity_check`` included; the report carries its verdict (the
   CLI exits 2 when it fails).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

import numpy as np
from undercroft_core.embedder import Embedder
from undercroft_core.ids import ID_RECIPE_APPEND
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_vault import Domain, IntegrityFailure, constant_time_equal, fingerprint

from undercroft_store.errors import LateStageMissing, RecordTampered
from undercroft_store.integrity.resume import clear_marker, marker, resumed_seq
from undercroft_store.integrity.tokens import TokenRepair, repair_tokens
from undercroft_store.integrity.verify import VerifyReport, verify_vault
from undercroft_store.kernel import seams
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.identity import recorded_identity
from undercroft_store.kernel._internal.reading import verified_drawer
from undercroft_store.kernel._internal.structure import (
    finding_names,
    read_counter,
    scope_index_findings,
    sqlite_findings,
)
from undercroft_store.kernel._internal.vectors import embed_quantised, pack_rows
from undercroft_store.kernel.screening import Bypass, BypassReason
from undercroft_store.kernel.writes import refresh_embeddings, refresh_fingerprints
from undercroft_store.palace import Palace
from undercroft_store.store import VaultStore

__all__ = ["REPAIR_BATCH", "Progress", "RepairReport", "repair_context", "repair_vault"]

#: Drawers re-embedded per transaction.
REPAIR_BATCH: Final = 500
#: A progress callback: ``(step, done, total)``; steps ``check``, ``embed`` (a backfill), ``reembed`` (a swap),
#: ``tokens`` (``repair --tokens``).
Progress = Callable[[str, int, int], None]
_SCALE_BYTES: Final = 4


@dataclass
class RepairReport:
    """Each step's counts, and the closing verify."""

    vault: str
    drawers_checked: int = 0
    skipped_tampered: list[str] = field(default_factory=list)
    embeddings_backfilled: int = 0
    embeddings_reembedded: int = 0
    embeddings_resumed: int = 0  # a swap's drawers an interrupted earlier run had already re-embedded
    embed_failures: int = 0
    fingerprints_fixed: int = 0
    fts_added: int = 0
    fts_removed: int = 0
    identity_recorded: str | None = None
    append_counter_restored: int = 0  # how far meta.append_counter was behind (0: it was not)
    indexes_rebuilt: list[str] = field(default_factory=list)  # what made REINDEX run (empty: it did not)
    index_tier: str | None = None  # the candidate tier's rebuild (None: no tier stored)
    tokens: TokenRepair | None = None  # the late stage's matrices (None: none stored, none asked for)
    search_snapshot: str | None = None  # a search snapshot failing at rest, deleted (None: nothing to do)
    bytes_before: int = 0
    bytes_after: int = 0
    verify: VerifyReport | None = None

    @property
    def ok(self) -> bool:
        """True when the closing verify passed."""
        return self.verify is not None and self.verify.ok

    def to_dict(self) -> dict[str, object]:
        """JSON-ready counts."""
        return {
            "vault": self.vault,
            "drawers_checked": self.drawers_checked,
            "skipped_tampered": list(self.skipped_tampered),
            "embeddings_backfilled": self.embeddings_backfilled,
            "embeddings_reembedded": self.embeddings_reembedded,
            "embeddings_resumed": self.embeddings_resumed,
            "embed_failures": self.embed_failures,
            "fingerprints_fixed": self.fingerprints_fixed,
            "fts_added": self.fts_added,
            "fts_removed": self.fts_removed,
            "identity_recorded": self.identity_recorded,
            "append_counter_restored": self.append_counter_restored,
            "indexes_rebuilt": list(self.indexes_rebuilt),
            "index_tier": self.index_tier,
            "tokens": None if self.tokens is None else self.tokens.to_dict(),
            "search_snapshot": self.search_snapshot,
            "bytes_before": self.bytes_before,
            "bytes_after": self.bytes_after,
            "verify_ok": self.ok,
        }

    def render(self) -> str:
        """One line per step, then the verify output."""
        lines = [
            f"vault:                 {self.vault}",
            f"drawers checked:       {self.drawers_checked} ({len(self.skipped_tampered)} skipped: tampered)",
            f"backfill embeddings:   {self.embeddings_backfilled}",
            f"re-embedded:           {self.embeddings_reembedded}"
            + (f" (identity recorded: {self.identity_recorded})" if self.identity_recorded else "")
            + (f" (resumed: {self.embeddings_resumed} already done)" if self.embeddings_resumed else ""),
            f"embed failures:        {self.embed_failures}",
            f"fingerprints fixed:    {self.fingerprints_fixed}",
            f"fts rows:              {self.fts_added} added, {self.fts_removed} removed",
            "append counter:        "
            + (f"restored ({self.append_counter_restored} behind)" if self.append_counter_restored else "ok"),
            "indexes:               "
            + (f"rebuilt (REINDEX: {self.indexes_rebuilt[0]})" if self.indexes_rebuilt else "ok"),
            f"vacuum:                {self.bytes_before} -> {self.bytes_after} bytes",
        ]
        if self.index_tier is not None:
            lines.insert(-1, f"index tier:            {self.index_tier}")
        if self.tokens is not None:
            t = self.tokens
            lines.insert(
                -1,
                f"token matrices:        {t.built} built, {t.current} current, {t.dropped} dropped, "
                f"{t.failures} failed" + (f", {t.compressed} PQ-coded (codebook trained)" if t.compressed else ""),
            )
        if self.search_snapshot is not None:
            lines.insert(-1, f"search snapshot:       {self.search_snapshot}")
        if self.verify is not None:
            lines.append(self.verify.render())
        return "\n".join(lines)


def _needs_embedding(context: VaultContext, drawer_id: str, blob: bytes, dimension: int) -> bool | None:
    """True when missing, zero or of another dimension; None when a sealed blob does not open (evidence)."""
    if not blob:
        return True
    try:
        packed = context.sealer.open(Domain.embedding(drawer_id), blob) if context.sealed else blob
    except IntegrityFailure:
        return None
    if len(packed) != _SCALE_BYTES + dimension:
        return True
    return not np.frombuffer(packed[_SCALE_BYTES:], dtype=np.int8).any()


def _db_bytes(context: VaultContext) -> int:
    """The database file plus its WAL, after a checkpoint: measured the same way before and after VACUUM."""
    context.connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    files = (context.db_path, context.db_path.with_name(context.db_path.name + "-wal"))
    return sum(path.stat().st_size for path in files if path.is_file())


def _restore_counter(context: VaultContext, highest: int | None, report: RepairReport) -> None:
    counter = read_counter(context.connection)
    if highest is None or (counter is not None and counter > highest):
        return
    connection = context.connection
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.execute(
            "INSERT INTO meta (key, value) VALUES ('append_counter', ?) "
            "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (str(highest + 1).encode("ascii"),),
        )
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    report.append_counter_restored = highest + 1 - (counter or 0)


def _rebuild_indexes(context: VaultContext, report: RepairReport) -> None:
    """REINDEX when an index disagrees with its table (the tables are the record; indexes are derived)."""
    connection = context.connection
    findings = sqlite_findings(connection, deep=True) + scope_index_findings(connection, finding_names(context))
    if not findings:
        return
    connection.execute("REINDEX")
    report.indexes_rebuilt = findings


def _repair_fts(context: VaultContext, live: dict[int, str], report: RepairReport) -> None:
    connection = context.connection
    indexed = {int(rowid): str(text) for rowid, text in connection.execute("SELECT rowid, content FROM drawers_fts")}
    stale = [rowid for rowid in indexed if rowid not in live or indexed[rowid] != live[rowid]]
    missing = [(seq, text) for seq, text in live.items() if indexed.get(seq) != text]
    if not stale and not missing:
        return
    connection.execute("BEGIN IMMEDIATE")
    try:
        connection.executemany("DELETE FROM drawers_fts WHERE rowid = ?", [(rowid,) for rowid in stale])
        connection.executemany("INSERT INTO drawers_fts (rowid, content) VALUES (?, ?)", missing)
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    report.fts_removed = sum(1 for rowid in stale if rowid not in live)
    report.fts_added = len(missing)


def _rebuild_tier(context: VaultContext, step: seams.RepairStep) -> str | None:
    """The candidate tier's repair step (search.tiers.integrity.rebuild_tier, through `kernel.seams`)."""
    try:
        return step(context)
    except RecordTampered as error:
        return f"not rebuilt: {error}"


def repair_context(
    context: VaultContext, *, progress: Progress | None = None, batch: int = REPAIR_BATCH, tokens: bool = False
) -> RepairReport:
    """Run every repair step on an open writable vault (``batch`` drawers re-embedded per transaction).

    ``tokens`` also builds every missing or stale token matrix with the handle's late encoder (refused, before
    anything is written, when none is attached)."""
    if tokens and context.late_encoder is None:
        raise LateStageMissing(
            "repair --tokens needs the late-interaction stage: declare UNDERCROFT_RERANKER=colbert|colbert-ort "
            "and its UNDERCROFT_COLBERT_MODEL / _TOKENIZER"
        )
    tick = progress or (lambda _step, _done, _total: None)
    tier_step = seams.repair_step("index_tier")  # an unwired step refuses here, before anything is written
    snapshot_step = seams.repair_step("search_snapshot")
    report = RepairReport(vault=context.vault_id, bytes_before=_db_bytes(context))
    embedder = context.embedder
    offered = embedder.identity.label
    recorded = recorded_identity(context)
    swap = recorded is not None and recorded != offered
    done_up_to = resumed_seq(context, offered) if swap else None
    rows = context.connection.execute(
        "SELECT seq, id, meta_json, content, tag, embedding, fingerprint FROM drawers ORDER BY seq"
    ).fetchall()
    to_embed: list[tuple[int, str, str]] = []
    fingerprints: list[tuple[str, bytes]] = []
    live: dict[int, str] = {}
    highest: int | None = None  # the highest live append index (the queue's derived slots excluded)
    for done, (seq, drawer_id, meta, content, tag, embedding, mark) in enumerate(rows, 1):
        tick("check", done, len(rows))
        report.drawers_checked += 1
        try:
            drawer = verified_drawer(context, drawer_id, bytes(meta), bytes(content), bytes(tag))
        except RecordTampered:
            report.skipped_tampered.append(drawer_id)
            continue
        live[int(seq)] = drawer.content
        if drawer.id_recipe == ID_RECIPE_APPEND and drawer.wing != QUARANTINE_WING:
            highest = drawer.chunk_index if highest is None else max(highest, drawer.chunk_index)
        plain = drawer.content.encode("utf-8")
        expected = fingerprint(context.keys, plain)
        if not constant_time_equal(expected, bytes(mark)):
            fingerprints.append((drawer_id, expected))
        needed = _needs_embedding(context, drawer_id, bytes(embedding), embedder.dimension)
        if swap and not needed and done_up_to is not None and int(seq) <= done_up_to:
            report.embeddings_resumed += 1  # an interrupted run embedded it into the offered space already
            continue
        if swap or needed:
            to_embed.append((int(seq), drawer_id, drawer.content))
            if not swap:
                report.embeddings_backfilled += 1
    if fingerprints:
        report.fingerprints_fixed = refresh_fingerprints(context, fingerprints, screening=Bypass(BypassReason.REPAIR))
    failures_before = embedder.embed_failures
    for start in range(0, len(to_embed), batch):
        chunk = to_embed[start : start + batch]
        packed = pack_rows(embed_quantised(embedder, [text for _, _, text in chunk]))
        refresh_embeddings(
            context,
            [(drawer_id, row) for (_, drawer_id, _), row in zip(chunk, packed, strict=True)],
            screening=Bypass(BypassReason.REPAIR),
            # Rows are embedded in seq order, so everything up to this batch's last seq is in the new space.
            meta=marker(context, offered, chunk[-1][0]) if swap else None,
        )
        tick("reembed" if swap else "embed", start + len(chunk), len(to_embed))
    report.embed_failures = embedder.embed_failures - failures_before
    if swap:
        report.embeddings_reembedded = len(to_embed)
        if not report.skipped_tampered:  # recorded last: an interrupted or partial run repeats whole
            connection = context.connection
            connection.execute("BEGIN IMMEDIATE")
            connection.execute("UPDATE meta SET value = ? WHERE key = 'embedder'", (offered.encode("utf-8"),))
            clear_marker(context)
            connection.execute("COMMIT")
            report.identity_recorded = offered
    if not context.sealed:
        _repair_fts(context, live, report)
    _restore_counter(context, highest, report)
    _rebuild_indexes(context, report)
    report.index_tier = _rebuild_tier(context, tier_step)
    report.tokens = repair_tokens(context, build=tokens, batch=batch, progress=tick)
    report.search_snapshot = snapshot_step(context)
    context.connection.execute("VACUUM")
    context.generation += 1
    context.scope_index_checked = False  # the indexes were rebuilt under this handle: check them afresh
    report.bytes_after = _db_bytes(context)
    report.verify = verify_vault(context, deep=True)
    return report


def repair_vault(
    palace: Palace,
    name: str,
    embedder: Embedder,
    *,
    progress: Progress | None = None,
    after: Callable[[VaultStore], None] | None = None,
    batch: int = REPAIR_BATCH,
    prepare: Callable[[VaultStore], None] | None = None,
    tokens: bool = False,
) -> RepairReport:
    """Open vault `name` writable with `embedder` (forced when the palace is) and repair it.

    ``after`` runs once the repair committed or failed, on the still-open handle (the served embedder's
    ``egress/embed/repair`` record is appended there, so an aborted repair still records what left).
    ``prepare`` runs on the handle first (the composition root attaches the late encoder there); ``tokens``
    builds the missing or stale token matrices (``repair --tokens``).
    """
    with palace.open_vault(name, embedder) as store:
        if prepare is not None:
            prepare(store)
        try:
            report = repair_context(store._context, progress=progress, batch=batch, tokens=tokens)
        finally:
            if after is not None:
                after(store)
    return report
