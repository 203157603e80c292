"""Remote-index custody: ``index push`` (an egress, chain-audited), ``index status`` (a read) and the remote
half of ``forget --backend``.

What a push sends, per drawer: the id, the AT-REST content (the sealed bytes on a sealed vault, the
plaintext on an hmac-only vault — refused unless ``allow_plaintext``), the decrypted embedding and the wing
and room labels as the vault's own columns hold them (the blind values on a vault whose metadata is sealed,
so a mirror learns which rows share a label, never its name; the names on an hmac-only vault); and, per
mirror, the embedding-space identity. Every row is read verified
(HMAC and the served-row rule) before anything of it leaves, so a tampered row stops the push with an
integrity verdict instead of being mirrored. Quarantined rows are mirrored too, deliberately: an untrusted
mirror can propose any id it likes, so the fence is applied where bytes are decrypted (the local search),
not where they are uploaded — and dropping them would empty a reviewer's own scope.

Every push appends ONE ``egress/index-push`` record when it ends, a partly failed one included: it binds the
surface, the recipient (backend, destination, collection), the counts (pushed, total), a digest of the
pushed ids in order, and the details (backend, collection, embedding space, sealed or plaintext content,
whether plaintext was permitted). A push is idempotent by id, so running it again resumes a failed one:
``resume_after`` skips the drawers already pushed (their seq is in the report).
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any, Final

import numpy as np
from undercroft_index import Error as IndexError_
from undercroft_index import MirrorRecord
from undercroft_vault import Domain, IntegrityFailure

from undercroft_store.errors import (
    EmbeddingRefused,
    MirrorUnavailable,
    PlaintextPushRefused,
    ReadOnlyStore,
    RecordTampered,
)
from undercroft_store.governance.forgetting import _context_of
from undercroft_store.governance.read_audit import record_egress
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.meta_at_rest import stored_label
from undercroft_store.kernel._internal.reading import SERVED_COLUMNS, report_tamper, served_drawers
from undercroft_store.kernel._internal.vectors import unpack_row
from undercroft_store.kernel.mirror import Mirror, describe_mirror
from undercroft_store.store import VaultStore

__all__ = ["DEFAULT_BATCH", "MAX_BATCH", "PushReport", "forget_remote", "index_status", "push_mirror"]

#: Drawers per backend call.
DEFAULT_BATCH: Final = 256
MAX_BATCH: Final = 4096
_ROWS: Final = f"SELECT {SERVED_COLUMNS}, embedding FROM drawers WHERE seq > ? ORDER BY seq LIMIT ?"  # noqa: S608


@dataclass
class PushReport:
    """What one push did: counts, the last seq pushed (resume from it), the record's height, any failure."""

    backend: str
    collection: str
    destination: str
    space: str
    content: str
    plaintext_permitted: bool
    total: int
    pushed: int = 0
    skipped: int = 0
    last_seq: int = 0
    audit_height: int | None = None
    failure: str | None = None
    ids_digest: str = field(default="", repr=False)

    def to_dict(self) -> dict[str, object]:
        """The JSON-able report (``--json``)."""
        return {
            "backend": self.backend,
            "collection": self.collection,
            "destination": self.destination,
            "space": self.space,
            "content": self.content,
            "plaintext_permitted": self.plaintext_permitted,
            "total": self.total,
            "pushed": self.pushed,
            "skipped_other_space": self.skipped,
            "last_seq": self.last_seq,
            "ids_digest": self.ids_digest,
            "audit_height": self.audit_height,
            "failure": self.failure,
        }


def _embedding(context: VaultContext, drawer_id: str, blob: bytes, meta: bytes) -> tuple[float, ...] | None:
    """The drawer's decrypted embedding as floats (None: a vector of another space, awaiting repair)."""
    try:
        packed = context.sealer.open(Domain.embedding(drawer_id), blob) if context.sealed else blob
    except IntegrityFailure as error:
        report_tamper(context, drawer_id, meta)
        raise RecordTampered(f"embedding of {drawer_id} in vault {context.vault_id!r}: {error}") from None
    try:
        scale, codes = unpack_row(packed, context.embedder.dimension)
    except EmbeddingRefused:
        return None
    vector = codes.astype(np.float32) * np.float32(scale)
    norm = float(np.linalg.norm(vector))
    if norm == 0.0:
        return None  # a zero vector (a degraded embed) has no direction to index
    return tuple(float(v) for v in vector / norm)


def _batch_records(context: VaultContext, rows: Sequence[Sequence[Any]]) -> tuple[list[MirrorRecord], int]:
    drawers = served_drawers(context, rows)  # HMAC, mirrors, not-destroyed: nothing unverified leaves
    records: list[MirrorRecord] = []
    skipped = 0
    for drawer, row in zip(drawers, rows, strict=True):
        embedding = _embedding(context, drawer.id, bytes(row[9]), bytes(row[2]))
        if embedding is None:
            skipped += 1
            continue
        records.append(
            MirrorRecord(
                id=drawer.id,
                content=bytes(row[3]),
                sealed=context.sealed,
                embedding=embedding,
                wing=stored_label(context, "wing", drawer.wing) or "",
                room=stored_label(context, "room", drawer.room) or "",
            )
        )
    return records, skipped


def push_mirror(
    store: VaultStore,
    mirror: Mirror,
    *,
    surface: str,
    allow_plaintext: bool = False,
    batch: int = DEFAULT_BATCH,
    resume_after: int = 0,
    drop: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> PushReport:
    """Mirror every drawer of ``store`` to ``mirror``; ONE ``egress/index-push`` record whatever happens.

    Refused before anything is sent: an hmac-only vault without ``allow_plaintext`` (`PlaintextPushRefused`),
    a read-only handle (the egress could not be recorded), a bad batch size. A backend failure mid-push ends
    it: the record is written with the count that left, and `MirrorUnavailable` is raised carrying the
    report (``error.report``). ``drop`` removes the collection first (a mirror of another space).
    """
    context = _context_of(store)
    if isinstance(batch, bool) or not isinstance(batch, int) or not 1 <= batch <= MAX_BATCH:
        raise MirrorUnavailable(f"--batch must be an integer in 1..{MAX_BATCH}, got {batch!r}")
    if context.read_only:
        raise ReadOnlyStore(f"vault {context.vault_id!r} is open read-only: a push is an egress and must be recorded")
    if not context.sealed and not allow_plaintext:
        raise PlaintextPushRefused(
            f"vault {context.vault_id!r} is hmac-only: its at-rest content is the plaintext, so a push would send "
            "every drawer's text to the backend. Pass --allow-plaintext to send it anyway (recorded on the chain)"
        )
    identity = context.embedder.identity
    connection = context.connection
    total = int(connection.execute("SELECT count(*) FROM drawers WHERE seq > ?", (resume_after,)).fetchone()[0])
    report = PushReport(
        backend=mirror.backend.name,
        collection=mirror.collection,
        destination=mirror.backend.destination,
        space=identity.label,
        content="sealed" if context.sealed else "plaintext",
        plaintext_permitted=allow_plaintext,
        total=total,
        last_seq=resume_after,
    )
    digest = hashlib.sha256()
    try:
        if drop:
            mirror.backend.drop(mirror.collection)
        mirror.backend.ensure(mirror.collection, space=identity.label, dimension=identity.dimension)
        while True:
            rows = connection.execute(_ROWS, (report.last_seq, batch)).fetchall()
            if not rows:
                break
            records, skipped = _batch_records(context, rows)
            mirror.backend.push(mirror.collection, records, space=identity.label)
            for record in records:
                digest.update(record.id.encode("utf-8") + b"\n")
            report.pushed += len(records)
            report.skipped += skipped
            report.last_seq = int(rows[-1][0])
            if progress is not None:
                progress(report.pushed + report.skipped, total)
        mirror.backend.settle(mirror.collection)
    except IndexError_ as error:
        report.failure = str(error)
    finally:
        # Custody, not outcome: what left is recorded even when the push stopped (or raised a verdict).
        report.ids_digest = digest.hexdigest()
        report.audit_height = record_egress(
            context,
            "index-push",
            surface=surface,
            recipient=mirror.label,
            counts={"pushed": report.pushed, "total": report.total, "skipped": report.skipped},
            manifest_digest=report.ids_digest,
            details={
                "backend": report.backend,
                "collection": report.collection,
                "space": report.space,
                "content": report.content,
                "plaintext_permitted": allow_plaintext,
                "complete": report.failure is None and report.pushed + report.skipped == report.total,
            },
        )
    if report.failure is not None:
        failed = MirrorUnavailable(
            f"push to {mirror.backend.name} stopped after {report.pushed} of {report.total} drawers: {report.failure}. "
            f"Run it again to resume (it is idempotent; --resume-after {report.last_seq} skips what already left)"
        )
        failed.report = report  # type: ignore[attr-defined]
        raise failed
    return report


def index_status(store: VaultStore, mirror: Mirror) -> dict[str, object]:
    """Remote mirror against local counts, JSON-able (``index status``, ``GET …/index/status``, MCP).

    A read: it creates nothing on the backend. ``remote_records`` is None when NO mirror exists, which is
    not the same as a mirror holding zero. ``space_matches`` says whether a search through it can run.
    """
    context = _context_of(store)
    local = int(context.connection.execute("SELECT count(*) FROM drawers").fetchone()[0])
    space = context.embedder.identity.label
    info = describe_mirror(mirror)
    return {
        "vault": context.vault_id,
        "backend": mirror.backend.name,
        "destination": mirror.backend.destination,
        "collection": mirror.collection,
        "exists": info is not None,
        "local_records": local,
        "remote_records": None if info is None else info.records,
        "space": space,
        "remote_space": None if info is None else info.space,
        "space_matches": None if info is None else info.space == space,
        "in_step": None if info is None else (info.records == local and info.space == space),
    }


def forget_remote(mirror: Mirror, ids: Sequence[str]) -> int:
    """Delete ``ids`` from the mirror (absent ids are no error); returns how many were asked for."""
    try:
        mirror.backend.delete(mirror.collection, list(ids))
    except IndexError_ as error:
        raise MirrorUnavailable(
            f"the {mirror.backend.name} mirror did not delete the drawers ({error}); nothing was forgotten locally"
        ) from None
    return len(ids)
