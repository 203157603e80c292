"""Quarantine: flagged writes divert, sealed, into the reserved ``quarantine-pending`` wing and wait for a ruling.

`writes.write_drawers` calls `divert` for every `Screen()` batch. With ``UNDERCROFT_ADMISSION=off`` (the
default) it returns the batch untouched and nothing else runs: the write contract is byte-identical. With
``quarantine`` each drawer goes through this handle's `AdmissionGate`; a flagged one is rewritten to
``wing=quarantine-pending`` with ``intended_wing``/``intended_room`` and re-enters the same transaction as an
already-diverted write. Its id is the queue SLOT: an append-recipe id whose index is a digest keyed with the
stored blind-index secret over (the id it aimed at, its exact text), so each distinct flagged text takes its
own slot and equal text converges. Inside the write transaction an ``admission_queue`` row records the
signal codes and offsets, where the write was headed, and a keyed digest of what the destination held
then (a row's tag, a tombstone's tag, or absence), and a ``quarantine/<slot>`` audit record carries the
queue row's tag. The `WriteResult` says ``quarantined`` and returns the slot id with ``intended_id``.

Residents answer no read that returns content unless the caller names the wing (listings, `scope_seqs`,
search; `VaultStore.get` needs ``wing=quarantine-pending``); they cannot be deleted by `delete` nor replaced
by a later write (a backstop in the write transaction refuses). `rulings` allows or denies them.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from undercroft_core.drawer import canonical_json
from undercroft_core.errors import InvalidInput
from undercroft_core.ids import ID_RECIPE_APPEND
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_vault import (
    AuditRow,
    BlindIndex,
    Domain,
    IntegrityFailure,
    Sealer,
    VaultKeys,
    compute_tag,
    constant_time_equal,
)

from undercroft_store.errors import InvalidDrawer, StoreIntegrityError
from undercroft_store.governance.admission import AdmissionGate, AdmissionPolicy, Advisor, Decision
from undercroft_store.kernel._internal.context import VaultContext, format_instant
from undercroft_store.kernel._internal.governance import context_of, per_handle, set_per_handle
from undercroft_store.kernel._internal.governance_tables import QUEUE_TABLE
from undercroft_store.kernel._internal.meta_at_rest import open_meta, stored_label
from undercroft_store.kernel.seams import Diverted, Rekeying
from undercroft_store.kernel.writes import DrawerWrite

__all__ = [
    "QUARANTINE_PREFIX",
    "QUEUE_TABLE",
    "Diversion",
    "QueueEntry",
    "QueueTampered",
    "check_queue_rows",
    "destination_digest",
    "divert",
    "gate_for",
    "install_gate",
    "queue_tag",
    "read_queue",
    "record_commits",
    "reseal_queue_rows",
]

#: The audit label prefix of a queue row: ``quarantine/<slot id>``.
QUARANTINE_PREFIX = "quarantine/"
#: The audit label prefix of a ruling (written by `rulings`): ``ruling/<slot id>``.
RULING_PREFIX = "ruling/"
_SLOT_DOMAIN = b"undercroft.queue-slot.v1\x00"
_DEST_DOMAIN = b"undercroft.queue-destination.v1\x00"
_QUEUE_COLUMNS = (
    "drawer_id, intended_id, intended_wing, intended_room, chunk_index, id_recipe, signals, destination, queued_at, tag"
)


class QueueTampered(StoreIntegrityError):
    """A queue row fails its tag, is not its newest record, or the queue and the wing disagree (exit 2)."""


@dataclass(frozen=True, slots=True)
class QueueEntry:
    """One verified queue row: the slot, where it was headed, what tripped, and when."""

    drawer_id: str
    intended_id: str
    intended_wing: str
    intended_room: str
    chunk_index: int
    id_recipe: str
    signals: tuple[str, ...]
    findings: tuple[dict[str, object], ...]
    destination: bytes
    queued_at: str
    tag: bytes

    def to_dict(self) -> dict[str, object]:
        """The JSON form (no content word: codes, offsets and labels only)."""
        return {
            "id": self.drawer_id,
            "intended_id": self.intended_id,
            "intended_wing": self.intended_wing,
            "intended_room": self.intended_room,
            "signals": list(self.signals),
            "findings": list(self.findings),
            "queued_at": self.queued_at,
        }


@dataclass(frozen=True, slots=True)
class Diversion:
    """One flagged write: the slot it landed in, the drawer it aimed at, and the screen's metadata."""

    slot: str
    intended_id: str
    intended_wing: str
    intended_room: str
    chunk_index: int
    id_recipe: str
    signals: bytes


def _seed(gate: AdmissionGate, context: VaultContext) -> None:
    """Seed the rate window from history: committed drawer records inside the window, by stamped added_by."""
    screen = gate.rate_screen
    if screen is None:
        return
    now = context.clock()
    since = now.timestamp() - screen.rate.seconds
    moments: dict[str, list[float]] = {}
    query = (
        "SELECT a.at, d.id, d.meta_json FROM audit a JOIN drawers d ON a.record_id = 'drawer/' || d.id "
        "ORDER BY a.seq DESC LIMIT 100000"
    )
    floor = format_instant(now.fromtimestamp(since, tz=now.tzinfo))
    for at, drawer_id, meta in context.connection.execute(query):
        if at < floor:
            break
        try:  # a rate seed, not a verdict: a meta that does not open or parse seeds nothing
            writer = json.loads(open_meta(context, str(drawer_id), bytes(meta))).get("added_by")
        except (ValueError, AttributeError, IntegrityFailure):
            continue
        if isinstance(writer, str):
            moments.setdefault(writer, []).append(datetime.fromisoformat(at.replace("Z", "+00:00")).timestamp())
    for writer, seen in moments.items():
        screen.seed(writer, seen)


def _build_gate(context: VaultContext) -> AdmissionGate:
    gate = AdmissionGate(AdmissionPolicy.from_env(), clock=lambda: context.clock().timestamp())
    _seed(gate, context)
    return gate


def gate_for(store: object) -> AdmissionGate:
    """This handle's gate: built from ``UNDERCROFT_ADMISSION*`` on first use and seeded from history."""
    context = context_of(store)
    return per_handle(context, "admission-gate", lambda: _build_gate(context))


def install_gate(
    store: object, gate: AdmissionGate | AdmissionPolicy, *, seed: bool = True, advisor: Advisor | None = None
) -> AdmissionGate:
    """Install a gate (or build one from `policy` on the vault clock) for this handle; seeded unless told not to.

    ``advisor`` is the tier-2 advisor the composition root built for a `policy` (UNDERCROFT_ADMISSION_LLM=advisory).
    """
    context = context_of(store)
    if isinstance(gate, AdmissionPolicy):
        gate = AdmissionGate(gate, advisor=advisor, clock=lambda: context.clock().timestamp())
    elif advisor is not None:
        raise InvalidInput("an advisor is installed with a policy, not beside a built gate")
    if seed:
        _seed(gate, context)
    set_per_handle(context, "admission-gate", gate)
    return gate


def _lp(data: bytes) -> bytes:
    return len(data).to_bytes(4, "big") + data


def _slot_index(blind: BlindIndex, intended_id: str, content: str) -> int:
    digest = blind.provenance_fingerprint(_SLOT_DOMAIN + _lp(intended_id.encode()) + content.encode("utf-8"))
    return int.from_bytes(digest[:6], "big")  # 48 bits: a collision needs ~16M distinct texts for one target


def destination_digest(context: VaultContext, blind: BlindIndex, intended_id: str) -> bytes:
    """A keyed digest of what `intended_id` holds now: a live row's tag, a tombstone's tag, or absence."""
    connection = context.connection
    row = connection.execute("SELECT tag FROM drawers WHERE id = ?", (intended_id,)).fetchone()
    if row is not None:
        state = b"live\x00" + bytes(row[0])
    else:
        gone = connection.execute("SELECT tag FROM tombstones WHERE drawer_id = ?", (intended_id,)).fetchone()
        state = b"absent" if gone is None else b"gone\x00" + bytes(gone[0])
    return blind.provenance_fingerprint(_DEST_DOMAIN + _lp(intended_id.encode()) + state)


def queue_tag(keys: VaultKeys, entry: Diversion | QueueEntry, destination: bytes, queued_at: str) -> bytes:
    """The queue row's tag: HMAC(mac, ``quarantine/<slot>`` ␟ the row's canonical bytes)."""
    slot = entry.slot if isinstance(entry, Diversion) else entry.drawer_id
    signals = entry.signals if isinstance(entry, Diversion) else _signals_blob(entry)
    body = canonical_json(
        {
            "intended_id": entry.intended_id,
            "intended_wing": entry.intended_wing,
            "intended_room": entry.intended_room,
            "chunk_index": entry.chunk_index,
            "id_recipe": entry.id_recipe,
            "queued_at": queued_at,
            "screen": json.loads(signals),
        }
    )
    return compute_tag(keys, QUARANTINE_PREFIX + slot, body, destination)


def _signals_blob(entry: QueueEntry) -> bytes:
    return canonical_json({"signals": list(entry.signals), "findings": list(entry.findings)})


def divert(
    context: VaultContext, batch: list[object], *, gate: AdmissionGate | None = None
) -> tuple[list[object], Callable[[str], list[AuditRow]] | None, dict[str, Diverted]]:
    """Screen `batch` (DrawerWrite items): flagged drawers move to their slot in the quarantine wing.

    Returns the batch to write, the hook the write transaction runs (queue rows + records), and
    slot → `Diverted` (the intended id and the signal codes: the live stream's ``drawer-quarantined`` frame).
    With the screen off: the batch itself, no hook, no mapping (byte-identical).
    """
    gate = gate or gate_for(context)
    if not gate.policy.screening:
        return batch, None, {}
    out: list[object] = []
    diversions: list[Diversion] = []
    for item in batch:
        assert isinstance(item, DrawerWrite)
        drawer = item.drawer
        decision: Decision = gate.screen(drawer.content, wing=drawer.wing, room=drawer.room, added_by=drawer.added_by)
        if not decision.flagged:
            out.append(item)
            continue
        row = context.connection.execute("SELECT value FROM meta WHERE key = 'blind_secret'").fetchone()
        blind = BlindIndex.open_sealed(context.sealer, bytes(row[0]))
        try:
            index = _slot_index(blind, drawer.id, drawer.content)
        finally:
            blind.wipe()
        slot = context.drawer_ids.append(
            QUARANTINE_WING, drawer.room, index, normalize_version=drawer.normalize_version
        )
        moved = replace(
            drawer,
            id=slot,
            wing=QUARANTINE_WING,
            chunk_index=index,
            id_recipe=ID_RECIPE_APPEND,
            intended_wing=drawer.wing,
            intended_room=drawer.room,
        )
        out.append(DrawerWrite(moved, item.vector, item.tokens))  # a matrix is bound to the content, not the id
        signals = canonical_json(
            {"signals": [s.value for s in decision.signals], "findings": [f.to_metadata() for f in decision.findings]}
        )
        diversions.append(
            Diversion(slot, drawer.id, drawer.wing, drawer.room, drawer.chunk_index, drawer.id_recipe, signals)
        )
    if not diversions:
        return out, None, {}
    slots = [d.slot for d in diversions]
    if len(set(slots)) != len(slots):
        raise InvalidDrawer("two writes of one batch divert the same text to the same slot")

    def within(at: str) -> list[AuditRow]:
        records: list[AuditRow] = []
        row = context.connection.execute("SELECT value FROM meta WHERE key = 'blind_secret'").fetchone()
        blind = BlindIndex.open_sealed(context.sealer, bytes(row[0]))
        try:
            for diversion in diversions:
                destination = destination_digest(context, blind, diversion.intended_id)
                tag = queue_tag(context.keys, diversion, destination, at)
                inserted = context.connection.execute(
                    f"INSERT INTO {QUEUE_TABLE} ({_QUEUE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "  # noqa: S608
                    "ON CONFLICT (drawer_id) DO NOTHING",
                    (
                        diversion.slot,
                        diversion.intended_id,
                        *_at_rest(context, diversion),
                        destination,
                        at,
                        tag,
                    ),
                ).rowcount
                if inserted:  # equal text converges on the slot already queued
                    records.append(AuditRow(QUARANTINE_PREFIX + diversion.slot, tag, at))
        finally:
            blind.wipe()
        return records

    return out, within, {d.slot: Diverted(d.intended_id, _codes(d)) for d in diversions}


def _codes(diversion: Diversion) -> tuple[str, ...]:
    """The diversion's signal codes, sorted and unique (the findings' offsets stay in the queue row)."""
    return tuple(sorted(set(json.loads(diversion.signals)["signals"])))


def record_commits(context: VaultContext, writers: Sequence[str]) -> None:
    """After a screened commit: count each committed write (diverted ones too) toward its writer's rate."""
    gate = per_handle(context, "admission-gate", lambda: _build_gate(context))
    for writer in writers:
        gate.record(writer)


def _at_rest(context: VaultContext, diversion: Diversion) -> tuple[str, str, int, str, bytes]:
    """The row's (intended_wing, intended_room, chunk_index, id_recipe, signals) columns as stored.

    On a sealed vault's metadata the two names are blind values and the signals column is a blob sealed under
    ``queue/{slot}`` holding the signal codes, the findings' offsets and the two names."""
    if not context.metadata_sealed:
        return (
            diversion.intended_wing,
            diversion.intended_room,
            diversion.chunk_index,
            diversion.id_recipe,
            diversion.signals,
        )
    document = json.loads(diversion.signals)
    document.update(intended_wing=diversion.intended_wing, intended_room=diversion.intended_room)
    return (
        str(stored_label(context, "wing", diversion.intended_wing)),
        str(stored_label(context, "room", diversion.intended_room)),
        diversion.chunk_index,
        diversion.id_recipe,
        context.sealer.seal(Domain.queue_meta(diversion.slot), canonical_json(document)),
    )


def _opened(context: VaultContext, row: tuple[Any, ...]) -> tuple[Any, ...]:
    """A stored queue row with its sealed detail opened: the names and signals as a clear row holds them.

    A blob that does not open, or names that do not blind to the stored columns, is a `ValueError` (the
    caller's finding: the row fails its tag)."""
    if not context.metadata_sealed:
        return row
    slot, wing, room, signals = str(row[0]), str(row[2]), str(row[3]), bytes(row[6])
    try:
        document = json.loads(context.sealer.open(Domain.queue_meta(slot), signals))
    except IntegrityFailure:
        raise ValueError(f"queue row {slot}: its sealed detail does not open") from None
    names = (document.pop("intended_wing", None), document.pop("intended_room", None))
    if not all(isinstance(name, str) for name in names) or (
        stored_label(context, "wing", names[0]),
        stored_label(context, "room", names[1]),
    ) != (wing, room):
        raise ValueError(f"queue row {slot}: its label columns disagree with its sealed detail")
    return (*row[:2], *names, *row[4:6], canonical_json(document), *row[7:])


def _entry(row: tuple[Any, ...]) -> QueueEntry:
    (slot, intended_id, wing, room, index, recipe, signals, destination, queued_at, tag) = row
    document = json.loads(bytes(signals))
    return QueueEntry(
        str(slot),
        str(intended_id),
        str(wing),
        str(room),
        int(index),
        str(recipe),
        tuple(document.get("signals", ())),
        tuple(document.get("findings", ())),
        bytes(destination),
        str(queued_at),
        bytes(tag),
    )


def _findings(context: VaultContext, rows: Sequence[AuditRow]) -> tuple[list[QueueEntry], list[str]]:
    """Verified queue entries and failures, against the audit rows (positions decide newest)."""
    newest: dict[str, tuple[int, AuditRow]] = {}
    for position, record in enumerate(rows):
        if record.record_id.startswith((QUARANTINE_PREFIX, RULING_PREFIX)):
            newest[record.record_id] = (position, record)
    connection = context.connection
    good: list[QueueEntry] = []
    failures: list[str] = []
    present: set[str] = set()
    for raw in connection.execute(f"SELECT {_QUEUE_COLUMNS} FROM {QUEUE_TABLE} ORDER BY queued_at, drawer_id"):  # noqa: S608
        try:
            clear = _opened(context, tuple(raw))
            entry = _entry(clear)
            expected = queue_tag(context.keys, entry, entry.destination, entry.queued_at)
            good_tag = constant_time_equal(expected, entry.tag)
            if good_tag and _signals_blob(entry) != bytes(clear[6]):
                good_tag = False
        except (ValueError, TypeError, AttributeError):
            entry, good_tag = None, False
        slot = str(raw[0])
        present.add(slot)
        if entry is None or not good_tag:
            failures.append(f"queue row {slot} fails its HMAC tag")
            continue
        latest = newest.get(QUARANTINE_PREFIX + slot)
        if latest is None or not constant_time_equal(latest[1].tag, entry.tag):
            failures.append(f"queue row {slot} is not its newest quarantine record")
            continue
        resident = connection.execute("SELECT wing FROM drawers WHERE id = ?", (slot,)).fetchone()
        if resident is None or resident[0] != stored_label(context, "wing", QUARANTINE_WING):
            failures.append(f"queue row {slot} has no resident in {QUARANTINE_WING!r}")
            continue
        good.append(entry)
    for label, (position, _record) in sorted(newest.items()):
        if not label.startswith(QUARANTINE_PREFIX):
            continue
        slot = label[len(QUARANTINE_PREFIX) :]
        ruling = newest.get(RULING_PREFIX + slot)
        if slot not in present and (ruling is None or ruling[0] < position):
            failures.append(f"queue row {slot} was removed without a ruling")
    quarantine = stored_label(context, "wing", QUARANTINE_WING)
    for (slot,) in connection.execute("SELECT id FROM drawers WHERE wing = ?", (quarantine,)):
        if slot not in present:
            failures.append(f"quarantined drawer {slot} has no queue row")
    return good, failures


def read_queue(context: VaultContext, rows: Sequence[AuditRow]) -> list[QueueEntry]:
    """The verified queue (oldest first); `QueueTampered` on any finding."""
    good, failures = _findings(context, rows)
    if failures:
        raise QueueTampered(
            f"vault {context.vault_id!r}: {failures[0]}"
            + (f" (and {len(failures) - 1} more)" if len(failures) > 1 else "")
            + " (run undercroft verify)"
        )
    return good


def check_queue_rows(context: VaultContext, rows: Sequence[AuditRow]) -> list[str]:
    """The verify leg: every queue row against its record, the wing against the queue (failures)."""
    return _findings(context, rows)[1]


def reseal_queue_rows(rekeying: Rekeying) -> list[tuple[str, bytes]]:
    """Rotation's reseal hook for ``admission_queue`` (``"undercroft_store.governance.quarantine:reseal_queue_rows"``).

    Inside the rotation's transaction: each row verified under the old keys (`QueueTampered` refuses the
    rotation), re-tagged under the new ones; returns ``(quarantine/<slot>, new tag)`` for rotation to
    append. The destination digest is keyed with the blind-index secret, which rotation never changes.
    """
    connection = rekeying.connection
    echoed: list[tuple[str, bytes]] = []
    rows = connection.execute(f"SELECT {_QUEUE_COLUMNS} FROM {QUEUE_TABLE} ORDER BY drawer_id").fetchall()  # noqa: S608
    for raw in rows:
        row, signals = tuple(raw), bytes(raw[6])
        if rekeying.metadata_sealed:  # the sealed detail: opened under the old keys, re-sealed under the new
            row, signals = _resealed(rekeying.old_sealer, rekeying.new_sealer, row)
        entry = _entry(row)
        old = queue_tag(rekeying.old_keys, entry, entry.destination, entry.queued_at)
        if not constant_time_equal(old, entry.tag):
            raise QueueTampered(
                f"queue row {entry.drawer_id} fails its HMAC tag; rotation refused (run undercroft verify)"
            )
        new_tag = queue_tag(rekeying.new_keys, entry, entry.destination, entry.queued_at)
        connection.execute(
            f"UPDATE {QUEUE_TABLE} SET tag = ?, signals = ? WHERE drawer_id = ?",  # noqa: S608
            (new_tag, signals, entry.drawer_id),
        )
        echoed.append((QUARANTINE_PREFIX + entry.drawer_id, new_tag))
    return echoed


def _resealed(old: Sealer, new: Sealer, row: tuple[Any, ...]) -> tuple[tuple[Any, ...], bytes]:
    """Rotation: a sealed queue row as a clear row (names from its detail) and its detail re-sealed under `new`."""
    slot = str(row[0])
    try:
        plain = old.open(Domain.queue_meta(slot), bytes(row[6]))
    except IntegrityFailure:
        raise QueueTampered(f"queue row {slot}: its sealed detail does not open; rotation refused") from None
    document = json.loads(plain)
    wing, room = document.pop("intended_wing", None), document.pop("intended_room", None)
    return (*row[:2], str(wing), str(room), *row[4:6], canonical_json(document), *row[7:]), new.seal(
        Domain.queue_meta(slot), plain
    )
