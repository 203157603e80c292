"""``undercroft_history`` and ``undercroft_supersessions``: the agent-scoped view of the audit trail — labels,
times and heights, never content — and the supersession links with their verdicts (ids only).

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
from undercroft_cli.operations.supersessions import SUPERSESSION_SCHEMA, supersession_records

__all__ = ["AGENT_NAMESPACES", "HISTORY_TOOLS"]

AGENT_NAMESPACES: tuple[str, ...] = ("drawer/", "delete/", "tunnel/", "tunneldel/", "kg/", "kgent/", "supersession/")
"""The audit-label namespaces an agent may read; everything else on the chain is operator scope."""


def _history(session: ToolSession, args: Arguments) -> str:
    limit = args.integer("limit") or 50
    offset = args.integer("offset") or 0
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


def _supersessions(session: ToolSession, args: Arguments) -> str:
    return json.dumps(supersession_records(session.store), indent=2)


HISTORY_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "undercroft_history",
        "The tamper-evident audit trail of your memory, newest first: each record's label (drawer/<id>, "
        "delete/<id>, tunnel/…, kg/…), time and chain height — never content. Optionally one drawer's records.",
        {
            "drawer_id": string("only the records naming this drawer (optional)"),
            "limit": integer("page size", minimum=1, maximum=500, default=50),
            "offset": integer("records to skip (newest first)", minimum=0, maximum=10_000_000, default=0),
        },
        _history,
        output={
            "records": {"type": "array", "items": {"type": "object"}, "description": "height, at, label"},
            "total": {"type": "integer"},
            "next_offset": {"type": ["integer", "null"]},
        },
    ),
    ToolSpec(
        "undercroft_supersessions",
        "Every supersession link (drawer_id replaced superseded_id at at), oldest first, each with its verdict "
        "recomputed now from the keyed receipt over the replaced words: verified, superseded_changed, "
        "superseded_gone or tampered. Ids and verdicts only, never content.",
        {},
        _supersessions,
        output={"supersessions": {"type": "array", "items": SUPERSESSION_SCHEMA}},
    ),
)
