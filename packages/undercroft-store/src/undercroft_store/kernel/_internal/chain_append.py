"""The audit chain step every writer shares: append inside a caller's transaction, anchor after its commit.

The drawer choke point (`kernel.writes`), the audited transaction of the other tables
(`_internal.transaction`) and governance's own labels (forgetting, retention, read and egress auditing,
anchor) all append here, so every record folds the same v2 step and the committed head moves in the same
transaction as the rows it covers.
"""

from __future__ import annotations

from collections.abc import Sequence

import undercroft_obs as obs
from undercroft_obs import names
from undercroft_vault import Anchor, AuditRow, chain_step, swap_manifest

from undercroft_store.errors import ChainBroken
from undercroft_store.kernel._internal.context import VaultContext

__all__ = ["anchor_now", "append_in_transaction", "commit_and_anchor", "committed_head", "extendable_head"]


def committed_head(context: VaultContext) -> tuple[bytes, int]:
    """The committed chain head and height (``chain_meta``); `ChainBroken` when the row is gone."""
    row = context.connection.execute("SELECT head, height FROM chain_meta WHERE id = 1").fetchone()
    if row is None:
        raise ChainBroken(f"vault {context.vault_id!r} holds no committed chain head (its chain_meta row is gone)")
    return bytes(row[0]), int(row[1])


def extendable_head(context: VaultContext) -> tuple[bytes, int]:
    """The committed head a write may extend, read under the caller's write lock.

    The audit table must end where the head says: its rows are numbered 1.. with no gap (append-only,
    AUTOINCREMENT), so the last ``seq`` equals the height. A removed (or added) tail row breaks that and the
    write is refused — extending a chain that no longer replays would bury the evidence under new records.
    One index lookup, not a replay: a row removed from the middle is found by verify and the label guard.
    """
    head, height = committed_head(context)
    last = context.connection.execute("SELECT max(seq) FROM audit").fetchone()[0]
    if int(last or 0) != height:
        raise ChainBroken(
            f"audit-chain head: vault {context.vault_id!r} has its last audit row at {int(last or 0)} but the "
            f"committed head is at height {height}; audit rows were removed or inserted. Nothing was written "
            "(run undercroft verify; restore from a backup)"
        )
    return head, height


def append_in_transaction(context: VaultContext, rows: Sequence[AuditRow]) -> tuple[bytes, int]:
    """Append ``rows`` and advance ``chain_meta`` inside the caller's open transaction; returns the new head."""
    head, height = extendable_head(context)
    for row in rows:
        head = chain_step(context.keys, head, row)
    context.connection.executemany(
        "INSERT INTO audit (record_id, tag, at) VALUES (?, ?, ?)", [(r.record_id, r.tag, r.at) for r in rows]
    )
    height += len(rows)
    context.connection.execute("UPDATE chain_meta SET head = ?, height = ? WHERE id = 1", (head, height))
    return head, height


def anchor_now(context: VaultContext) -> tuple[bytes, int]:
    """Anchor the manifest at the newest committed head (after a commit, so a crash leaves it behind).

    Under the database's write lock, so concurrent writers' anchors land in commit order (never one lower
    over a higher: that would read as a restored older manifest at the next open), and as a compare-and-swap
    against the key generation this handle opened under (`ManifestConflict`, exit 2, nothing written, when
    vault.json was replaced meanwhile). Returns the anchored head and height.
    """
    connection = context.connection
    connection.execute("BEGIN IMMEDIATE")
    try:
        head, height = committed_head(context)
        manifest = context.manifest.with_anchor(Anchor(head, height))
        swap_manifest(context.vault_dir, manifest, context.keys, expected_generation=context.manifest.generation)
        context.manifest = manifest
    finally:
        connection.execute("COMMIT")  # nothing was written in it: the transaction only held the lock
    return head, height


def commit_and_anchor(context: VaultContext, records: int) -> None:
    """Commit the caller's transaction, bump the handle's generation, and anchor when records were appended."""
    context.connection.execute("COMMIT")
    context.generation += 1
    if records:
        obs.increment(names.CHAIN_COMMITS_TOTAL, records)
        obs.emit(names.EVENT_CHAIN_COMMIT, vault=context.vault_id, records=records)
        anchor_now(context)
