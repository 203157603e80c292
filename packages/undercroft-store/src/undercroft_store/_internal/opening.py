"""Creating a vault's files and opening one: rotation resolution, schema check, chain reconciliation.

The reconciliation follows the security model's state diagram: verify the manifest MAC (inside
`resolve_rotation`), compare its anchor with the committed chain head; equal is Current; otherwise replay
every audit row — rows that do not reproduce the head are ChainBroken, an anchor strictly behind is a
crash artifact (Healed: re-anchored on a writable open, reported as unhealed on a read-only one), an
anchor that never appears is a rollback or fork (ManifestTampered).
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable
from datetime import datetime
from pathlib import Path

import undercroft_obs as obs
from undercroft_core.embedder import Embedder
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
    derive_vault_keys,
    keycheck_marker,
    new_vault_salt,
    reconcile,
    resolve_rotation,
    write_manifest,
)
from undercroft_vault.manifest import Level

from undercroft_store._internal.context import VaultContext, utc_now
from undercroft_store._internal.sqlite import connect_read_only, connect_writable
from undercroft_store.errors import ChainBroken, DatabaseMissing, SchemaMismatch, VaultNotFound
from undercroft_store.schema import check_schema, create_schema, schema_version

__all__ = ["DB_FILE", "create_vault_files", "open_context", "read_audit_rows"]

DB_FILE = "vault.db"


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
            connection.executemany("INSERT INTO meta (key, value) VALUES (?, ?)", list(rows.items()))
            connection.execute("INSERT INTO chain_meta (id, head, height) VALUES (1, ?, 0)", (GENESIS,))
            connection.execute("COMMIT")
        finally:
            connection.close()
        (vault_dir / DB_FILE).chmod(0o600)
        write_manifest(vault_dir, manifest, keys)
        (vault_dir / "vault.json").chmod(0o600)


def read_audit_rows(connection: sqlite3.Connection) -> list[AuditRow]:
    """Every audit row in chain order."""
    return [
        AuditRow(record_id, bytes(tag), at)
        for record_id, tag, at in connection.execute("SELECT record_id, tag, at FROM audit ORDER BY seq")
    ]


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
) -> VaultContext:
    """Open one vault and reconcile it; raises the integrity verdicts the state diagram names."""
    if not (vault_dir / "vault.json").is_file():
        raise VaultNotFound(f"no vault named {vault_id!r} (no manifest at {vault_dir})")
    db_path = vault_dir / DB_FILE
    if not db_path.is_file():
        raise DatabaseMissing(f"vault {vault_id!r} has a manifest but its {DB_FILE} is absent")
    unhealed: list[str] = []
    connection = _connect(db_path, read_only, unhealed)
    try:
        return _open_connected(
            vault_dir, vault_id, master, embedder, connection, unhealed, read_only, clock, force_embedder
        )
    except BaseException:
        connection.close()
        raise


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
        )
        if state.outcome is RotationOutcome.COMMITTED and not read_only:
            context.healed.append("a committed key rotation's staged manifest was promoted")
        _reconcile_chain(context)
        context.data_version = int(connection.execute("PRAGMA data_version").fetchone()[0])
    except BaseException:
        keys.wipe()
        raise
    obs.increment(names.VAULT_OPENS_TOTAL)
    return context


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
        context.manifest = context.manifest.with_anchor(Anchor(head, height))
        write_manifest(context.vault_dir, context.manifest, context.keys)
        context.healed.append(f"manifest anchor was {behind} record(s) behind the chain head; re-anchored")


def wipe_quietly(context: VaultContext) -> None:
    """Close the connection and wipe the keys (idempotent)."""
    if context.closed:
        return
    context.closed = True
    with contextlib.suppress(sqlite3.Error):
        context.connection.close()
    context.keys.wipe()
