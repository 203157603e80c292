"""``undercroft_history``: the agent-scoped view of the audit trail — labels, times and heights, never content.

Only the agent's own namespaces are shown (drawers filed and deleted, tunnels, knowledge-graph facts and
entities, supersessions); the operator namespaces — admission queue and rulings, trust, retention,
forgetting, read and egress audit, rotation — are fenced out, and so are the records of any drawer resident
in the quarantine wing. The store replays the whole chain before it answers, so a trail that does not
reproduce its committed head is an integrity verdict rather than a list.
"""

from __future__ import annotations

import json

from undercroft_store.integrity.history import history

from undercroft_cli.mcp.arguments import Arguments
from undercroft_cli.mcp.tools.base import ToolSession, ToolSpec, integer, string

__all__ = ["AGENT_NAMESPACES", "HISTORY_TOOLS"]

AGENT_NAMESPACES: tuple[str, ...] = ("drawer/", "delete/", "tunnel/", "tunneldel/", "kg/", "kgent/", "supersession/")
"""The audit-label namespaces an agent may read; everything else on the chain is operator scope."""


def _history(session: ToolSession, args: Arguments) -> str:
    limit = args.integer("limit", default=50, low=1, high=500) or 50
    offset = args.integer("offset", default=0, low=0, high=10_000_000) or 0
    records = history(session.store, drawer_id=args.text("drawer_id"), prefixes=AGENT_NAMESPACES)
    newest_first = records[::-1]
    page = newest_first[offset : offset + limit]
    return json.dumps(
        {
            "records": [{"height": r.height, "at": r.at, "label": r.label} for r in page],
            "total": len(records),
            "next_offset": offset + len(page) if offset + len(page) < len(records) else None,
        },
        indent=2,
    )


HISTORY_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "undercroft_history",
        "The tamper-evident audit trail of your memory, newest first: each record's label (drawer/<id>, "
        "delete/<id>, tunnel/…, kg/…), time and chain height — never content. Optionally one drawer's records.",
        {
            "drawer_id": string("only the records naming this drawer (optional)"),
            "limit": integer("page size (1-500, default 50)"),
            "offset": integer("records to skip (newest first)"),
        },
        _history,
    ),
)
