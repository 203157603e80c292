"""Every /v1 route as a call description: the request it sends and how its reply becomes a typed result.

`EngineCalls` builds the `Call` of each route (arguments named as the engine names them; ``None`` leaves the
engine's default). `UndercroftClient` sends a call and returns its result; `AsyncUndercroftClient` awaits it.
One description per route, two senders: the two clients cannot drift on a field.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from undercroft_net._internal.engine_calls import Prepared, prepare
from undercroft_net.engine.models import Reply, SearchResult, VaultCreated, VerifyReport, WriteOutcome
from undercroft_net.engine.replies import (
    AdmissionQueue,
    Anchored,
    AuthorityChange,
    Backup,
    Backups,
    Canonical,
    Closets,
    DedupReport,
    Deleted,
    DiaryAgents,
    DiaryEntries,
    DiaryWritten,
    Drawer,
    DrawerPage,
    DuplicateCheck,
    EntityPage,
    Facts,
    ForgetReceipt,
    ForgettingVerdict,
    Hallways,
    HistoryPage,
    ImportCounts,
    IndexStatus,
    KgStats,
    ReceiptIntegrity,
    ReceiptReport,
    RefineReport,
    RepairReport,
    Restored,
    RetentionPolicies,
    RetentionPolicy,
    RotationReport,
    Ruling,
    SourceDeletion,
    StatsHistory,
    Supersessions,
    SweepReport,
    Taxonomy,
    Traversal,
    TrustAssigned,
    TrustList,
    TunnelCreated,
    TunnelDrawers,
    Tunnels,
    VaultStats,
    WakeUp,
    Witness,
    WitnessCheck,
)

__all__ = ["Call", "EngineCalls"]

T = TypeVar("T")


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and the conversion of its JSON reply into ``T``."""

    request: Prepared
    convert: Callable[[Any], T]


def _bytes(reply: Any) -> bytes:
    return bytes(reply)


class EngineCalls:
    """The call of every /v1 route (``vault`` is the vault id; ids in paths are percent-encoded)."""

    def __init__(self, *, assertion_secret: str | None, clock: Callable[[], float]) -> None:
        """Mint assertions with ``assertion_secret`` (when given) at ``clock()``."""
        self._secret = assertion_secret
        self._clock = clock

    def _call(self, route: str, vault: str | None, convert: Callable[[Any], T], **parts: Any) -> Call[T]:
        return Call(prepare(route, vault, secret=self._secret, clock=self._clock, **parts), convert)

    # --- lifecycle -------------------------------------------------------------------------------------
    def create_vault(self, vault: str, *, level: str | None = None, embedder: str | None = None) -> Call[VaultCreated]:
        """``POST /v1/vaults``: a sealed (default) or hmac-only vault; ``embedder`` ``external:<name>@<dim>``."""
        body = {"id": vault, "level": level, "embedder": embedder}
        return self._call("create_vault", None, VaultCreated.from_json, body=body)

    def list_vaults(self) -> Call[list[str]]:
        """``GET /v1/vaults``: every vault id."""
        return self._call("list_vaults", None, lambda reply: list(reply["vaults"]))

    def delete_vault(self, vault: str) -> Call[Deleted]:
        """``DELETE /v1/vaults/{id}``: irreversible."""
        return self._call("delete_vault", vault, Deleted.from_json)

    # --- read / write ----------------------------------------------------------------------------------
    def stats(self, vault: str) -> Call[VaultStats]:
        """``GET …/stats``."""
        return self._call("stats", vault, VaultStats.from_json)

    def stats_history(self, vault: str, *, window: int | None = None) -> Call[StatsHistory]:
        """``GET …/stats/history``: the last ``window`` samples of the telemetry build's sampler."""
        return self._call("stats_history", vault, StatsHistory.from_json, query={"window": window})

    def save(
        self,
        vault: str,
        text: str,
        *,
        wing: str | None = None,
        room: str | None = None,
        vector: Sequence[float] | None = None,
        dedup_threshold: float | None = None,
        **claims: str | None,
    ) -> Call[WriteOutcome]:
        """``POST …/drawers``: raises `Quarantined` (with the queue slot) when the admission screen diverts it."""
        body = {"text": text, "wing": wing, "room": room, "vector": _vector(vector), "dedup_threshold": dedup_threshold}
        return self._call("save", vault, WriteOutcome.from_json, body={**body, **claims})

    def list_drawers(
        self, vault: str, *, wing: str | None = None, room: str | None = None, limit: int | None = None,
        offset: int | None = None,
    ) -> Call[DrawerPage]:  # fmt: skip
        """``GET …/drawers``: paged summaries."""
        query = {"wing": wing, "room": room, "limit": limit, "offset": offset}
        return self._call("list_drawers", vault, DrawerPage.from_json, query=query)

    def get_drawer(self, vault: str, drawer_id: str) -> Call[Drawer]:
        """``GET …/drawers/{drawer_id}``: the whole drawer (its ``drawer`` object)."""
        return self._call(
            "get_drawer", vault, lambda reply: Drawer.from_json(reply["drawer"]), path={"drawer_id": drawer_id}
        )

    def update_drawer(self, vault: str, drawer_id: str, text: str) -> Call[WriteOutcome]:
        """``PUT …/drawers/{drawer_id}``: replace the content (screened like a save)."""
        path = {"drawer_id": drawer_id}
        return self._call("update_drawer", vault, WriteOutcome.from_json, path=path, body={"text": text})

    def delete_drawer(self, vault: str, drawer_id: str) -> Call[Deleted]:
        """``DELETE …/drawers/{drawer_id}``."""
        return self._call("delete_drawer", vault, Deleted.from_json, path={"drawer_id": drawer_id})

    def search(
        self,
        vault: str,
        query: str,
        *,
        limit: int | None = None,
        wing: str | None = None,
        room: str | None = None,
        vector: Sequence[float] | None = None,
        **options: object,
    ) -> Call[SearchResult]:
        """``POST …/search``: hybrid search; ``options`` are the engine's other search fields (``when``, …)."""
        body = {"query": query, "limit": limit, "wing": wing, "room": room, "vector": _vector(vector), **options}
        return self._call("search", vault, SearchResult.from_json, body=body)

    def taxonomy(self, vault: str) -> Call[Taxonomy]:
        """``GET …/taxonomy``."""
        return self._call("taxonomy", vault, Taxonomy.from_json)

    def check_duplicate(self, vault: str, text: str, *, threshold: float | None = None) -> Call[DuplicateCheck]:
        """``POST …/drawers/check-duplicate``."""
        return self._call(
            "check_duplicate", vault, DuplicateCheck.from_json, body={"text": text, "threshold": threshold}
        )

    def delete_by_source(self, vault: str, source: str) -> Call[SourceDeletion]:
        """``DELETE …/drawers?source=``: every drawer mined from one file."""
        return self._call("delete_by_source", vault, SourceDeletion.from_json, query={"source": source})

    def dedup(self, vault: str, *, apply: bool = False, wing: str | None = None) -> Call[DedupReport]:
        """``POST …/dedup``: a dry run unless ``apply``."""
        return self._call("dedup", vault, DedupReport.from_json, body={"apply": apply, "wing": wing})

    # --- knowledge graph --------------------------------------------------------------------------------
    def kg_stats(self, vault: str) -> Call[KgStats]:
        """``GET …/kg/stats``."""
        return self._call("kg_stats", vault, KgStats.from_json)

    def kg_entities(self, vault: str, *, limit: int | None = None, offset: int | None = None) -> Call[EntityPage]:
        """``GET …/kg/entities``."""
        return self._call("kg_entities", vault, EntityPage.from_json, query={"limit": limit, "offset": offset})

    def kg_query(
        self, vault: str, entity: str, *, direction: str | None = None, as_of: str | None = None
    ) -> Call[Facts]:
        """``GET …/kg/query``: facts about one entity."""
        query = {"entity": entity, "direction": direction, "as_of": as_of}
        return self._call("kg_query", vault, Facts.from_json, query=query)

    def kg_timeline(self, vault: str, entity: str | None = None) -> Call[Facts]:
        """``GET …/kg/timeline``."""
        return self._call("kg_timeline", vault, Facts.from_json, query={"entity": entity})

    def kg_receipts(self, vault: str, *, integrity_only: bool = False) -> Call[ReceiptReport | ReceiptIntegrity]:
        """``GET …/kg/receipts``: per-fact verdicts (`ReceiptReport`), or with ``integrity_only`` `ReceiptIntegrity`."""
        convert: Callable[[Any], ReceiptReport | ReceiptIntegrity] = (
            ReceiptIntegrity.from_json if integrity_only else ReceiptReport.from_json
        )
        return self._call("kg_receipts", vault, convert, query={"integrity_only": integrity_only or None})

    def kg_canonical(self, vault: str, key: str) -> Call[Canonical]:
        """``GET …/kg/canonical/{key}``."""
        return self._call("kg_canonical", vault, Canonical.from_json, path={"key": key})

    def kg_authority(self, vault: str, fact_id: str, **tier: str | None) -> Call[AuthorityChange]:
        """``POST …/kg/authority``: ``authority_class``, ``review_state``, ``canonical_key``."""
        return self._call("kg_authority", vault, AuthorityChange.from_json, body={"fact_id": fact_id, **tier})

    def supersessions(self, vault: str) -> Call[Supersessions]:
        """``GET …/supersessions``."""
        return self._call("supersessions", vault, Supersessions.from_json)

    def kg_rel(self, vault: str, predicate: str, *, as_of: str | None = None) -> Call[Facts]:
        """``GET …/kg/rel``: facts by predicate."""
        return self._call("kg_rel", vault, Facts.from_json, query={"predicate": predicate, "as_of": as_of})

    def index_status(self, vault: str, backend: str) -> Call[IndexStatus]:
        """``GET …/index/status?backend=``: the mirror's counts beside the local ones (``remote_records`` None:
        no mirror exists)."""
        return self._call("index_status", vault, IndexStatus.from_json, query={"backend": backend})

    # --- tunnels ---------------------------------------------------------------------------------------
    def create_tunnel(self, vault: str, source: str, target: str, label: str | None = None) -> Call[TunnelCreated]:
        """``POST …/tunnels``: connect two wings."""
        return self._call(
            "create_tunnel", vault, TunnelCreated.from_json, body={"from": source, "to": target, "label": label}
        )

    def list_tunnels(self, vault: str, *, wing: str | None = None) -> Call[Tunnels]:
        """``GET …/tunnels``."""
        return self._call("list_tunnels", vault, Tunnels.from_json, query={"wing": wing})

    def traverse(self, vault: str, start: str, *, depth: int | None = None) -> Call[Traversal]:
        """``GET …/tunnels/traverse``."""
        return self._call("traverse", vault, Traversal.from_json, query={"start": start, "depth": depth})

    def delete_tunnel(self, vault: str, tunnel_id: str) -> Call[Deleted]:
        """``DELETE …/tunnels/{tid}``."""
        return self._call("delete_tunnel", vault, Deleted.from_json, path={"tid": tunnel_id})

    def tunnel_drawers(self, vault: str, tunnel_id: str, *, limit: int | None = None) -> Call[TunnelDrawers]:
        """``GET …/tunnels/{tid}/drawers``."""
        return self._call(
            "tunnel_drawers", vault, TunnelDrawers.from_json, path={"tid": tunnel_id}, query={"limit": limit}
        )

    # --- session context and diaries ---------------------------------------------------------------------
    def wake_up(self, vault: str, *, wing: str | None = None, limit: int | None = None) -> Call[WakeUp]:
        """``GET …/wake-up``."""
        return self._call("wake_up", vault, WakeUp.from_json, query={"wing": wing, "limit": limit})

    def diary_write(self, vault: str, agent: str, entry: str) -> Call[DiaryWritten]:
        """``POST …/diary``: raises `Quarantined` when screened away."""
        return self._call("diary_write", vault, DiaryWritten.from_json, body={"agent": agent, "entry": entry})

    def diary_read(self, vault: str, agent: str, *, limit: int | None = None) -> Call[DiaryEntries]:
        """``GET …/diary``."""
        return self._call("diary_read", vault, DiaryEntries.from_json, query={"agent": agent, "limit": limit})

    def diary_agents(self, vault: str) -> Call[DiaryAgents]:
        """``GET …/diary/agents``."""
        return self._call("diary_agents", vault, DiaryAgents.from_json)

    def closets(self, vault: str, *, wing: str | None = None) -> Call[Closets]:
        """``GET …/closets``."""
        return self._call("closets", vault, Closets.from_json, query={"wing": wing})

    def hallways(self, vault: str, wing: str, *, top: int | None = None) -> Call[Hallways]:
        """``GET …/hallways``."""
        return self._call("hallways", vault, Hallways.from_json, query={"wing": wing, "top": top})

    # --- operator plane ---------------------------------------------------------------------------------
    def create_backup(self, vault: str) -> Call[Backup]:
        """``POST …/backups``."""
        return self._call("create_backup", vault, Backup.from_json)

    def list_backups(self, vault: str) -> Call[Backups]:
        """``GET …/backups``."""
        return self._call("list_backups", vault, Backups.from_json)

    def restore_backup(self, vault: str, name: str) -> Call[Restored]:
        """``POST …/backups/restore``."""
        return self._call("restore_backup", vault, Restored.from_json, body={"name": name})

    def history(
        self, vault: str, *, subject: str | None = None, limit: int | None = None, offset: int | None = None
    ) -> Call[HistoryPage]:
        """``GET …/history``: the audit chain."""
        query = {"subject": subject, "limit": limit, "offset": offset}
        return self._call("history", vault, HistoryPage.from_json, query=query)

    def trust(self, vault: str) -> Call[TrustList]:
        """``GET …/trust``."""
        return self._call("trust", vault, TrustList.from_json)

    def set_trust(self, vault: str, wing: str, trust: str) -> Call[TrustAssigned]:
        """``POST …/trust``."""
        return self._call("set_trust", vault, TrustAssigned.from_json, body={"wing": wing, "trust": trust})

    def admission(self, vault: str) -> Call[AdmissionQueue]:
        """``GET …/admission``: the review queue."""
        return self._call("admission", vault, AdmissionQueue.from_json)

    def rule(self, vault: str, entry_id: str, verdict: str) -> Call[Ruling]:
        """``POST …/admission``: ``allow`` or ``deny``."""
        return self._call("rule", vault, Ruling.from_json, body={"id": entry_id, "verdict": verdict})

    def retention(self, vault: str) -> Call[RetentionPolicies]:
        """``GET …/retention``."""
        return self._call("retention", vault, RetentionPolicies.from_json)

    def set_retention(
        self, vault: str, wing: str, max_age: int | str, *, room: str | None = None
    ) -> Call[RetentionPolicy]:
        """``POST …/retention``: ``max_age`` in seconds or as ``90d``/``12h``/``2w``."""
        return self._call(
            "set_retention", vault, RetentionPolicy.from_json, body={"wing": wing, "room": room, "max_age": max_age}
        )

    def sweep(self, vault: str) -> Call[SweepReport]:
        """``POST …/retention/sweep``."""
        return self._call("sweep", vault, SweepReport.from_json)

    def forget(self, vault: str, ids: Sequence[str], *, reason: str | None = None) -> Call[ForgetReceipt]:
        """``POST …/forget``: the receipt (pass it to `verify_forgetting` later). The reply is
        ``{ids, out, receipt}``, the record ``undercroft forget --json`` prints; this is its ``receipt``."""
        body = {"ids": list(ids), "reason": reason}
        return self._call("forget", vault, lambda reply: ForgetReceipt.from_json(reply["receipt"]), body=body)

    def witness(self, vault: str) -> Call[Witness]:
        """``GET …/witness``: keep it off this machine. The reply is ``{out, witness}``, the record
        ``undercroft witness emit --json`` prints; this is its ``witness``."""
        return self._call("witness", vault, lambda reply: Witness.from_json(reply["witness"]))

    def check_witness(self, vault: str, witness: Witness | Mapping[str, Any]) -> Call[WitnessCheck]:
        """``POST …/witness``: `IntegrityError` when the vault was rolled back below it."""
        return self._call("check_witness", vault, WitnessCheck.from_json, content=_document(witness))

    def verify_forgetting(self, vault: str, receipt: ForgetReceipt | Mapping[str, Any]) -> Call[ForgettingVerdict]:
        """``POST …/verify-forgetting``."""
        return self._call("verify_forgetting", vault, ForgettingVerdict.from_json, content=_document(receipt))

    # --- maintenance / portability ---------------------------------------------------------------------------
    def refine(
        self,
        vault: str,
        *,
        wing: str | None = None,
        room: str | None = None,
        limit: int | None = None,
        dry_run: bool | None = None,
    ) -> Call[RefineReport]:
        """``POST …/refine``: distil drawers into facts through the engine's served LLM (operator only)."""
        body = {"wing": wing, "room": room, "limit": limit, "dry_run": dry_run}
        return self._call("refine", vault, RefineReport.from_json, body=body)

    def verify(self, vault: str) -> Call[VerifyReport]:
        """``POST …/verify``: raises `IntegrityError` when the vault fails."""
        return self._call("verify", vault, VerifyReport.from_json)

    def repair(self, vault: str) -> Call[RepairReport]:
        """``POST …/repair``."""
        return self._call("repair", vault, RepairReport.from_json)

    def anchor(self, vault: str) -> Call[Anchored]:
        """``POST …/anchor``."""
        return self._call("anchor", vault, Anchored.from_json)

    def rotate(self, vault: str) -> Call[RotationReport]:
        """``POST …/rotate``."""
        return self._call("rotate", vault, RotationReport.from_json)

    def export(self, vault: str, *, with_id_key: bool = False) -> Call[bytes]:
        """``GET …/export``: the NDJSON bytes (first line the manifest); ``with_id_key`` also carries the vault's
        id key, so an adopting import into a new vault keeps every drawer id."""
        return self._call("export", vault, _bytes, query={"with_id_key": with_id_key or None})

    def import_export(self, vault: str, ndjson: bytes, *, adopt_id_key: bool = False) -> Call[ImportCounts]:
        """``POST …/import``: judge the copy by the destination's `stats`, not by this reply's counts;
        ``adopt_id_key`` takes the export's id key first (the vault must be empty)."""
        query = {"adopt_id_key": adopt_id_key or None}
        return self._call("import_export", vault, ImportCounts.from_json, content=bytes(ndjson), query=query)


def _document(document: Reply | Mapping[str, Any]) -> bytes:
    """A document the engine issued, sent back byte for byte as it answered it (a typed result's ``raw``)."""
    return json.dumps(document.raw if isinstance(document, Reply) else dict(document)).encode()


def _vector(vector: Sequence[float] | None) -> list[float] | None:
    return None if vector is None else [float(x) for x in vector]
