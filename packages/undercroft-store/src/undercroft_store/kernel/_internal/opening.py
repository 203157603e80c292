"""Creating a vault's files and opening one: rotation resolution, schema check, chain reconciliation.

The reconciliation follows the security model's state diagram: verify the manifest MAC (inside
`resolve_rotation`), compare its anchor with the committed chain head; equal is Current; otherwise replay
every audit row — rows that do not reproduce the head are ChainBroken, an anchor strictly behind is a
crash artifact (Healed: re-anchored on a writable open, reported as unhealed on a read-only one), an
anchor that never appears is a rollback or fork (ManifestTampered).

Every open holds the vault directory's shared lock (`vault_lock`) until the context closes, so a rotation —
which holds it exclusive — never runs beside an open handle. A heal is written under the database's write
lock as a compare-and-swap of vault.json, logged in ``meta.heals`` (`heals`) and returned on
``context.healed`` for the surface to report. Nothing is written before the checks that can refuse: a
zero-length or stray database is refused before SQLite is handed the file.
"""

from __future__ import annotations

import contextlib
import sqlite3
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import undercroft_obs as obs
from undercroft_core.embedder import Embedder
from undercroft_core.ids import PUBLIC_DRAWER_IDS
from undercroft_obs import names
from undercroft_vault import (
    GENESIS,
    Anchor,
    AnchorPosition,
    AuditRow,
    BlindIndex,
    Manifest,
    ManifestTampered,
    RotationOutcome,
    Sealer,
    SecretBytes,
    current_manifest,
    derive_vault_keys,
    keycheck_marker,
    new_vault_salt,
    reconcile,
    resolve_rotation,
    swap_manifest,
    write_manifest,
)
from undercroft_vault.manifest import Level

from undercroft_store.errors import (
    ChainBroken,
    DatabaseMalformed,
    DatabaseMissing,
    SchemaMismatch,
    StrayDatabase,
    VaultNotFound,
)
from undercroft_store.kernel._internal.context import VaultContext, utc_now
from undercroft_store.kernel._internal.heals import record_heal_in_transaction
from undercroft_store.kernel._internal.ids_at_rest import ID_RECIPE_KEY, creation_recipe, drawer_ids_for, stored_recipe
from undercroft_store.kernel._internal.meta_at_rest import (
    KG_WINDOWS_KEY,
    KG_WINDOWS_SEALED,
    METADATA_KEY,
    METADATA_SEALED,
    blind_index,
)
from undercroft_store.kernel._internal.sqlite import connect_read_only, connect_writable
from undercroft_store.kernel._internal.vault_lock import VaultLock, lock_shared
from undercroft_store.kernel.schema import check_schema, create_schema, schema_version

__all__ = ["DB_FILE", "create_vault_files", "open_context", "read_audit_rows"]

DB_FILE = "vault.db"
#: The database's name before 1.5.0: a directory holding it beside vault.db holds a stray copy.
LEGACY_DB_FILE = "palace.db"
# A live writer's anchor lands just after its commit: an open seeing the anchor behind re-reads it after
# these pauses before calling it a heal (a crash or a restored manifest stays behind; an in-flight one lands).
_SETTLE_PAUSES = (0.01, 0.03, 0.1)


def create_vault_files(
    vault_dir: Path, vault_id: str, level: Level, master: SecretBytes, random_bytes: Callable[[int], bytes]
) -> None:
    """Create vault.db (schema, keycheck, sealed blind secret, genesis chain) then the manifest.

    The database comes first: a manifest is only ever written beside a database that exists, so a
    manifest whose database is absent is evidence, never a half-created vault.
    """
    vault_dir.mkdir(mode=0o700, parents=True)
    salt = new_vault_salt(random_bytes)
    manifest = Manifest.create(vault_id, level, salt)
    with derive_vault_keys(master, vault_id, salt) as keys:
        sealer = Sealer(keys, random_bytes=random_bytes)
        connection = connect_writable(vault_dir / DB_FILE)
        try:
            connection.execute("BEGIN IMMEDIATE")
            create_schema(connection, hmac_only=level == "hmac-only")
            rows = {
                "level": level.encode("ascii"),
                "vault_id": vault_id.encode("ascii"),
                "keycheck": keycheck_marker(keys, manifest.generation),
                "blind_secret": BlindIndex.generate().seal(sealer),
                "append_counter": b"0",
            }
            if level == "sealed":
                rows[METADATA_KEY] = METADATA_SEALED
                rows[ID_RECIPE_KEY] = creation_recipe(level).encode("ascii")
                rows[KG_WINDOWS_KEY] = KG_WINDOWS_SEALED
            connection.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", list(rows.items()))
            connection.execute("INSERT INTO chain_meta (id, head, height) VALUES (1, ?, 0)", (GENESIS,))
            connection.execute("COMMIT")
        finally:
            connection.close()
        (vault_dir / DB_FILE).chmod(0o600)
        write_manifest(vault_dir, manifest, keys)
        (vault_dir / "vault.json").chmod(0o600)


def read_audit_rows(connection: sqlite3.Connection) -> list[AuditRow]:
    """Every audit row in chain order.

    A STRICT table's column types are enforced on write, not on read: a flipped serial-type byte hands back a
    BLOB or NULL where TEXT was stored. That is an integrity verdict here, before any leg calls str methods on it.
    """
    rows: list[AuditRow] = []
    for record_id, tag, at in connection.execute("SELECT record_id, tag, at FROM audit ORDER BY seq"):
        if not isinstance(record_id, str) or not isinstance(tag, bytes) or not isinstance(at, str):
            raise DatabaseMalformed("an audit row's stored types are not this build's (tampering or the disk)")
        rows.append(AuditRow(record_id, tag, at))
    return rows


def _meta(connection: sqlite3.Connection, key: str) -> bytes | None:
    row = connection.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
    return None if row is None else bytes(row[0])


def _connect(db_path: Path, read_only: bool, unhealed: list[str]) -> sqlite3.Connection:
    if not read_only:
        return connect_writable(db_path)
    opened = connect_read_only(db_path)
    if opened.immutable:
        unhealed.append(
            "opened with immutable=1 on a write-protected directory: correct on a frozen snapshot, wrong if "
            "anything is still writing to it"
        )
    return opened.connection


def open_context(
    vault_dir: Path,
    vault_id: str,
    master: SecretBytes,
    embedder: Embedder,
    *,
    read_only: bool,
    clock: Callable[[], datetime] = utc_now,
    force_embedder: bool = False,
    lock: VaultLock | None = None,
) -> VaultContext:
    """Open one vault and reconcile it; raises the integrity verdicts the state diagram names.

    The context holds the vault's shared lock until it closes (`RotationInProgress` when a rotation holds
    it past the bounded wait); a caller already holding the exclusive lock (rotation) passes it as ``lock``.
    """
    if not (vault_dir / "vault.json").is_file():
        raise VaultNotFound(f"no vault named {vault_id!r} (no manifest at {vault_dir})")
    held = lock_shared(vault_dir) if lock is None else lock
    try:
        db_path = _checked_database(vault_dir, vault_id)
        unhealed: list[str] = []
        connection = _connect(db_path, read_only, unhealed)
        try:
            context = _open_connected(
                vault_dir, vault_id, master, embedder, connection, unhealed, read_only, clock, force_embedder
            )
        except BaseException:
            connection.close()
            raise
    except BaseException:
        if lock is None:
            held.release()
        raise
    context.lock = held
    return context


def _checked_database(vault_dir: Path, vault_id: str) -> Path:
    """vault.db, refused before SQLite touches it when absent, zero-length, or beside a stray palace.db."""
    db_path = vault_dir / DB_FILE
    if (vault_dir / LEGACY_DB_FILE).exists():
        raise StrayDatabase(
            f"vault {vault_id!r}: the directory holds both {DB_FILE} and {LEGACY_DB_FILE}; one is a stray copy and "
            f"an open that picked one could serve the wrong vault: move the stray aside and reopen"
            if db_path.exists()
            else f"vault {vault_id!r}: the directory holds the pre-1.5 {LEGACY_DB_FILE} and no {DB_FILE}; this "
            f"build does not migrate it: rename it to {DB_FILE} (with its -wal/-shm files, if any) and reopen"
        )
    if not db_path.is_file():
        raise DatabaseMissing(f"vault {vault_id!r} has a manifest but its {DB_FILE} is absent")
    if db_path.stat().st_size == 0:
        # SQLite would take an empty file for a new database (and a writable open would write its header).
        raise DatabaseMissing(
            f"vault {vault_id!r} has a manifest but its {DB_FILE} is zero-length (truncated or replaced): "
            "preserve the evidence and restore a backup that verifies"
        )
    return db_path


def _open_connected(
    vault_dir: Path,
    vault_id: str,
    master: SecretBytes,
    embedder: Embedder,
    connection: sqlite3.Connection,
    unhealed: list[str],
    read_only: bool,
    clock: Callable[[], datetime],
    force_embedder: bool,
) -> VaultContext:
    if schema_version(connection) is None:
        raise SchemaMismatch(f"vault {vault_id!r}: {DB_FILE} holds no schema (it was never created by a vault create)")
    marker = _meta(connection, "keycheck")
    if marker is None:
        raise ManifestTampered(f"vault {vault_id!r}: the database holds no keycheck marker")
    try:
        state = resolve_rotation(vault_dir, vault_id=vault_id, master=master, marker=marker, writable=not read_only)
    except ManifestTampered:
        obs.increment(names.HMAC_VERIFY_FAILURES_TOTAL, surface="manifest")
        raise
    if state.staged_left_in_place:
        unhealed.append(f"a staged rotation (vault.json.next, outcome {state.outcome.value}) was left in place")
    manifest, keys = state.manifest, state.keys
    try:
        level = _meta(connection, "level")
        if level != manifest.level.encode("ascii"):
            raise ManifestTampered(
                f"vault {vault_id!r}: the manifest says level {manifest.level!r} but the database says {level!r}"
            )
        check_schema(connection, hmac_only=manifest.level == "hmac-only")
        context = VaultContext(
            vault_id=vault_id,
            vault_dir=vault_dir,
            connection=connection,
            keys=keys,
            sealer=Sealer(keys),
            manifest=manifest,
            embedder=embedder,
            read_only=read_only,
            clock=clock,
            force_embedder=force_embedder,
            unhealed=unhealed,
            embed_failures_at_open=embedder.embed_failures,
            metadata_sealed=manifest.level == "sealed" and _meta(connection, METADATA_KEY) == METADATA_SEALED,
            kg_windows_sealed=manifest.level == "sealed" and _meta(connection, KG_WINDOWS_KEY) == KG_WINDOWS_SEALED,
        )
        context.drawer_ids = drawer_ids_for(stored_recipe(connection, vault_id), lambda: blind_index(context))
        if state.outcome is RotationOutcome.COMMITTED and not read_only:
            promoted = "a committed key rotation's staged manifest (vault.json.next) was promoted"
            _heal(context, promoted, anchor_to_head=False)
        _reconcile_chain(context)
        context.data_version = int(connection.execute("PRAGMA data_version").fetchone()[0])
    except BaseException:
        keys.wipe()
        raise
    obs.increment(names.VAULT_OPENS_TOTAL)
    return context


def _settle(context: VaultContext, head: bytes, height: int) -> bool:
    """True when vault.json, re-read after a short pause, now anchors the committed head (an in-flight anchor)."""
    for pause in _SETTLE_PAUSES:
        time.sleep(pause)
        manifest = current_manifest(context.vault_dir, context.keys, expected_generation=context.manifest.generation)
        row = context.connection.execute("SELECT head, height FROM chain_meta WHERE id = 1").fetchone()
        head, height = bytes(row[0]), int(row[1])
        context.manifest = manifest
        if manifest.anchor.count == height and manifest.anchor.head == head:
            return True
    return False


def _reconcile_chain(context: VaultContext) -> None:
    connection = context.connection
    row = connection.execute("SELECT head, height FROM chain_meta WHERE id = 1").fetchone()
    if row is None:  # Unseeded: seed at genesis (a writable open), or report it
        if context.read_only:
            context.unhealed.append("the audit chain is not seeded yet (needs one writable open)")
            return
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("INSERT OR IGNORE INTO chain_meta (id, head, height) VALUES (1, ?, 0)", (GENESIS,))
        connection.execute("COMMIT")
        row = (GENESIS, 0)
    head, height = bytes(row[0]), int(row[1])
    anchor = context.manifest.anchor
    if anchor.count == height and anchor.head == head:
        return  # Current
    if anchor.count < height and _settle(context, head, height):
        return  # Current: another writer's anchor landed just after its commit
    anchor = context.manifest.anchor
    row = connection.execute("SELECT head, height FROM chain_meta WHERE id = 1").fetchone()
    head, height = bytes(row[0]), int(row[1])
    rows = read_audit_rows(connection)
    if len(rows) != height:
        raise ChainBroken(
            f"audit-chain head: vault {context.vault_id!r} holds {len(rows)} audit rows but the committed "
            f"head is at height {height}; audit rows were removed or inserted"
        )
    try:
        position = reconcile(context.keys, rows, head, anchor)
    except ChainBroken:
        obs.increment(names.HMAC_VERIFY_FAILURES_TOTAL, surface="chain")
        raise
    if position is AnchorPosition.ABSENT:
        obs.increment(names.HMAC_VERIFY_FAILURES_TOTAL, surface="manifest")
        raise ManifestTampered(
            f"vault {context.vault_id!r}: the manifest anchor (height {anchor.count}) never appears in the "
            f"replayed audit chain (height {height}): the database was rolled back or forked"
        )
    if position is AnchorPosition.BEHIND:
        behind = height - anchor.count
        if context.read_only:
            context.unhealed.append(f"manifest anchor is {behind} record(s) behind the chain head (not re-anchored)")
            return
        what = (
            f"manifest anchor was {behind} record(s) behind the chain head (anchor {anchor.count}, head {height}); "
            "re-anchored (a crash between a commit and its anchor, or an older vault.json put back)"
        )
        _heal(context, what, anchor_to_head=True)
        context.open_anchor_lag = behind


def _heal(context: VaultContext, what: str, *, anchor_to_head: bool) -> None:
    """Log one heal in ``meta.heals`` and (when asked) re-anchor vault.json, under the database's write lock."""
    connection = context.connection
    connection.execute("BEGIN IMMEDIATE")
    try:
        record_heal_in_transaction(connection, context.now(), what)
        if anchor_to_head:
            row = connection.execute("SELECT head, height FROM chain_meta WHERE id = 1").fetchone()
            manifest = context.manifest.with_anchor(Anchor(bytes(row[0]), int(row[1])))
            swap_manifest(context.vault_dir, manifest, context.keys, expected_generation=manifest.generation)
            context.manifest = manifest
        connection.execute("COMMIT")
    except BaseException:
        if connection.in_transaction:
            connection.execute("ROLLBACK")
        raise
    context.healed.append(what)


def wipe_quietly(context: VaultContext) -> None:
    """Close the connection and wipe the keys (idempotent)."""
    if context.closed:
        return
    context.closed = True
    with contextlib.suppress(sqlite3.Error):
        context.connection.close()
    context.keys.wipe()
    context.verified_rows.clear()  # no plaintext drawer outlives the handle
    context.meta_cache.clear()
    context.kg_window_cache.clear()
    context.label_memo.clear()
    context.label_names.clear()
    context.covered_memo = None
    context.registry = None
    if context.blind is not None:
        context.blind.wipe()
        context.blind = None
    context.drawer_ids = PUBLIC_DRAWER_IDS  # drop the keyed recipe's key with the handle
    if context.lock is not None:
        context.lock.release()  # after the connection: no handle of this context outlives the lock
