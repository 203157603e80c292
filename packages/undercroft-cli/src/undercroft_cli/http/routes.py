"""The /v1 route table as code: every route of the multi-tenant surface, its access class and what it waits for.

The table is counted against the live router in both directions by the tests (a route served without a line
fails, and a line the router does not serve fails). ``READ_POSTS`` is the closed list of non-GET routes a
``--read-only`` server still serves; the gate in front of dispatch refuses every other non-GET, so a route added
later is refused until someone classifies it here. A route whose capability belongs to a later issue is in the
table with ``pending`` set: it answers 501 with a body naming what is missing, never a stub result.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["PENDING_ROUTES", "READ_POSTS", "ROUTES", "UNGATED", "Route", "path_pattern", "route_key"]


@dataclass(frozen=True, slots=True)
class Route:
    """One /v1 route: method, path template (``{id}`` is the vault), a one-line summary, what it waits for."""

    method: str
    path: str
    summary: str
    pending: str | None = None

    @property
    def key(self) -> tuple[str, str]:
        """``(method, path)``: the route's identity."""
        return (self.method, self.path)

    @property
    def is_read(self) -> bool:
        """True when a ``--read-only`` server serves it: every GET, and the four POSTs named in ``READ_POSTS``."""
        return self.method == "GET" or self.key in READ_POSTS


_V = "/v1/vaults/{id}"

ROUTES: tuple[Route, ...] = (
    # lifecycle
    Route("POST", "/v1/vaults", "create a vault {id, level?, embedder?}"),
    Route("GET", "/v1/vaults", "list vault ids"),
    Route("DELETE", _V, "delete a vault (409 for the --vault vault)"),
    # read / write
    Route("GET", f"{_V}/stats", "counts, chain height, head, posture, unhealed, failures"),
    Route("GET", f"{_V}/stats/history", "stats sample ring buffer ?window= (501 without the telemetry extra)"),
    Route("POST", f"{_V}/drawers", "save {text, wing?, room?}; 202 + quarantined when diverted"),
    Route("GET", f"{_V}/drawers", "paged drawer summaries ?wing=&room=&limit=&offset="),
    Route("GET", f"{_V}/drawers/{{drawer_id}}", "one full drawer"),
    Route("PUT", f"{_V}/drawers/{{drawer_id}}", "replace a drawer's content {text}"),
    Route("DELETE", f"{_V}/drawers/{{drawer_id}}", "delete one drawer"),
    Route("POST", f"{_V}/search", "hybrid search {query, wing?, room?, limit?, …}"),
    Route("GET", f"{_V}/taxonomy", "wing → room tree with counts"),
    Route("POST", f"{_V}/drawers/check-duplicate", "duplicate oracle {text} → {duplicate, id}"),
    Route("DELETE", f"{_V}/drawers", "delete every drawer from one source file ?source="),
    Route("POST", f"{_V}/dedup", "exact duplicates; a dry run unless apply:true"),
    # knowledge graph
    Route("GET", f"{_V}/kg/stats", "entity / fact / active / closed counts"),
    Route("GET", f"{_V}/kg/entities", "paged entities ?limit=&offset="),
    Route("GET", f"{_V}/kg/query", "facts about one entity ?entity=&direction=&as_of="),
    Route("GET", f"{_V}/kg/timeline", "temporal fact timeline ?entity="),
    Route("GET", f"{_V}/kg/receipts", "receipt verdicts per fact ?integrity_only="),
    Route("GET", f"{_V}/kg/canonical/{{key}}", "the one active approved fact for a key"),
    Route("POST", f"{_V}/kg/authority", "declare authority_class / review_state on a fact"),
    Route("GET", f"{_V}/supersessions", "drawer supersession links and their verdicts"),
    Route("GET", f"{_V}/kg/rel", "facts by predicate ?predicate=&as_of="),
    Route("GET", f"{_V}/index/status", "remote mirror vs local counts ?backend= (remote_records null: no mirror)"),
    # tunnels
    Route("POST", f"{_V}/tunnels", "connect two wings {from, to, label}"),
    Route("GET", f"{_V}/tunnels", "list tunnels ?wing="),
    Route("GET", f"{_V}/tunnels/traverse", "wings reachable from start ?start=&depth="),
    Route("DELETE", f"{_V}/tunnels/{{tid}}", "remove one tunnel"),
    Route("GET", f"{_V}/tunnels/{{tid}}/drawers", "drawers from the far wing of a tunnel ?limit="),
    # session context and diaries
    Route("GET", f"{_V}/wake-up", "recent drawers for session start ?wing="),
    Route("POST", f"{_V}/diary", "write a diary entry {agent, entry}; 202 if screened away"),
    Route("GET", f"{_V}/diary", "one agent's entries ?agent=&limit="),
    Route("GET", f"{_V}/diary/agents", "who has written a diary"),
    Route("GET", f"{_V}/closets", "the closet index ?wing="),
    Route("GET", f"{_V}/hallways", "entity co-occurrence ?wing=&top="),
    # operator plane
    Route("POST", f"{_V}/backups", "snapshot this vault (409 if it fails verify)"),
    Route("GET", f"{_V}/backups", "this vault's snapshots"),
    Route("POST", f"{_V}/backups/restore", "restore {name}; 400 for another vault's backup, 409 while in use"),
    Route("GET", f"{_V}/history", "the audit chain ?subject=&limit=&offset="),
    Route("GET", f"{_V}/trust", "wing trust assignments"),
    Route("POST", f"{_V}/trust", "assign one wing's trust {wing, trust}"),
    Route("GET", f"{_V}/admission", "the pending review queue"),
    Route("POST", f"{_V}/admission", "rule {id, verdict: allow|deny}"),
    Route("GET", f"{_V}/retention", "retention policies per wing/room"),
    Route("POST", f"{_V}/retention", "set one policy {wing, room?, max_age}"),
    Route("POST", f"{_V}/retention/sweep", "enforce the policies; returns the proof receipt"),
    Route("POST", f"{_V}/forget", "provable destruction {ids} + attestation"),
    Route("GET", f"{_V}/witness", "emit a witness of the audit chain"),
    Route("POST", f"{_V}/witness", "check a witness (body) against this vault"),
    Route("POST", f"{_V}/verify-forgetting", "check an attestation this vault issued (body)"),
    # maintenance / portability
    Route("POST", f"{_V}/refine", "LLM distillation into the knowledge graph {wing?, room?, limit?, dry_run?}"),
    Route("POST", f"{_V}/verify", "HMAC + audit-chain report"),
    Route("POST", f"{_V}/repair", "the remediation half of verify (a write)"),
    Route("POST", f"{_V}/anchor", "tighten the manifest rollback anchor (a write)"),
    Route("POST", f"{_V}/rotate", "re-key the vault (409 for the --vault vault)"),
    Route("GET", f"{_V}/export", "decrypted NDJSON, one egress record"),
    Route("POST", f"{_V}/import", "NDJSON body, at most 256 MiB (413 above)"),
)
"""Every /v1 route, in the documents' order."""

READ_POSTS: frozenset[tuple[str, str]] = frozenset(
    {
        ("POST", f"{_V}/search"),
        ("POST", f"{_V}/verify"),
        ("POST", f"{_V}/verify-forgetting"),
        ("POST", f"{_V}/witness"),
    }
)
"""The non-GET routes that only read: cost or a caller-supplied document, never effect."""

PENDING_ROUTES: dict[tuple[str, str], str] = {r.key: r.pending for r in ROUTES if r.pending is not None}
"""Routes that answer 501 until their capability lands, with what each waits for."""

UNGATED: tuple[tuple[str, str], ...] = (
    ("GET", "/healthz"),
    ("GET", "/ui"),
    ("GET", "/ui/console.js"),
    ("GET", "/ui/console.css"),
    ("GET", "/ui/runbook.html"),
    ("GET", "/monitor"),
    ("GET", "/monitor/monitor.js"),
    ("GET", "/monitor/monitor.css"),
)
"""Served in front of the bearer: they carry no secrets and read nothing (the console's and the monitor's pages
are static)."""


def route_key(method: str, path: str) -> tuple[str, str]:
    """The table key of a route."""
    return (method, path)


def path_pattern(path: str) -> re.Pattern[str]:
    """The concrete request paths a template matches (each ``{param}`` is one non-empty segment)."""
    return re.compile("^" + re.sub(r"\{[a-z_]+\}", "[^/]+", path) + "$")
