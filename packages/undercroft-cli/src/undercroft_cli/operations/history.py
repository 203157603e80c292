"""The operator's view of the audit trail, paged: what ``GET /v1/vaults/{id}/history`` and ``undercroft history``
answer, said once.

Every namespace the chain holds (the operator plane's too), in chain order, labels, times and heights only —
never content. MCP's ``undercroft_history`` is a different view by design (the agent's own namespaces, newest
first: ``mcp/tools/history.py``), not a drift from this one. The store replays the chain before it answers:
a trail that does not reproduce its committed head raises ``HistoryRefused`` (an integrity verdict).
"""

from __future__ import annotations

from typing import Any

from undercroft_store.integrity.history import history
from undercroft_store.store import VaultStore

__all__ = ["HISTORY_PAGE", "history_page"]

#: The page size when none is asked for.
HISTORY_PAGE = 100


def history_page(
    store: VaultStore, *, subject: str | None = None, limit: int | None = None, offset: int | None = None
) -> dict[str, Any]:
    """``{records: [{label, at, height}], total, next_offset}`` for one page of the trail (oldest first), only
    the records naming drawer ``subject`` when given (an id that is not one raises ``InvalidDrawer``)."""
    limit = limit or HISTORY_PAGE
    offset = offset or 0
    records = history(store, drawer_id=subject)
    page = records[offset : offset + limit]
    following = offset + limit if offset + limit < len(records) else None
    return {
        "records": [{"label": r.label, "at": r.at, "height": r.height} for r in page],
        "total": len(records),
        "next_offset": following,
    }
