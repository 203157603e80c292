"""Typed results of the memory-plane /v1 routes: stats, drawers, the knowledge graph, tunnels, diaries, the
session context, and the remote-index status. Nested records stay the engine's JSON objects (``Rows``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from undercroft_net.engine.models import Reply

__all__ = [
    "AuthorityChange",
    "Canonical",
    "Closets",
    "DedupReport",
    "Deleted",
    "DiaryAgents",
    "DiaryEntries",
    "DiaryWritten",
    "Drawer",
    "DrawerPage",
    "DuplicateCheck",
    "EntityPage",
    "Facts",
    "Hallways",
    "IndexStatus",
    "KgStats",
    "ReceiptIntegrity",
    "ReceiptReport",
    "SourceDeletion",
    "StatsHistory",
    "Supersessions",
    "Taxonomy",
    "Traversal",
    "TunnelCreated",
    "TunnelDrawers",
    "Tunnels",
    "VaultStats",
    "WakeUp",
]

Json = dict[str, Any]
Rows = list[dict[str, Any]]


@dataclass(frozen=True)
class Deleted(Reply):
    """``DELETE`` of a vault, a drawer or a tunnel: what was deleted: its id."""

    deleted: str
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class VaultStats(Reply):
    """``GET …/stats``: counts, chain height and head, size, posture, unhealed, failures (``kg``: the
    graph's counts)."""

    vault: str
    level: str
    read_only: bool
    drawers: int
    quarantined: int
    wings: int
    rooms: int
    chain_records: int
    writes: int
    head: str
    db_bytes: int
    embedder: str
    embed_failures: int
    unhealed: list[str]
    chain_ceiling: int | None
    chain_over_ceiling: bool
    chain_replays: int
    heals: list[Any]
    records: int
    kg: Json
    tunnels: int
    codebooks: Json | None
    rerank_failures: int
    late_failures: int
    #: Drawers holding a stored ColBERT token matrix (0 without the late stage).
    token_matrices: int
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class StatsHistory(Reply):
    """``GET …/stats/history``: the sampler's ring for the vault, oldest first (each sample is metadata only:
    counts, sizes and the chain height, never content), the sampling interval and the ring's capacity."""

    vault: str
    interval_ms: int
    capacity: int
    samples: Rows
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Drawer(Reply):
    """``GET …/drawers/{drawer_id}`` (its ``drawer`` object): one whole drawer: its exact words, where it
    lives, and its provenance."""

    id: str
    wing: str
    room: str
    kind: str | None
    content_date: str | None
    filed_at: str
    updated_at: str | None
    added_by: str | None
    source_file: str | None
    supersedes: str | None
    agent: str | None
    channel: str | None
    session: str | None
    content: str
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class DrawerPage(Reply):
    """``GET …/drawers``: a page of drawer summaries and the offset of the next page."""

    drawers: Rows
    offset: int
    next_offset: int | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Taxonomy(Reply):
    """``GET …/taxonomy``: wing → room → drawer count (the review queue's count alone)."""

    taxonomy: Json
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class DuplicateCheck(Reply):
    """``POST …/drawers/check-duplicate``: whether the text is already filed, how close, and the nearest drawer."""

    duplicate: bool
    exact: bool
    similarity: float | None
    threshold: float
    drawer: Json | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class SourceDeletion(Reply):
    """``DELETE …/drawers?source=``: every drawer mined from one file: what matched and how many were deleted."""

    source_file: str
    dry_run: bool
    matched: list[Any]
    deleted: int
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class DedupReport(Reply):
    """``POST …/dedup``: exact-duplicate groups, and how many were removed (none on a dry run)."""

    dry_run: bool
    groups: list[Any]
    removed: int
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class KgStats(Reply):
    """``GET …/kg/stats``: entity, fact, active, closed and predicate counts."""

    entities: int
    facts: int
    active: int
    closed: int
    predicates: int
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class EntityPage(Reply):
    """``GET …/kg/entities``: a page of entities."""

    entities: Rows
    offset: int
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Facts(Reply):
    """``GET …/kg/query``, ``…/kg/timeline``, ``…/kg/rel``: facts with their validity windows, grounding
    and receipts."""

    facts: Rows
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class ReceiptReport(Reply):
    """``GET …/kg/receipts``: every cited fact's receipt verdict (``verified | source_changed | dangling |
    tampered``), the counts per verdict, and how many facts cite nothing."""

    counts: dict[str, int]
    uncited: int
    receipts: Rows
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class ReceiptIntegrity(Reply):
    """``GET …/kg/receipts?integrity_only=true``: one HMAC per fact: clean or not, and how many were checked."""

    ok: bool
    checked: int
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Canonical(Reply):
    """``GET …/kg/canonical/{key}``: the one active approved fact for a key, or ``None``: no declared truth
    exists."""

    fact: Json | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class AuthorityChange(Reply):
    """``POST …/kg/authority``: the fact as declared now, and the fact it displaced as canonical (or ``None``)."""

    fact: Json
    displaced: Json | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Supersessions(Reply):
    """``GET …/supersessions``: drawer supersession links and their verdicts."""

    supersessions: Rows
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class TunnelCreated(Reply):
    """``POST …/tunnels``: the new tunnel."""

    tunnel: Json
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Tunnels(Reply):
    """``GET …/tunnels``: the tunnels."""

    tunnels: Rows
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Traversal(Reply):
    """``GET …/tunnels/traverse``: the wings reached, each with its hop count and the wing it came through."""

    reached: Rows
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class TunnelDrawers(Reply):
    """``GET …/tunnels/{tid}/drawers``: drawers from the far wing of a tunnel."""

    drawers: Rows
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class WakeUp(Reply):
    """``GET …/wake-up``: recent drawers for a session's start."""

    memories: Rows
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class DiaryWritten(Reply):
    """``POST …/diary``: where the entry was filed."""

    results: Rows
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class DiaryEntries(Reply):
    """``GET …/diary``: one agent's entries, newest first."""

    agent: str
    entries: Rows
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class DiaryAgents(Reply):
    """``GET …/diary/agents``: who has written a diary, with entry counts."""

    agents: Json
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Closets(Reply):
    """``GET …/closets``: a page of the closet index (derived from drawer words: untrusted data)."""

    closets: Rows
    total: int
    next_offset: int | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Hallways(Reply):
    """``GET …/hallways``: a page of entity co-occurrences."""

    hallways: Rows
    total: int
    next_offset: int | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class IndexStatus(Reply):
    """``GET …/index/status?backend=``: the remote mirror against the local counts (``remote_records`` ``None``:
    no mirror exists)."""

    vault: str
    backend: str
    destination: str
    collection: str
    exists: bool
    local_records: int
    remote_records: int | None
    space: str
    remote_space: str | None
    space_matches: bool | None
    in_step: bool | None
    raw: dict[str, Any] = field(repr=False, compare=False)
