"""The metadata migration: a sealed vault written before issue 29 gets blind labels and sealed meta, once.

A writable open of a sealed vault whose ``meta.metadata`` is not ``sealed-v1`` runs it before anything else
reads a drawer; a read-only open changes nothing and says so on its notice channel (``unhealed``). It is:

* **verified first** — every drawer row's tag is checked under the current keys before it is re-tagged; one
  failure refuses the whole migration (nothing is written, the vault stays as it was, and the notice names
  the row), because re-tagging a forged row would launder it. Queue rows keep their tags (a queue tag covers
  the names and signals, not the stored bytes), so a forged queue row stays the queue leg's finding;
* **batched** — rows are read and rewritten ``MIGRATION_BATCH`` at a time (bounded memory at any size);
* **crash-safe and idempotent** — everything (rows, queue, the ``metadata`` marker, the audit records and the
  chain head) commits in ONE transaction: a crash at any point leaves the vault exactly as it was, and the
  next writable open runs the migration again from the start; a migrated vault is never migrated twice;
* **chain-audited** — each re-tagged drawer gets a ``drawer/<id>`` record carrying its new tag (as rotation
  does, so the version leg still finds every row to be its id's newest write) and the run ends with one
  ``metadata-migration/sealed-v1`` record whose tag is keyed over the counts;
* **scrubbing** — after the commit the database is ``VACUUM``-ed and its WAL truncated, so the pages that held
  the clear labels are not left in the file's free list.

Tunnel rows are migrated too (blind ends, sealed meta, re-tagged, a new ``tunnel/<id>`` record each). Audit
labels already written (``trust/<wing>``, ``retention/<wing>``) and the trust and retention rows they certify
are NOT rewritten: on a chain that
folds its labels a rewrite in place would break the chain (docs/security.md states this residual).
"""

from __future__ import annotations

import json
from typing import Final

from undercroft_core.drawer import canonical_json
from undercroft_vault import AuditRow, Domain, compute_tag, constant_time_equal

from undercroft_store.kernel._internal.chain_append import append_in_transaction, commit_and_anchor
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.governance_tables import QUEUE_TABLE
from undercroft_store.kernel._internal.meta_at_rest import (
    METADATA_KEY,
    METADATA_SEALED,
    register_names,
    seal_meta,
    seal_surface_meta,
    stored_label,
)
from undercroft_store.kernel.screening import Bypass, BypassReason

__all__ = ["MIGRATION_BATCH", "MIGRATION_LABEL", "migrate_metadata"]

#: Drawer rows read and rewritten per batch.
MIGRATION_BATCH: Final = 1_000
#: The audit label the migration's closing record carries.
MIGRATION_LABEL: Final = "metadata-migration/sealed-v1"
_FIELDS: Final = ("wing", "room", "kind", "supersedes")


class _Refused(Exception):
    """A row failed its tag: the migration writes nothing."""


def migrate_metadata(context: VaultContext) -> None:
    """Migrate a pre-issue-29 sealed vault on a writable open (notice only on a read-only one)."""
    if not context.sealed or context.metadata_sealed:
        return
    if context.read_only:
        context.unhealed.append(
            "metadata migration pending: this sealed vault still stores its labels and metadata in the clear "
            "(read-only open: nothing migrated; a writable open migrates it)"
        )
        return
    connection = context.connection
    connection.execute("BEGIN IMMEDIATE")
    try:
        context.metadata_sealed = True  # the helpers below now write the sealed shape
        at = context.now()
        records = _drawers(context, at)
        drawers = len(records)
        records += _tunnels(context, at)
        queued = _queue(context)
        connection.execute(
            "INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value",
            (METADATA_KEY, METADATA_SEALED),
        )
        summary = canonical_json(
            {"drawers": drawers, "queue_rows": queued, "shape": "sealed-v1", "tunnels": len(records) - drawers}
        )
        records.append(AuditRow(MIGRATION_LABEL, compute_tag(context.keys, MIGRATION_LABEL, summary, b""), at))
        append_in_transaction(context, records)
        commit_and_anchor(context, len(records))
    except _Refused as refused:
        context.metadata_sealed = False
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        context.unhealed.append(f"metadata migration refused, nothing written: {refused} (run undercroft verify)")
        return
    except BaseException:
        context.metadata_sealed = False
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    context.verified_rows.clear()
    connection.execute("VACUUM")  # the clear labels' old pages leave the file
    connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    context.healed.append(
        f"sealed the metadata of {drawers} drawer(s), {len(records) - 1 - drawers} tunnel(s) and {queued} queue "
        "row(s) (blind labels, sealed meta); the database was vacuumed"
    )


def _drawers(context: VaultContext, at: str) -> list[AuditRow]:
    from undercroft_store.kernel.writes import relabel_drawers  # local: writes imports this package's modules

    connection = context.connection
    records: list[AuditRow] = []
    last = 0
    while True:
        rows = connection.execute(
            "SELECT seq, id, meta_json, content, tag FROM drawers WHERE seq > ? ORDER BY seq LIMIT ?",
            (last, MIGRATION_BATCH),
        ).fetchall()
        if not rows:
            return records
        updates: list[tuple[str | None, str | None, str | None, str | None, bytes, bytes, int]] = []
        batch_names: tuple[set[str], set[str]] = (set(), set())
        for seq, drawer_id, meta_blob, content_blob, tag in rows:
            meta, content = bytes(meta_blob), bytes(content_blob)
            if not constant_time_equal(compute_tag(context.keys, drawer_id, meta, content), bytes(tag)):
                raise _Refused(f"record {drawer_id} fails its HMAC tag")
            document = json.loads(meta)
            batch_names[0].add(str(document.get("wing")))
            batch_names[1].add(str(document.get("room")))
            wing, room, kind, supersedes = (
                stored_label(context, field, value if isinstance(value, str) else None)
                for field in _FIELDS
                for value in (document.get(field),)
            )
            sealed = seal_meta(context, drawer_id, meta)
            new_tag = compute_tag(context.keys, drawer_id, sealed, content)
            updates.append((wing, room, kind, supersedes, sealed, new_tag, int(seq)))
            records.append(AuditRow(f"drawer/{drawer_id}", new_tag, at))
        names = {("wing", name) for name in batch_names[0]} | {("room", name) for name in batch_names[1]}
        register_names(context, names)
        relabel_drawers(context, updates, screening=Bypass(BypassReason.MIGRATION))
        last = int(rows[-1][0])


def _tunnels(context: VaultContext, at: str) -> list[AuditRow]:
    """Tunnel rows: blind end columns, the meta sealed under ``surface/{id}/meta``, re-tagged and re-recorded
    (``tunnel/<id>`` with the new tag, so the surface leg still finds each row its id's newest record)."""
    connection = context.connection
    records: list[AuditRow] = []
    rows = connection.execute("SELECT id, meta_json, label, tag FROM tunnels ORDER BY rowid").fetchall()
    for tunnel_id, meta_blob, label_blob, tag in rows:
        meta, label = bytes(meta_blob), bytes(label_blob)
        if not constant_time_equal(compute_tag(context.keys, f"tunnel/{tunnel_id}", meta, label), bytes(tag)):
            raise _Refused(f"tunnel {tunnel_id} fails its HMAC tag")
        document = json.loads(meta)
        ends = (document["from_wing"], document["from_room"], document["to_wing"], document["to_room"])
        register_names(context, [(f, n) for f, n in zip(("wing", "room") * 2, ends, strict=True) if n])
        labels = [stored_label(context, f, n) for f, n in zip(("wing", "room") * 2, ends, strict=True)]
        sealed = seal_surface_meta(context, str(tunnel_id), meta)
        new_tag = compute_tag(context.keys, f"tunnel/{tunnel_id}", sealed, label)
        connection.execute(
            "UPDATE tunnels SET from_wing = ?, from_room = ?, to_wing = ?, to_room = ?, meta_json = ?, tag = ? "
            "WHERE id = ?",
            (*labels, sealed, new_tag, tunnel_id),
        )
        records.append(AuditRow(f"tunnel/{tunnel_id}", new_tag, at))
    return records


def _queue(context: VaultContext) -> int:
    """Queue rows re-stored in the sealed shape (their tags cover the names, not the stored bytes: unchanged)."""
    connection = context.connection
    rows = connection.execute(
        f"SELECT drawer_id, intended_wing, intended_room, signals FROM {QUEUE_TABLE} ORDER BY drawer_id"  # noqa: S608
    ).fetchall()
    for slot, wing, room, signals in rows:
        document = json.loads(bytes(signals))
        document.update(intended_wing=str(wing), intended_room=str(room))
        connection.execute(
            f"UPDATE {QUEUE_TABLE} SET intended_wing = ?, intended_room = ?, signals = ? WHERE drawer_id = ?",  # noqa: S608
            (
                stored_label(context, "wing", str(wing)),
                stored_label(context, "room", str(room)),
                context.sealer.seal(Domain.queue_meta(str(slot)), canonical_json(document)),
                str(slot),
            ),
        )
    return len(rows)
