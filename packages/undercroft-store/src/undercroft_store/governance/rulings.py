"""Admission rulings: ``admission list|allow|deny`` over the review queue (operator surfaces only, never MCP).

`list_admissions(store)` returns every verified queue entry with the state of its destination NOW
(``unchanged`` or ``moved``), so the reviewer sees it before ruling. `allow(store, slot)` re-files the
quarantined text to the id it aimed at, in ONE write transaction through the choke point: inside it the
queue row is re-read (a raced ruling refuses) and the destination's keyed digest is recomputed — written or
deleted since the text was queued refuses with `DestinationMoved` — then the resident is deleted (tombstone
+ ``delete/<slot>``), the queue row removed, the drawer written to its destination with its stored vector
(``drawer/<id>``), and a ``ruling/<slot>`` record appended whose tag is keyed over the verdict.
`deny(store, slot, signer=None)` destroys the resident through attested forgetting
(`forgetting.forget_within` with ``admission_ruling=True``), removes the queue row and appends the
``ruling/<slot>`` deny record in the SAME transaction as the erasure and its ``forget/`` record, and returns
the receipt. Every decision reads labels through the label guard.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import undercroft_obs as obs
from undercroft_core.drawer import canonical_json
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_obs import names
from undercroft_vault import AuditRow, Domain, IntegrityFailure, SigningIdentity, compute_tag, constant_time_equal

from undercroft_store.errors import DrawerNotFound, EmbeddingRefused, Error
from undercroft_store.governance.forgetting import ForgetReceipt, forget_within
from undercroft_store.governance.quarantine import (
    QUARANTINE_PREFIX,
    RULING_PREFIX,
    QueueEntry,
    QueueTampered,
    destination_digest,
    read_queue,
)
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.governance import audited, check_writable, context_of, open_blind
from undercroft_store.kernel._internal.governance_tables import QUEUE_TABLE
from undercroft_store.kernel._internal.meta_at_rest import stored_label
from undercroft_store.kernel._internal.read_door import audited_read
from undercroft_store.kernel._internal.reading import SELECT_BY_ID, verified_drawer
from undercroft_store.kernel._internal.vectors import unpack_row
from undercroft_store.kernel.label_guard import label_guard
from undercroft_store.kernel.screening import Bypass, BypassReason
from undercroft_store.kernel.writes import DrawerWrite, delete_within, write_drawers

__all__ = [
    "RULING_PREFIX",
    "AdmissionItem",
    "DestinationMoved",
    "QueueEntryNotFound",
    "Ruling",
    "RulingRaced",
    "allow",
    "deny",
    "list_admissions",
    "ruling_tag",
]


class QueueEntryNotFound(DrawerNotFound):
    """No queue entry has that id (exit 1)."""


class DestinationMoved(Error):
    """The destination was written or deleted since the text was queued: allow refuses (exit 1)."""


class RulingRaced(Error):
    """The queue row changed between reading it and ruling inside the transaction (exit 1; look again)."""


@dataclass(frozen=True, slots=True)
class AdmissionItem:
    """One queue entry as the reviewer sees it: the verified row and whether its destination moved since."""

    entry: QueueEntry
    destination: str  # "unchanged" or "moved"

    def to_dict(self) -> dict[str, object]:
        """The JSON form (labels, codes and offsets; no content word)."""
        return {**self.entry.to_dict(), "destination": self.destination}


@dataclass(frozen=True, slots=True)
class Ruling:
    """What a ruling did: the verdict, the queue slot, where the text went (allow) and when."""

    verdict: str
    slot: str
    intended_id: str
    landed_id: str | None
    at: str
    receipt: ForgetReceipt | None = None  # deny: the attested-forgetting receipt

    def to_dict(self) -> dict[str, object]:
        """The JSON form."""
        return {
            "verdict": self.verdict,
            "id": self.slot,
            "intended_id": self.intended_id,
            "landed_id": self.landed_id,
            "at": self.at,
            "receipt": None if self.receipt is None else self.receipt.to_dict(),
        }


def ruling_tag(context: VaultContext, verdict: str, entry: QueueEntry, at: str) -> bytes:
    """The ruling record's tag: keyed over the verdict, the slot, the target and the queue row it ruled on."""
    body = canonical_json(
        {"verdict": verdict, "slot": entry.drawer_id, "intended_id": entry.intended_id, "queue_tag": entry.tag.hex()}
    )
    return compute_tag(context.keys, RULING_PREFIX + entry.drawer_id, body, at.encode("ascii"))


def _queue(context: VaultContext) -> list[QueueEntry]:
    """The verified queue, decided from the labels the guard holds — never from audit rows re-read raw.

    Only the newest ``quarantine/<slot>`` and ``ruling/<slot>`` records decide (and their chain order), so
    the guard's `ordered` hands exactly those, each checked under the per-key invariant: a queue label edited,
    relabelled or removed beneath a handle that already replayed refuses. One snapshot holds the guard's sync,
    its rows and the queue table read against them.
    """
    connection = context.connection
    own = not connection.in_transaction
    if own:
        connection.execute("BEGIN")
    try:
        return read_queue(context, label_guard(context).ordered(QUARANTINE_PREFIX, RULING_PREFIX))
    finally:
        if own:
            connection.execute("COMMIT")


@audited_read("admission-queue", subject=lambda a: "")
def list_admissions(store: object) -> list[AdmissionItem]:
    """Every verified queue entry, oldest first, with its destination's state now."""
    context = context_of(store)
    entries = _queue(context)
    items: list[AdmissionItem] = []
    with open_blind(context) as blind:
        for entry in entries:
            same = constant_time_equal(destination_digest(context, blind, entry.intended_id), entry.destination)
            items.append(AdmissionItem(entry, "unchanged" if same else "moved"))
    return items


def _find(context: VaultContext, slot: str) -> QueueEntry:
    for entry in _queue(context):
        if entry.drawer_id == slot:
            return entry
    raise QueueEntryNotFound(f"no admission queue entry {slot!r} in vault {context.vault_id!r}")


def _stored_vector(context: VaultContext, slot: str) -> np.ndarray | None:
    blob = context.connection.execute("SELECT embedding FROM drawers WHERE id = ?", (slot,)).fetchone()
    try:
        packed = context.sealer.open(Domain.embedding(slot), bytes(blob[0])) if context.sealed else bytes(blob[0])
        scale, codes = unpack_row(packed, context.embedder.dimension)
    except (IntegrityFailure, EmbeddingRefused):
        return None  # another vector space: the write embeds the text afresh
    return codes.astype(np.float32) * np.float32(scale)


def allow(store: object, slot: str) -> Ruling:
    """Re-file the queued text to its destination unless the destination moved since it was queued."""
    context = context_of(store)
    check_writable(context)
    entry = _find(context, slot)
    row = context.connection.execute(SELECT_BY_ID, (slot,)).fetchone()
    if row is None:
        raise QueueTampered(f"queue entry {slot} has no resident (run undercroft verify)")
    resident = verified_drawer(context, row[0], bytes(row[1]), bytes(row[2]), bytes(row[3]))
    target = replace(
        resident,
        id=entry.intended_id,
        wing=entry.intended_wing,
        room=entry.intended_room,
        chunk_index=entry.chunk_index,
        id_recipe=entry.id_recipe,
        intended_wing=None,
        intended_room=None,
    )
    if target.expected_id(context.drawer_ids) != entry.intended_id or resident.wing != QUARANTINE_WING:
        raise QueueTampered(f"queue entry {slot} does not describe its own destination (run undercroft verify)")
    at_ruling: list[str] = []

    def within(at: str) -> list[AuditRow]:
        current = context.connection.execute(f"SELECT tag FROM {QUEUE_TABLE} WHERE drawer_id = ?", (slot,)).fetchone()  # noqa: S608
        if current is None or not constant_time_equal(bytes(current[0]), entry.tag):
            raise RulingRaced(f"queue entry {slot} changed before the ruling committed; list the queue again")
        with open_blind(context) as blind:
            if not constant_time_equal(destination_digest(context, blind, entry.intended_id), entry.destination):
                raise DestinationMoved(
                    f"destination {entry.intended_id} was written or deleted since entry {slot} was queued; "
                    "allow refused (deny it, or re-save the text)"
                )
        records = delete_within(context, [slot], at)
        context.connection.execute(f"DELETE FROM {QUEUE_TABLE} WHERE drawer_id = ?", (slot,))  # noqa: S608
        at_ruling.append(at)
        return [*records, AuditRow(RULING_PREFIX + slot, ruling_tag(context, "allow", entry, at), at)]

    [result] = write_drawers(
        context,
        [DrawerWrite(target, _stored_vector(context, slot))],
        screening=Bypass(BypassReason.ALREADY_DIVERTED),  # the reviewer's accountable override
        within=within,
    )
    return Ruling("allow", slot, entry.intended_id, result.id, at_ruling[0])


def deny(store: object, slot: str, *, signer: SigningIdentity | None = None) -> Ruling:
    """Destroy the queued text through attested forgetting and log the deny ruling; returns the receipt.

    ONE transaction: the resident's tombstone and ``delete/<slot>``, the ``forget/<digest>`` record, the
    queue row's removal and the ``ruling/<slot>`` record commit together, so a receipt exists iff the
    resident is gone. A queue row left without a resident by an older build (which committed the two
    apart) is still finished by ``deny``, with no new receipt.
    """
    context = context_of(store)
    check_writable(context)
    entry = _find(context, slot)
    receipt: ForgetReceipt | None = None
    with audited(context) as records:
        current = context.connection.execute(f"SELECT tag FROM {QUEUE_TABLE} WHERE drawer_id = ?", (slot,)).fetchone()  # noqa: S608
        if current is None or not constant_time_equal(bytes(current[0]), entry.tag):
            raise RulingRaced(f"queue entry {slot} changed before the ruling committed; list the queue again")
        resident = context.connection.execute("SELECT wing FROM drawers WHERE id = ?", (slot,)).fetchone()
        if resident is not None:
            if resident[0] != stored_label(context, "wing", QUARANTINE_WING):
                raise QueueTampered(
                    f"queue entry {slot} names a drawer outside the review wing (run undercroft verify)"
                )
            receipt = forget_within(
                context, records, [slot], signer=signer, reason="admission-deny", admission_ruling=True
            )
        context.connection.execute(f"DELETE FROM {QUEUE_TABLE} WHERE drawer_id = ?", (slot,))  # noqa: S608
        at = context.now()
        records.append(AuditRow(RULING_PREFIX + slot, ruling_tag(context, "deny", entry, at), at))
    if receipt is not None:  # the delete path's signals, after the commit
        obs.increment(names.DRAWER_DELETES_TOTAL)
        obs.emit(names.EVENT_DRAWER_DELETED, vault=context.vault_id)
    return Ruling("deny", slot, entry.intended_id, None, at, receipt)
