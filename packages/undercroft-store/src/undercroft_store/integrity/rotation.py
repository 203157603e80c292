"""Key rotation: fresh salt and keys, every sealed blob and tag re-keyed, the chain re-folded, in ONE transaction.

The order makes a crash at any instant leave the vault openable under exactly one key generation:

1. ``verified`` — a full verify ran; a failure on a leg rotation would rewrite refuses (`RotationRefused`,
   an integrity verdict): re-keying a tag it has not checked would launder the tampering.
2. ``rewritten`` — inside ``BEGIN IMMEDIATE``: every drawer's content and embedding opened under the old
   keys and sealed byte-exact under the new ones, fingerprint and tag recomputed; the blind-index secret
   re-sealed (never regenerated: ids derived from it must not move); the audit chain re-folded under the
   new chain key (audit tags preserved verbatim) and advanced by one ``drawer/<id>`` record per re-keyed
   drawer carrying its new tag; the new keycheck marker stored.
3. ``staged`` — ``vault.json.next`` (generation + 1, anchored at the new head) written durably.
4. ``committed`` — the transaction commits: the database now names the new generation.
5. ``promoted`` — ``vault.json.next`` replaces ``vault.json``.

A crash before 4 leaves the old marker: the reopen discards the staged file. A crash after 4 leaves the
new marker: the reopen promotes it. The named points are also the test hooks (`checkpoint`).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from undercroft_core.embedder import Embedder
from undercroft_vault import (
    Anchor,
    AuditRow,
    BlindIndex,
    Domain,
    DomainKind,
    IntegrityFailure,
    Manifest,
    Sealer,
    SecretBytes,
    VaultKeys,
    chain_step,
    compute_tag,
    constant_time_equal,
    current_manifest,
    derive_vault_keys,
    discard_staged_manifest,
    fingerprint,
    keycheck_marker,
    new_vault_salt,
    promote_staged_manifest,
    replay,
    stage_manifest,
)

from undercroft_store.errors import RotationRefused, RotationUnsupported, VaultInUse, VaultNotFound
from undercroft_store.integrity.verify import VerifyReport, verify_vault
from undercroft_store.kernel._internal import meta_at_rest
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.opening import read_audit_rows
from undercroft_store.kernel._internal.vault_lock import lock_exclusive
from undercroft_store.kernel.schema import FTS_TABLE
from undercroft_store.kernel.screening import Bypass, BypassReason
from undercroft_store.kernel.seams import Rekeying, Resealer, resealers
from undercroft_store.kernel.writes import rekey_drawers
from undercroft_store.palace import Palace

__all__ = [
    "CHECKPOINTS",
    "PENDING_RESEALERS",
    "SEALED_DOMAINS",
    "TAG_TABLES",
    "Rekeying",
    "Resealer",
    "RotationReport",
    "rotate_context",
    "rotate_vault",
]

#: The named points of a rotation, in order (a `checkpoint` callback is called with each).
CHECKPOINTS: Final = ("verified", "rewritten", "staged", "committed", "promoted")

#: Every AAD domain kind of the vault library → where its sealed blobs live, or None: no table holds it yet.
#: A new kind fails the inventory test until it is placed here AND re-sealed below.
SEALED_DOMAINS: Final[dict[DomainKind, str | None]] = {
    DomainKind.CONTENT: "drawers.content",
    DomainKind.EMBEDDING: "drawers.embedding",
    DomainKind.TOKENS: None,
    # Derived, never re-sealed: search.tiers.fde_integrity.drop_on_rotation drops both FDE tables' blobs.
    DomainKind.FDE_TOKENS: "tier_fde_rows.blob",
    DomainKind.FDE_ARTIFACT: "tier_fde_meta.blob",
    # Derived, never re-sealed: search.tiers.integrity.drop_on_rotation (wired in undercroft_store.wiring) drops
    # both tables' rows in the rotation's transaction; the next search rebuilds them under the new keys.
    DomainKind.PQ_ARTIFACT: "tier_pq_meta.blob, tier_pq_rows.blob",
    DomainKind.KG_OBJECT: None,
    DomainKind.KG_TERMS: None,
    DomainKind.KG_NAME: None,
    # As the other KG kinds: inside kg_facts.meta_json, re-sealed by memory.kg.rotation.reseal_facts (a resealer).
    DomainKind.KG_WINDOW: None,
    DomainKind.VAULT_SECRET: "meta.blind_secret",
    DomainKind.DRAWER_META: "drawers.meta_json",
    DomainKind.QUEUE_META: "admission_queue.signals",
    DomainKind.LABEL_NAMES: "meta.label_names",
    DomainKind.SURFACE_META: "tunnels.meta_json",
    # Derived, never re-sealed: kernel.snapshot_table.drop_on_rotation (wired in undercroft_store.wiring) empties
    # the table in the rotation's transaction; the next open rebuilds the snapshot under the new keys.
    DomainKind.SEARCH_SNAPSHOT: "search_snapshot.blob",
}

#: Every tag-carrying table → what rotation does to its tags.
TAG_TABLES: Final[dict[str, str]] = {
    "drawers": "re-keyed: tag and fingerprint recomputed under the new MAC key",
    "audit": "tags preserved verbatim (historical evidence); the chain over them re-folded under the new chain key",
    "tombstones": "preserved verbatim: each equals its delete/ audit record, evidence under the key that made it",
}


#: Tag-carrying tables outside the core are re-keyed by the hook their feature registers
#: (`kernel.seams.register_resealer`; the store's composition root, `undercroft_store.wiring`, wires them).
#: Tables announced by other surfaces whose reseal hook has not landed here yet: rotation refuses a vault in
#: which one of them holds rows (`RotationUnsupported`), and proceeds while they are empty.
PENDING_RESEALERS: Final[frozenset[str]] = frozenset()
# Tables the core rotation path handles itself.
_CORE_TABLES: Final = frozenset({"meta", "chain_meta", "sqlite_sequence", FTS_TABLE, *TAG_TABLES})


@dataclass(frozen=True)
class RotationReport:
    """What one rotation did."""

    vault: str
    generation_before: int
    generation_after: int
    drawers: int
    embeddings: int
    tombstones_preserved: int
    audit_rows_refolded: int
    rekey_records: int
    chain_records: int
    seconds: float

    def render(self) -> str:
        """Human-readable lines."""
        return "\n".join(
            [
                f"vault:              {self.vault}",
                f"key generation:     {self.generation_before} -> {self.generation_after}",
                f"drawers re-keyed:   {self.drawers} ({self.embeddings} embeddings re-sealed)",
                "blind secret:       re-sealed",
                f"tombstones:         {self.tombstones_preserved} preserved verbatim",
                f"audit chain:        {self.audit_rows_refolded} rows re-folded, {self.rekey_records} re-key records",
                f"chain records:      {self.chain_records}",
                f"ROTATED in {self.seconds:.2f}s",
            ]
        )


def _blocking_legs(report: VerifyReport) -> list[str]:
    """The verify findings rotation would launder by rewriting (mirror drift and orphans it leaves alone)."""
    legs = [f"TAMPERED: {drawer_id}" for drawer_id in report.tampered]
    legs += [f"TAMPERED EMBEDDING: {drawer_id}" for drawer_id in report.embedding_failures]
    if not report.audit_chain_ok:
        legs.append(f"audit chain BROKEN ({report.chain_detail or 'anchor ' + report.anchor})")
    legs += [f"STALE: {drawer_id}" for drawer_id in report.stale_records]
    legs += [f"UNLABELLED: {drawer_id}" for drawer_id in report.unlabelled_records]
    return legs


def _check_inventory(context: VaultContext) -> dict[str, Resealer]:
    """The hooks for every surface table holding rows; refuse a non-empty table nothing can re-key."""
    connection = context.connection
    hooks: dict[str, Resealer] = {}
    unknown: list[str] = []
    registered = resealers()
    for (table,) in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY name"):
        if table in _CORE_TABLES or str(table).startswith(FTS_TABLE + "_"):  # FTS5 shadows: derived, no tags
            continue
        if connection.execute(f'SELECT 1 FROM "{table}" LIMIT 1').fetchone() is None:  # noqa: S608 - catalogue name
            continue  # an empty table holds no tag and no sealed blob
        hook = registered.get(str(table))
        if hook is None:
            unknown.append(str(table))
        else:
            hooks[str(table)] = hook
    if unknown:
        raise RotationUnsupported(
            f"vault {context.vault_id!r} holds rows in table(s) {', '.join(unknown)} the rotation path cannot re-key; "
            "refusing rather than leaving tags or sealed blobs under the old key"
        )
    return hooks


def _refuse(context: VaultContext, what: str) -> RotationRefused:
    return RotationRefused(f"vault {context.vault_id!r}: {what}; rotation refused (run undercroft verify)")


def _rekey_drawers(
    context: VaultContext, new_keys: VaultKeys, new_sealer: Sealer
) -> list[tuple[str, bytes, bytes, bytes, bytes, bytes]]:
    """Verify each drawer under the old keys, then re-seal it byte-exact and re-tag it under the new ones.

    A sealed vault's meta blob is re-sealed too; its blind label columns stay (the blind-index secret is
    re-sealed, never regenerated, so every blind value is the same after the rotation)."""
    old_keys, old_sealer = context.keys, context.sealer
    rows: list[tuple[str, bytes, bytes, bytes, bytes, bytes]] = []
    query = "SELECT id, meta_json, content, embedding, tag FROM drawers ORDER BY seq"
    for drawer_id, meta_blob, content_blob, embedding_blob, tag in context.connection.execute(query):
        meta, content, embedding = bytes(meta_blob), bytes(content_blob), bytes(embedding_blob)
        if not constant_time_equal(compute_tag(old_keys, drawer_id, meta, content), bytes(tag)):
            raise _refuse(context, f"record {drawer_id} fails its HMAC tag")
        plain = content
        try:
            if context.sealed:
                plain = old_sealer.open(Domain.content(drawer_id), content)
                content = new_sealer.seal(Domain.content(drawer_id), plain)
                vector = old_sealer.open(Domain.embedding(drawer_id), embedding)
                embedding = new_sealer.seal(Domain.embedding(drawer_id), vector)
            if context.metadata_sealed:
                meta = meta_at_rest.reseal_meta(old_sealer, new_sealer, drawer_id, meta)
        except IntegrityFailure as error:
            raise _refuse(context, f"record {drawer_id} does not open: {error}") from None
        new_tag = compute_tag(new_keys, drawer_id, meta, content)
        rows.append((drawer_id, meta, content, embedding, fingerprint(new_keys, plain), new_tag))
    return rows


def _reseal_blind_secret(context: VaultContext, new_sealer: Sealer) -> None:
    row = context.connection.execute("SELECT value FROM meta WHERE key = 'blind_secret'").fetchone()
    if row is None:
        return
    sealed = bytes(row[0])
    try:
        blind = BlindIndex.open_sealed(context.sealer, sealed)
    except IntegrityFailure as error:
        raise _refuse(context, f"the sealed blind-index secret does not open: {error}") from None
    try:
        resealed = blind.reseal(sealed, context.sealer, new_sealer)
    finally:
        blind.wipe()
    context.connection.execute("UPDATE meta SET value = ? WHERE key = 'blind_secret'", (resealed,))


def _reseal_label_registry(context: VaultContext, new_sealer: Sealer) -> None:
    """The sealed label registry (blind value → name), opened under the old keys and sealed under the new."""
    row = context.connection.execute("SELECT value FROM meta WHERE key = 'label_names'").fetchone()
    if row is None:
        return
    try:
        plain = context.sealer.open(Domain.label_names(), bytes(row[0]))
    except IntegrityFailure as error:
        raise _refuse(context, f"the sealed label registry does not open: {error}") from None
    resealed = new_sealer.seal(Domain.label_names(), plain)
    context.connection.execute("UPDATE meta SET value = ? WHERE key = 'label_names'", (resealed,))


def _refold_chain(
    context: VaultContext, new_keys: VaultKeys, echoed: list[tuple[str, bytes]], at: str
) -> tuple[int, bytes, int]:
    """Re-fold the chain over the audit rows as found, then append one re-key record per drawer."""
    connection = context.connection
    audit = read_audit_rows(connection)
    stored = connection.execute("SELECT head, height FROM chain_meta WHERE id = 1").fetchone()
    if (
        stored is None
        or int(stored[1]) != len(audit)
        or not constant_time_equal(replay(context.keys, audit), bytes(stored[0]))
    ):
        raise _refuse(context, "the audit chain does not replay to its committed head")
    head = replay(new_keys, audit)
    records = [AuditRow(label, tag, at) for label, tag in echoed]
    for record in records:
        head = chain_step(new_keys, head, record)
    connection.executemany(
        "INSERT INTO audit (record_id, tag, at) VALUES (?, ?, ?)", [(r.record_id, r.tag, r.at) for r in records]
    )
    height = len(audit) + len(records)
    connection.execute("UPDATE chain_meta SET head = ?, height = ? WHERE id = 1", (head, height))
    return len(audit), head, height


def rotate_context(
    context: VaultContext,
    master: SecretBytes,
    *,
    random_bytes: Callable[[int], bytes] = os.urandom,
    checkpoint: Callable[[str], None] | None = None,
) -> RotationReport:
    """Rotate the open writable vault `context` under `master`; the context adopts the new keys on success."""
    started = time.perf_counter()
    mark = checkpoint or (lambda _name: None)
    if context.read_only:
        raise RotationUnsupported(f"vault {context.vault_id!r} is open read-only: it cannot be rotated")
    hooks = _check_inventory(context)
    report = verify_vault(context)
    blocking = _blocking_legs(report)
    if blocking:
        raise _refuse(context, "verify fails on a leg rotation would rewrite: " + "; ".join(blocking[:5]))
    mark("verified")
    before = context.manifest
    new_manifest_salt = new_vault_salt(random_bytes)
    new_keys = derive_vault_keys(master, context.vault_id, new_manifest_salt)
    new_sealer = Sealer(new_keys, random_bytes=random_bytes)
    connection = context.connection
    staged = committed = False
    connection.execute("BEGIN IMMEDIATE")
    try:
        height_now = int(connection.execute("SELECT height FROM chain_meta WHERE id = 1").fetchone()[0])
        if height_now != report.chain_records:
            raise VaultInUse(f"vault {context.vault_id!r} was written during the rotation's verify; try again")
        rekeyed = _rekey_drawers(context, new_keys, new_sealer)
        rekey_drawers(context, rekeyed, screening=Bypass(BypassReason.ROTATION))
        _reseal_blind_secret(context, new_sealer)
        _reseal_label_registry(context, new_sealer)
        echoed = [(f"drawer/{row[0]}", row[5]) for row in rekeyed]
        rekeying = Rekeying(
            connection,
            context.vault_id,
            context.sealed,
            context.keys,
            new_keys,
            context.sealer,
            new_sealer,
            context.metadata_sealed,
        )
        for table in sorted(hooks):
            echoed += hooks[table](rekeying)
        refolded, head, height = _refold_chain(context, new_keys, echoed, context.now())
        generation = before.generation + 1
        connection.execute("UPDATE meta SET value = ? WHERE key = 'keycheck'", (keycheck_marker(new_keys, generation),))
        tombstones = int(connection.execute("SELECT count(*) FROM tombstones").fetchone()[0])
        mark("rewritten")
        after = Manifest(before.vault_id, before.level, new_manifest_salt, generation, Anchor(head, height))
        # Compare-and-swap: vault.json must still be the generation this rotation opened under (`ManifestConflict`).
        current_manifest(context.vault_dir, context.keys, expected_generation=before.generation)
        stage_manifest(context.vault_dir, after, new_keys)
        staged = True
        mark("staged")
        connection.execute("COMMIT")
        committed = True
    except BaseException:
        if not committed:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            if staged:
                discard_staged_manifest(context.vault_dir)
            new_keys.wipe()
        raise
    finally:
        if committed:  # the database names the new generation from here on: adopt it whatever follows
            context.keys.wipe()
            context.keys, context.sealer, context.manifest = new_keys, new_sealer, after
            context.verified_rows.clear()  # drop every reference to the old keys this handle held
            context.generation += 1
    mark("committed")
    promote_staged_manifest(context.vault_dir)
    mark("promoted")
    return RotationReport(
        vault=context.vault_id,
        generation_before=before.generation,
        generation_after=generation,
        drawers=len(rekeyed),
        embeddings=len(rekeyed) if context.sealed else 0,
        tombstones_preserved=tombstones,
        audit_rows_refolded=refolded,
        rekey_records=len(echoed),
        chain_records=height,
        seconds=time.perf_counter() - started,
    )


def rotate_vault(
    palace: Palace,
    name: str,
    embedder: Embedder,
    *,
    random_bytes: Callable[[int], bytes] = os.urandom,
    checkpoint: Callable[[str], None] | None = None,
) -> RotationReport:
    """Rotate vault `name` of `palace`, holding the vault's exclusive lock for the whole rotation.

    No other handle, in any process, is open while it runs: openers wait (bounded) and then refuse with
    `RotationInProgress`; handles already open get `DRAIN_SECONDS` to close, after which the rotation
    refuses with `VaultInUse` (exit 1) — a long-lived ``serve-mcp`` or daemon must be stopped first.
    """
    if not (palace.vault_dir(name) / "vault.json").is_file():
        raise VaultNotFound(f"no vault named {name!r} in {palace.home}")
    with (
        lock_exclusive(palace.vault_dir(name)) as lock,
        palace._open_vault_holding(name, embedder, read_only=False, lock=lock) as store,
    ):
        # Inside the distribution the opened vault is store._context (see docs/store.md).
        return rotate_context(
            store._context,
            palace._master_key(),
            random_bytes=random_bytes,
            checkpoint=checkpoint,
        )
