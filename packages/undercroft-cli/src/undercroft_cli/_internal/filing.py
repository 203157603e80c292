"""Executing drawer plans through the store's choke point, in batches, counting what each write did."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime

from undercroft_core import Drawer
from undercroft_core.errors import InvalidInput
from undercroft_core.ids import ID_RECIPE_SOURCE, DrawerIds
from undercroft_store import MAX_CONTENT_BYTES, DrawerWrite, Screen, VaultStore

from undercroft_cli._internal.meter import Progress
from undercroft_cli.mining.plan import DrawerPlan

__all__ = ["BATCH_SIZE", "FilingReport", "file_plans", "utc_now"]

#: Drawers per store transaction ("hundreds per transaction": one commit, one anchor write per batch).
BATCH_SIZE = 500


def utc_now() -> str:
    """The wall clock as the store spells instants (``YYYY-MM-DDTHH:MM:SS.ffffffZ``)."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass
class FilingReport:
    """Counts by write outcome, plus drawers refused before the store and diversions (aimed id, landed id)."""

    created: int = 0
    updated: int = 0
    unchanged: int = 0
    quarantined: int = 0
    refused: list[tuple[str, str]] = field(default_factory=list)
    diverted: list[tuple[str, str]] = field(default_factory=list)

    def to_dict(self) -> dict[str, object]:
        """JSON-ready counts."""
        return {
            "created": self.created,
            "updated": self.updated,
            "unchanged": self.unchanged,
            "quarantined": self.quarantined,
            "refused": [{"id": i, "reason": r} for i, r in self.refused],
            "diverted": [{"aimed": a, "landed": b} for a, b in self.diverted],
        }


def _drawer(plan: DrawerPlan, ids: DrawerIds, added_by: str, filed_at: str) -> Drawer:
    return Drawer(
        id=plan.id_in(ids),
        content=plan.content,
        wing=plan.wing,
        room=plan.room,
        chunk_index=plan.chunk_index,
        id_recipe=ID_RECIPE_SOURCE,
        added_by=added_by,
        filed_at=filed_at,
        source_file=plan.source_file,
        content_date=plan.content_date,
        session=plan.session,
        kind=plan.kind,
    )


def file_plans(
    store: VaultStore,
    plans: Sequence[DrawerPlan],
    *,
    added_by: str,
    clock: Callable[[], str] = utc_now,
    batch_size: int = BATCH_SIZE,
    bar: Progress | None = None,
) -> FilingReport:
    """Write ``plans`` through ``store.write(..., screening=Screen())`` in batches; count every outcome.

    A plan the store would refuse for its own shape (content over 64 KiB, a label the drawer refuses) is
    counted in ``refused`` rather than failing the whole batch; everything else the store decides.
    """
    report = FilingReport()
    filed_at = clock()
    ids = store.drawer_ids  # the vault's own id recipe: re-mining a file updates the same drawers in place
    batch: list[DrawerWrite] = []

    def flush() -> None:
        if not batch:
            return
        for item, result in zip(batch, store.write(batch, screening=Screen()), strict=True):
            if result.outcome == "created":
                report.created += 1
            elif result.outcome == "updated":
                report.updated += 1
            elif result.outcome == "deduped":
                report.unchanged += 1
            else:
                report.quarantined += 1
                report.diverted.append((item.drawer.id, result.id))
        if bar is not None:
            bar.update(len(batch))
        batch.clear()

    for plan in plans:
        if len(plan.content.encode("utf-8")) > MAX_CONTENT_BYTES:
            report.refused.append((plan.id_in(ids), f"{plan.source_file}: content over {MAX_CONTENT_BYTES} bytes"))
            if bar is not None:
                bar.update(1)
            continue
        try:
            batch.append(DrawerWrite(_drawer(plan, ids, added_by, filed_at)))
        except InvalidInput as error:
            report.refused.append((plan.id_in(ids), f"{plan.source_file}: {error}"))
            if bar is not None:
                bar.update(1)
            continue
        if len(batch) >= batch_size:
            flush()
    flush()
    return report
