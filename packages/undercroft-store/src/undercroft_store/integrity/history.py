"""A read-only view of the audit trail: each record's label, time and height — never content, never a tag.

`history(store, drawer_id=…, prefixes=…)` decides from audit labels, so it reads them through the one label
guard (`undercroft_store.kernel.label_guard`) like every other label-deciding reader: the handle's guard syncs, then
its `replayed_rows` hands back the whole trail checked against the replayed head, all in one snapshot with
the quarantine residency it filters by. A label is shown only from a trail that reproduces the committed head
(an edited, removed, relabelled or reordered row refuses with `HistoryRefused` — a `LabelGuardRefused`, so
also ``ChainBroken`` and an integrity verdict). Labels are the store's own (``drawer/<id>``, ``delete/<id>``,
``tunnel/<id>``, ``kg/<id>`` …); the caller chooses which namespaces it may show. History is not a read door
(labels, times and heights, never content): it appends no ``read/`` record.

By default, records naming a drawer resident in the quarantine wing (``drawer/<id>``, ``delete/<id>``) are
left out: which of the vault's ids sit in the review queue is itself operator-only. Residual, stated: a
drawer that left the queue by a ruling is no longer resident, so its earlier labels are shown like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from undercroft_core.ids import validate_drawer_id
from undercroft_core.vocabulary import QUARANTINE_WING

from undercroft_store.errors import InvalidDrawer
from undercroft_store.kernel._internal.meta_at_rest import stored_label
from undercroft_store.kernel._internal.structure import guard_scope_index
from undercroft_store.kernel._internal.transaction import readable
from undercroft_store.kernel.label_guard import LabelGuardRefused, label_guard

if TYPE_CHECKING:
    from collections.abc import Iterable

    from undercroft_store.store import VaultStore

__all__ = ["DRAWER_LABELS", "HistoryRecord", "HistoryRefused", "history"]

#: The label namespaces whose subject is a drawer id.
DRAWER_LABELS = ("drawer/", "delete/")


class HistoryRefused(LabelGuardRefused):
    """The audit trail does not replay to the committed head: no label is shown from it (exit 2)."""


@dataclass(frozen=True, slots=True)
class HistoryRecord:
    """One audit record: its label, when it was appended, and its 1-based height in the chain."""

    label: str
    at: str
    height: int

    @property
    def subject(self) -> str:
        """What the label names (the part after the namespace), e.g. a drawer id."""
        return self.label.partition("/")[2]


def history(
    store: VaultStore,
    *,
    drawer_id: str | None = None,
    prefixes: Iterable[str] | None = None,
    include_quarantine: bool = False,
) -> list[HistoryRecord]:
    """The verified trail in chain order, optionally only records naming `drawer_id` or under `prefixes`."""
    context = readable(store._context)
    if drawer_id is not None:
        try:
            validate_drawer_id(drawer_id)
        except (TypeError, ValueError) as error:
            raise InvalidDrawer(str(error)) from None
    wanted = None if prefixes is None else tuple(prefixes)
    connection = context.connection
    own = not connection.in_transaction  # one snapshot: the guard's sync, the rows and the residency
    if own:
        connection.execute("BEGIN")
    try:
        try:
            rows = label_guard(context).replayed_rows()
        except LabelGuardRefused as refused:
            raise HistoryRefused(
                f"vault {context.vault_id!r}: the audit trail does not reproduce the committed head; "
                "no label is shown from it (run undercroft verify)"
            ) from refused
        held: set[str] = set()
        if not include_quarantine:
            guard_scope_index(context)  # a short answer here would show the queue's labels
            sql = "SELECT id FROM drawers WHERE wing = ?"
            held = {str(r[0]) for r in connection.execute(sql, (stored_label(context, "wing", QUARANTINE_WING),))}
    finally:
        if own:
            connection.execute("COMMIT")
    records: list[HistoryRecord] = []
    for height, row in enumerate(rows, start=1):
        record = HistoryRecord(row.record_id, row.at, height)
        if wanted is not None and not record.label.startswith(wanted):
            continue
        if drawer_id is not None and record.subject != drawer_id:
            continue
        if held and record.label.startswith(DRAWER_LABELS) and record.subject in held:
            continue
        records.append(record)
    return records
