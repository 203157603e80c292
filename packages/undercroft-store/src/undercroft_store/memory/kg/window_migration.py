"""The window migration: a sealed vault written before fully sealed KG facts gets each fact's window and details
sealed (`memory.kg.facts`: the ``sealed-v2`` shape).

A writable open of a sealed vault whose ``meta.kg_windows`` is not ``sealed-v2`` runs it (after the metadata
migration): a vault from before sealed windows (clear windows and details) and one from before sealed details
(``sealed-v1``: windows sealed, extractor, confidence, grounding and span offsets still in the clear meta) alike.
A read-only open changes nothing and says so (``unhealed``). It is:

* **verified** — every fact is read through the verified door (tag, clear mirrors, sealed terms and object)
  before it is rewritten; a fact that fails refuses the migration at that batch (nothing of the batch is
  written, earlier batches stay, the notice names the fact): re-tagging a forged row would launder it;
* **batched and resumable** — `MIGRATION_BATCH` facts per transaction, each commit carrying its rows, one
  ``kg/<id>`` audit record per fact with its new tag (so the version leg still finds each row to be its id's
  newest record) and the chain head; a crash between batches leaves facts of both shapes — both read
  correctly — and the next writable open carries on from the first fact not yet fully sealed (a migrated fact
  is never rewritten twice);
* **closed by a marker** — only when no fact short of ``sealed-v2`` remains are ``meta.kg_windows = sealed-v2``
  and one ``kg-window-migration/sealed-v2`` record (keyed over the count) committed together; then the database
  is ``VACUUM``-ed and its WAL truncated so the clear windows' and details' old pages leave the file.
"""

from __future__ import annotations

from typing import Final

from undercroft_core.drawer import canonical_json
from undercroft_vault import AuditRow, compute_tag

from undercroft_store.kernel._internal.chain_append import append_in_transaction, commit_and_anchor
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.meta_at_rest import KG_WINDOWS_KEY, KG_WINDOWS_SEALED
from undercroft_store.kernel._internal.transaction import open_blind
from undercroft_store.memory.kg._internal.rows import FACT_SELECT, verified_fact
from undercroft_store.memory.kg.errors import FactTampered
from undercroft_store.memory.kg.facts import encode_fact, fully_sealed

__all__ = ["MIGRATION_BATCH", "MIGRATION_LABEL", "migrate_kg_windows"]

#: Facts rewritten per transaction.
MIGRATION_BATCH: Final = 500
#: The audit label of the migration's closing record.
MIGRATION_LABEL: Final = "kg-window-migration/sealed-v2"
# The verified door's columns with the row's seq in front (the batch cursor).
_SEQ_SELECT: Final = "SELECT seq, " + FACT_SELECT.removeprefix("SELECT ")


def _clear_batch(context: VaultContext, after: int) -> list[tuple[int, tuple[object, ...]]]:
    """Up to `MIGRATION_BATCH` facts after ``seq`` ``after`` not yet fully sealed, with their seq."""
    found: list[tuple[int, tuple[object, ...]]] = []
    cursor = after
    while len(found) < MIGRATION_BATCH:
        rows = context.connection.execute(
            f"{_SEQ_SELECT} WHERE seq > ? ORDER BY seq LIMIT ?",
            (cursor, MIGRATION_BATCH),
        ).fetchall()
        if not rows:
            break
        cursor = int(rows[-1][0])
        found += [(int(r[0]), tuple(r[1:])) for r in rows if not fully_sealed(bytes(r[2]))]
    return found[:MIGRATION_BATCH]


def migrate_kg_windows(context: VaultContext) -> None:
    """Seal the windows of a sealed vault's facts on a writable open (a notice only on a read-only one)."""
    if not context.sealed or context.kg_windows_sealed:
        return
    if context.read_only:
        context.unhealed.append(
            "knowledge-graph window migration pending: this sealed vault stores its facts' validity windows or "
            "details in the clear (read-only open: nothing migrated; a writable open migrates it)"
        )
        return
    connection = context.connection
    context.kg_windows_sealed = True  # encode_fact now writes the sealed shape
    migrated, after = 0, 0
    try:
        while True:
            connection.execute("BEGIN IMMEDIATE")
            batch = _clear_batch(context, after)
            at = context.now()
            records: list[AuditRow] = []
            if batch:
                with open_blind(context) as blind:
                    for seq, row in batch:
                        fact = verified_fact(context, row)
                        encoded = encode_fact(context, blind, fact)
                        connection.execute(
                            "UPDATE kg_facts SET valid_from = ?, valid_to = ?, meta_json = ?, terms = ?, value = ?, "
                            "tag = ? WHERE seq = ?",
                            (
                                encoded.valid_from,
                                encoded.valid_to,
                                encoded.meta_json,
                                encoded.terms,
                                encoded.value,
                                encoded.tag,
                                seq,
                            ),
                        )
                        records.append(AuditRow(f"kg/{fact.id}", encoded.tag, at))
                after = batch[-1][0]
                migrated += len(batch)
            else:
                summary = canonical_json({"facts": migrated, "shape": "sealed-v2"})
                records.append(AuditRow(MIGRATION_LABEL, compute_tag(context.keys, MIGRATION_LABEL, summary, b""), at))
                connection.execute(
                    "INSERT INTO meta (key, value) VALUES (?, ?) "
                    "ON CONFLICT (key) DO UPDATE SET value = excluded.value",
                    (KG_WINDOWS_KEY, KG_WINDOWS_SEALED),
                )
            append_in_transaction(context, records)
            commit_and_anchor(context, len(records))
            if not batch:
                break
    except FactTampered as refused:
        context.kg_windows_sealed = False
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        context.unhealed.append(
            f"knowledge-graph window migration stopped after {migrated} fact(s), the rest unchanged: {refused}"
        )
        return
    except BaseException:
        context.kg_windows_sealed = False
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    connection.execute("VACUUM")  # the clear windows' old pages leave the file
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    context.healed.append(
        f"sealed the validity windows and details of {migrated} knowledge-graph fact(s); the database was vacuumed"
    )
