"""Typed results of the /v1 routes beyond the everyday five (`undercroft_net.engine.models`): one frozen dataclass
per reply shape, each built by ``from_json`` from exactly the fields the engine answers.

A test records every reply a live engine gives the client and checks both directions for each: every field of
the reply is a field of its model, and every field of the model is in the reply. Nested records (a drawer summary
in a page, a fact, a queue entry) stay the engine's JSON objects (``Rows``); ``raw`` keeps the whole reply.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from undercroft_net.engine.models import Reply

__all__ = [
    "AdmissionQueue",
    "Anchored",
    "AuthorityChange",
    "Backup",
    "Backups",
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
    "ForgetReceipt",
    "ForgettingVerdict",
    "Hallways",
    "HistoryPage",
    "ImportCounts",
    "KgStats",
    "ReceiptIntegrity",
    "ReceiptReport",
    "RepairReport",
    "Restored",
    "RetentionPolicies",
    "RetentionPolicy",
    "RotationReport",
    "Ruling",
    "SourceDeletion",
    "Supersessions",
    "SweepReport",
    "Taxonomy",
    "Traversal",
    "TrustAssigned",
    "TrustList",
    "TunnelCreated",
    "TunnelDrawers",
    "Tunnels",
    "VaultStats",
    "WakeUp",
    "Witness",
    "WitnessCheck",
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
class Backup(Reply):
    """``POST …/backups`` (and each of ``GET …/backups``): one verified snapshot: its id, where it is, and
    what it held."""

    vault: str
    id: str
    path: str
    created_at: str
    drawers: int
    chain_records: int
    head: str
    db_bytes: int
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Backups(Reply):
    """``GET …/backups``: this vault's snapshots, newest first."""

    backups: tuple[Backup, ...]
    raw: dict[str, Any] = field(repr=False, compare=False)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Backups:
        """The listing, each snapshot a `Backup`."""
        backups = tuple(Backup.from_json(b) for b in data.get("backups") or ())
        return cls(backups=backups, raw=dict(data))


@dataclass(frozen=True)
class Restored(Reply):
    """``POST …/backups/restore``: the backup restored and the verify that ran on it (``verify``: its
    report's fields)."""

    restored: str
    verify: Json
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class HistoryPage(Reply):
    """``GET …/history``: a page of the audit chain (labels, times, heights: no content word)."""

    records: Rows
    total: int
    next_offset: int | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class TrustList(Reply):
    """``GET …/trust``: the wing trust assignments."""

    trust: Rows
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class TrustAssigned(Reply):
    """``POST …/trust``: one wing's trust class as assigned, and when."""

    wing: str
    trust: str
    at: str
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class AdmissionQueue(Reply):
    """``GET …/admission``: the pending review queue: codes, offsets and labels, never the queued words;
    ``destination`` is ``unchanged`` or ``moved``."""

    queue: Rows
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Ruling(Reply):
    """``POST …/admission``: what a ruling did: the verdict, the slot, where the text landed (allow) and
    the forgetting receipt (deny)."""

    verdict: str
    id: str
    intended_id: str
    landed_id: str | None
    at: str
    receipt: Json | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class RetentionPolicies(Reply):
    """``GET …/retention``: the policies that verified, and the scopes that failed."""

    policies: Rows
    failed: list[Any]
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class RetentionPolicy(Reply):
    """``POST …/retention``: one policy as set."""

    wing: str
    room: str | None
    max_age_seconds: int
    at: str
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class SweepReport(Reply):
    """``POST …/retention/sweep``: what a sweep examined and destroyed (with the receipt), and what it
    refused to decide."""

    examined: int
    forgotten: list[str]
    receipt: Json | None
    failed_policies: list[str]
    tampered_drawers: list[str]
    undecided: int
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class ForgetReceipt(Reply):
    """``POST …/forget``: the attested-forgetting receipt: keep it, and replay it later with
    ``verify_forgetting``."""

    format: str
    vault: str
    generation: int
    forgotten: Rows
    interval: Json
    head_before: str
    head_after: str
    at: str
    reason: str
    record: Json
    attestation: Json | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Witness(Reply):
    """``GET …/witness``: a witness of the audit chain: keep it off this machine, and check it later with
    ``check_witness``."""

    attestation: Json | None
    count: int
    digest: str
    emitted_at: str
    format: str
    generation: int
    head: str
    vault: str
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class WitnessCheck(Reply):
    """``POST …/witness``: the vault extends the witness: writes since, and how the witness was
    corroborated and signed."""

    verdict: str
    rows_since: int
    corroboration: str
    signature: str
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class ForgettingVerdict(Reply):
    """``POST …/verify-forgetting``: a receipt replayed: ``verified``, ``recorded`` (re-keyed since) or
    ``failed``, with the findings."""

    status: str
    findings: list[str]
    signature: str
    sender: str | None
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class RepairReport(Reply):
    """``POST …/repair``: what the remediation half of verify did, and whether the vault verifies afterwards."""

    vault: str
    drawers_checked: int
    skipped_tampered: list[str]
    embeddings_backfilled: int
    embeddings_reembedded: int
    embed_failures: int
    fingerprints_fixed: int
    fts_added: int
    fts_removed: int
    identity_recorded: Any
    append_counter_restored: int
    indexes_rebuilt: list[Any]
    index_tier: Any
    bytes_before: int
    bytes_after: int
    verify_ok: bool
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class Anchored(Reply):
    """``POST …/anchor``: how far behind the committed head the manifest anchor was."""

    behind_by: int
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class RotationReport(Reply):
    """``POST …/rotate``: the re-key: generations before and after, what was re-sealed, how long it took."""

    vault: str
    generation_before: int
    generation_after: int
    drawers: int
    embeddings: int
    tombstones_preserved: int
    audit_rows_refolded: int
    rekey_records: int
    chain_records: int
    seconds: float
    raw: dict[str, Any] = field(repr=False, compare=False)


@dataclass(frozen=True)
class ImportCounts(Reply):
    """``POST …/import``: what the import filed. Judge the copy by the destination's stats, not by these
    counts alone."""

    imported: int
    new: int
    replaced: int
    unchanged: int
    quarantined: int
    facts: int
    tunnels: int
    notes: list[Any]
    raw: dict[str, Any] = field(repr=False, compare=False)
