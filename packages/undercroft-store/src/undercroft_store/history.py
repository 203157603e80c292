"""A read-only view of the audit trail: each record's label, time and height — never content, never a tag.

`history(store, drawer_id=…, prefixes=…)` replays the whole chain under this handle's keys before it answers,
so a label is shown only from a trail that reproduces the committed head (an edited, removed or reordered
row refuses with `HistoryRefused`, an integrity verdict). Labels are the store's own (``drawer/<id>``,
``delete/<id>``, ``tunnel/<id>``, ``kg/<id>`` …); the caller chooses which namespaces it may show.

By default, records naming a drawer resident in the quarantine wing (``drawer/<id>``, ``delete/<id>``) are
left out: which of the vault's ids sit in the review queue is itself operator-only. Residual, stated: a
drawer that left the queue by a ruling is no longer resident, so its earlier labels are shown like any other.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from undercroft_core.ids import validate_drawer_id
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_vault import constant_time_equal, replay

from undercroft_store._internal.opening import read_audit_rows
from undercroft_store.errors import InvalidDrawer, StoreIntegrityError
from undercroft_store.kg._internal.txn import readable

if TYPE_CHECKING:
    from collections.abc import Iterable

    from undercroft_store.store import VaultStore

__all__ = ["DRAWER_LABELS", "HistoryRecord", "HistoryRefused", "history"]

#: The label namespaces whose subject is a drawer id.
DRAWER_LABELS = ("drawer/", "delete/")


class HistoryRefused(StoreIntegrityError):
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
    rows = read_audit_rows(connection)
    stored = connection.execute("SELECT head, height FROM chain_meta WHERE id = 1").fetchone()
    if (
        stored is None
        or len(rows) != int(stored[1])
        or not constant_time_equal(replay(context.keys, rows), bytes(stored[0]))
    ):
        raise HistoryRefused(
            f"vault {context.vault_id!r}: the audit trail does not reproduce the committed head; "
            "no label is shown from it (run undercroft verify)"
        )
    held: set[str] = set()
    if not include_quarantine:
        held = {str(r[0]) for r in connection.execute("SELECT id FROM drawers WHERE wing = ?", (QUARANTINE_WING,))}
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
