"""Typed results of the operator-plane /v1 routes: backups, history, trust, admission, retention, forgetting,
the witness, and maintenance (refine, repair, anchor, rotate, import). Nested records stay JSON (``Rows``)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from undercroft_net.engine.models import Reply

__all__ = [
    "AdmissionQueue",
    "Anchored",
    "Backup",
    "Backups",
    "ForgetReceipt",
    "ForgettingVerdict",
    "HistoryPage",
    "ImportCounts",
    "RefineReport",
    "RepairReport",
    "Restored",
    "RetentionPolicies",
    "RetentionPolicy",
    "RotationReport",
    "Ruling",
    "SweepReport",
    "TrustAssigned",
    "TrustList",
    "Witness",
    "WitnessCheck",
]

Json = dict[str, Any]
Rows = list[dict[str, Any]]


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
    refused to decide; ``ok`` is false when a policy row or a drawer failed verification (``out`` is always
    ``None`` here: the receipt travels inline)."""

    ok: bool
    examined: int
    forgotten: list[str]
    receipt: Json | None
    failed_policies: list[str]
    tampered_drawers: list[str]
    undecided: int
    out: str | None
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
    corroborated and signed (``ok`` is always true: a rollback is an `IntegrityError`)."""

    ok: bool
    verdict: str
    writes_since: int
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
    #: Re-embedded by an earlier, interrupted run of the same model swap (its progress marker resumed).
    embeddings_resumed: int
    embed_failures: int
    fingerprints_fixed: int
    fts_added: int
    fts_removed: int
    identity_recorded: Any
    append_counter_restored: int
    indexes_rebuilt: list[Any]
    index_tier: Any
    search_snapshot: Any
    tokens: Any
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
class RefineReport(Reply):
    """``POST …/refine``: what one distillation run did — counts and refusal reasons only, never a drawer's or a
    fact's words."""

    vault: str
    extractor: str
    destination: str
    dry_run: bool
    scope: Json
    selected: int
    sent: int
    answered: int
    malformed: int
    failed: int
    facts_proposed: int
    facts_written: int
    facts_existing: int
    grounding: dict[str, int]
    refused: dict[str, int]
    egress_recorded: bool
    spans: Rows
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
    id_key_adopted: bool
    notes: list[Any]
    raw: dict[str, Any] = field(repr=False, compare=False)
