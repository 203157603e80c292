"""The vault's embedder identity: recorded on first write, checked at every open, hash upgrades migrated."""

from __future__ import annotations

from undercroft_core.embedder import EmbedderIdentity
from undercroft_core.hash_embedder import HASH_EMBEDDER_NAME

from undercroft_store.errors import EmbedderMismatch
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.vectors import embed_quantised, pack_rows
from undercroft_store.kernel.screening import Bypass, BypassReason

__all__ = ["MIGRATION_BATCH", "check_identity", "recorded_identity"]

#: Drawers re-embedded per transaction during a hash-to-hash migration.
MIGRATION_BATCH = 500
_HASH_FAMILY = HASH_EMBEDDER_NAME.rsplit("-", 1)[0] + "-"  # "undercroft-hash-"


def recorded_identity(context: VaultContext) -> str | None:
    """The identity label recorded on first write, or None for a vault never written."""
    row = context.connection.execute("SELECT value FROM meta WHERE key = 'embedder'").fetchone()
    return None if row is None else bytes(row[0]).decode("utf-8")


def _is_hash(label: str) -> bool:
    return EmbedderIdentity.parse(label).name.startswith(_HASH_FAMILY)


def check_identity(context: VaultContext) -> None:
    """Refuse a mismatch (unless forced); migrate a hash-to-hash upgrade on a writable open."""
    recorded = recorded_identity(context)
    offered = context.embedder.identity.label
    if recorded is None or recorded == offered:
        return
    if _is_hash(recorded) and context.embedder.identity.name.startswith(_HASH_FAMILY):
        if context.read_only:
            message = f"embedder upgrade {recorded} -> {offered} pending (read-only: serving the old vectors)"
            context.unhealed.append(message)  # the open's notice channel, never a raw Python warning
            return
        count = _migrate(context)
        context.healed.append(f"re-embedded {count} drawer(s) from {recorded} to {offered}")
        return
    if context.force_embedder:
        context.unhealed.append(f"embedder {offered} forced over recorded {recorded}: run repair to re-embed")
        return
    raise EmbedderMismatch(
        f"vault {context.vault_id!r} was embedded with {recorded}, this open offers {offered}; "
        "set UNDERCROFT_FORCE_EMBEDDER=1 and run repair to re-embed"
    )


def _migrate(context: VaultContext) -> int:
    from undercroft_store.kernel._internal.reading import verified_drawer  # local: reading imports the context only
    from undercroft_store.kernel.writes import refresh_embeddings

    connection = context.connection
    done = 0
    last = 0
    while True:
        rows = connection.execute(
            "SELECT seq, id, meta_json, content, tag FROM drawers WHERE seq > ? ORDER BY seq LIMIT ?",
            (last, MIGRATION_BATCH),
        ).fetchall()
        if not rows:
            break
        drawers = [verified_drawer(context, r[1], bytes(r[2]), bytes(r[3]), bytes(r[4])) for r in rows]
        packed = pack_rows(embed_quantised(context.embedder, [d.content for d in drawers]))
        refresh_embeddings(
            context, [(d.id, p) for d, p in zip(drawers, packed, strict=True)], screening=Bypass(BypassReason.MIGRATION)
        )
        done += len(rows)
        last = int(rows[-1][0])
    # The identity is recorded last, so an interrupted migration re-runs whole at the next open.
    connection.execute("BEGIN IMMEDIATE")
    connection.execute("UPDATE meta SET value = ? WHERE key = 'embedder'", (context.embedder.identity.label.encode(),))
    connection.execute("COMMIT")
    return done
