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
from undercroft_net.engine.models import SearchResult, VaultCreated, VerifyReport, WriteOutcome

__all__ = ["Call", "EngineCalls"]

T = TypeVar("T")
JSON = dict[str, Any]


@dataclass(frozen=True)
class Call(Generic[T]):
    """One request and the conversion of its JSON reply into ``T``."""

    request: Prepared
    convert: Callable[[Any], T]


def _json(reply: Any) -> JSON:
    return dict(reply)


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

    def delete_vault(self, vault: str) -> Call[JSON]:
        """``DELETE /v1/vaults/{id}``: irreversible."""
        return self._call("delete_vault", vault, _json)

    # --- read / write ----------------------------------------------------------------------------------
    def stats(self, vault: str) -> Call[JSON]:
        """``GET …/stats``."""
        return self._call("stats", vault, _json)

    def stats_history(self, vault: str, *, window: int | None = None) -> Call[JSON]:
        """``GET …/stats/history``."""
        return self._call("stats_history", vault, _json, query={"window": window})

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
    ) -> Call[JSON]:  # fmt: skip
        """``GET …/drawers``: paged summaries."""
        query = {"wing": wing, "room": room, "limit": limit, "offset": offset}
        return self._call("list_drawers", vault, _json, query=query)

    def get_drawer(self, vault: str, drawer_id: str) -> Call[JSON]:
        """``GET …/drawers/{drawer_id}``: the whole drawer (its ``drawer`` object)."""
        return self._call("get_drawer", vault, lambda reply: dict(reply["drawer"]), path={"drawer_id": drawer_id})

    def update_drawer(self, vault: str, drawer_id: str, text: str) -> Call[WriteOutcome]:
        """``PUT …/drawers/{drawer_id}``: replace the content (screened like a save)."""
        path = {"drawer_id": drawer_id}
        return self._call("update_drawer", vault, WriteOutcome.from_json, path=path, body={"text": text})

    def delete_drawer(self, vault: str, drawer_id: str) -> Call[JSON]:
        """``DELETE …/drawers/{drawer_id}``."""
        return self._call("delete_drawer", vault, _json, path={"drawer_id": drawer_id})

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

    def taxonomy(self, vault: str) -> Call[JSON]:
        """``GET …/taxonomy``."""
        return self._call("taxonomy", vault, _json)

    def check_duplicate(self, vault: str, text: str, *, threshold: float | None = None) -> Call[JSON]:
        """``POST …/drawers/check-duplicate``."""
        return self._call("check_duplicate", vault, _json, body={"text": text, "threshold": threshold})

    def delete_by_source(self, vault: str, source: str) -> Call[JSON]:
        """``DELETE …/drawers?source=``: every drawer mined from one file."""
        return self._call("delete_by_source", vault, _json, query={"source": source})

    def dedup(self, vault: str, *, apply: bool = False, wing: str | None = None) -> Call[JSON]:
        """``POST …/dedup``: a dry run unless ``apply``."""
        return self._call("dedup", vault, _json, body={"apply": apply, "wing": wing})

    # --- knowledge graph --------------------------------------------------------------------------------
    def kg_stats(self, vault: str) -> Call[JSON]:
        """``GET …/kg/stats``."""
        return self._call("kg_stats", vault, _json)

    def kg_entities(self, vault: str, *, limit: int | None = None, offset: int | None = None) -> Call[JSON]:
        """``GET …/kg/entities``."""
        return self._call("kg_entities", vault, _json, query={"limit": limit, "offset": offset})

    def kg_query(
        self, vault: str, entity: str, *, direction: str | None = None, as_of: str | None = None
    ) -> Call[JSON]:
        """``GET …/kg/query``: facts about one entity."""
        query = {"entity": entity, "direction": direction, "as_of": as_of}
        return self._call("kg_query", vault, _json, query=query)

    def kg_timeline(self, vault: str, entity: str | None = None) -> Call[JSON]:
        """``GET …/kg/timeline``."""
        return self._call("kg_timeline", vault, _json, query={"entity": entity})

    def kg_receipts(self, vault: str, *, integrity_only: bool = False) -> Call[JSON]:
        """``GET …/kg/receipts``: per-fact verdicts, or ``{ok, checked}`` alone."""
        return self._call("kg_receipts", vault, _json, query={"integrity_only": integrity_only or None})

    def kg_canonical(self, vault: str, key: str) -> Call[JSON]:
        """``GET …/kg/canonical/{key}``."""
        return self._call("kg_canonical", vault, _json, path={"key": key})

    def kg_authority(self, vault: str, fact_id: str, **tier: str | None) -> Call[JSON]:
        """``POST …/kg/authority``: ``authority_class``, ``review_state``, ``canonical_key``."""
        return self._call("kg_authority", vault, _json, body={"fact_id": fact_id, **tier})

    def supersessions(self, vault: str) -> Call[JSON]:
        """``GET …/supersessions``."""
        return self._call("supersessions", vault, _json)

    def kg_rel(self, vault: str, predicate: str, *, as_of: str | None = None) -> Call[JSON]:
        """``GET …/kg/rel``: facts by predicate."""
        return self._call("kg_rel", vault, _json, query={"predicate": predicate, "as_of": as_of})

    def index_status(self, vault: str) -> Call[JSON]:
        """``GET …/index/status``."""
        return self._call("index_status", vault, _json)

    # --- tunnels ---------------------------------------------------------------------------------------
    def create_tunnel(self, vault: str, source: str, target: str, label: str | None = None) -> Call[JSON]:
        """``POST …/tunnels``: connect two wings."""
        return self._call("create_tunnel", vault, _json, body={"from": source, "to": target, "label": label})

    def list_tunnels(self, vault: str, *, wing: str | None = None) -> Call[JSON]:
        """``GET …/tunnels``."""
        return self._call("list_tunnels", vault, _json, query={"wing": wing})

    def traverse(self, vault: str, start: str, *, depth: int | None = None) -> Call[JSON]:
        """``GET …/tunnels/traverse``."""
        return self._call("traverse", vault, _json, query={"start": start, "depth": depth})

    def delete_tunnel(self, vault: str, tunnel_id: str) -> Call[JSON]:
        """``DELETE …/tunnels/{tid}``."""
        return self._call("delete_tunnel", vault, _json, path={"tid": tunnel_id})

    def tunnel_drawers(self, vault: str, tunnel_id: str, *, limit: int | None = None) -> Call[JSON]:
        """``GET …/tunnels/{tid}/drawers``."""
        return self._call("tunnel_drawers", vault, _json, path={"tid": tunnel_id}, query={"limit": limit})

    # --- session context and diaries ---------------------------------------------------------------------
    def wake_up(self, vault: str, *, wing: str | None = None, limit: int | None = None) -> Call[JSON]:
        """``GET …/wake-up``."""
        return self._call("wake_up", vault, _json, query={"wing": wing, "limit": limit})

    def diary_write(self, vault: str, agent: str, entry: str) -> Call[JSON]:
        """``POST …/diary``: raises `Quarantined` when screened away."""
        return self._call("diary_write", vault, _json, body={"agent": agent, "entry": entry})

    def diary_read(self, vault: str, agent: str, *, limit: int | None = None) -> Call[JSON]:
        """``GET …/diary``."""
        return self._call("diary_read", vault, _json, query={"agent": agent, "limit": limit})

    def diary_agents(self, vault: str) -> Call[JSON]:
        """``GET …/diary/agents``."""
        return self._call("diary_agents", vault, _json)

    def closets(self, vault: str, *, wing: str | None = None) -> Call[JSON]:
        """``GET …/closets``."""
        return self._call("closets", vault, _json, query={"wing": wing})

    def hallways(self, vault: str, wing: str, *, top: int | None = None) -> Call[JSON]:
        """``GET …/hallways``."""
        return self._call("hallways", vault, _json, query={"wing": wing, "top": top})

    # --- operator plane ---------------------------------------------------------------------------------
    def create_backup(self, vault: str) -> Call[JSON]:
        """``POST …/backups``."""
        return self._call("create_backup", vault, _json)

    def list_backups(self, vault: str) -> Call[JSON]:
        """``GET …/backups``."""
        return self._call("list_backups", vault, _json)

    def restore_backup(self, vault: str, name: str) -> Call[JSON]:
        """``POST …/backups/restore``."""
        return self._call("restore_backup", vault, _json, body={"name": name})

    def history(
        self, vault: str, *, subject: str | None = None, limit: int | None = None, offset: int | None = None
    ) -> Call[JSON]:
        """``GET …/history``: the audit chain."""
        query = {"subject": subject, "limit": limit, "offset": offset}
        return self._call("history", vault, _json, query=query)

    def trust(self, vault: str) -> Call[JSON]:
        """``GET …/trust``."""
        return self._call("trust", vault, _json)

    def set_trust(self, vault: str, wing: str, trust: str) -> Call[JSON]:
        """``POST …/trust``."""
        return self._call("set_trust", vault, _json, body={"wing": wing, "trust": trust})

    def admission(self, vault: str) -> Call[JSON]:
        """``GET …/admission``: the review queue."""
        return self._call("admission", vault, _json)

    def rule(self, vault: str, entry_id: str, verdict: str) -> Call[JSON]:
        """``POST …/admission``: ``allow`` or ``deny``."""
        return self._call("rule", vault, _json, body={"id": entry_id, "verdict": verdict})

    def retention(self, vault: str) -> Call[JSON]:
        """``GET …/retention``."""
        return self._call("retention", vault, _json)

    def set_retention(self, vault: str, wing: str, max_age: int | str, *, room: str | None = None) -> Call[JSON]:
        """``POST …/retention``: ``max_age`` in seconds or as ``90d``/``12h``/``2w``."""
        return self._call("set_retention", vault, _json, body={"wing": wing, "room": room, "max_age": max_age})

    def sweep(self, vault: str) -> Call[JSON]:
        """``POST …/retention/sweep``."""
        return self._call("sweep", vault, _json)

    def forget(self, vault: str, ids: Sequence[str], *, reason: str | None = None) -> Call[JSON]:
        """``POST …/forget``: the receipt (pass it to `verify_forgetting` later)."""
        return self._call("forget", vault, _json, body={"ids": list(ids), "reason": reason})

    def witness(self, vault: str) -> Call[JSON]:
        """``GET …/witness``: keep it off this machine."""
        return self._call("witness", vault, _json)

    def check_witness(self, vault: str, witness: Mapping[str, Any]) -> Call[JSON]:
        """``POST …/witness``: `IntegrityError` when the vault was rolled back below it."""
        return self._call("check_witness", vault, _json, content=json.dumps(witness).encode())

    def verify_forgetting(self, vault: str, receipt: Mapping[str, Any]) -> Call[JSON]:
        """``POST …/verify-forgetting``."""
        return self._call("verify_forgetting", vault, _json, content=json.dumps(receipt).encode())

    # --- maintenance / portability ---------------------------------------------------------------------------
    def refine(self, vault: str) -> Call[JSON]:
        """``POST …/refine``."""
        return self._call("refine", vault, _json)

    def verify(self, vault: str) -> Call[VerifyReport]:
        """``POST …/verify``: raises `IntegrityError` when the vault fails."""
        return self._call("verify", vault, VerifyReport.from_json)

    def repair(self, vault: str) -> Call[JSON]:
        """``POST …/repair``."""
        return self._call("repair", vault, _json)

    def anchor(self, vault: str) -> Call[JSON]:
        """``POST …/anchor``."""
        return self._call("anchor", vault, _json)

    def rotate(self, vault: str) -> Call[JSON]:
        """``POST …/rotate``."""
        return self._call("rotate", vault, _json)

    def export(self, vault: str) -> Call[bytes]:
        """``GET …/export``: the NDJSON bytes (first line the manifest)."""
        return self._call("export", vault, _bytes)

    def import_export(self, vault: str, ndjson: bytes) -> Call[JSON]:
        """``POST …/import``: judge the copy by the destination's `stats`, not by this reply's counts."""
        return self._call("import_export", vault, _json, content=bytes(ndjson))


def _vector(vector: Sequence[float] | None) -> list[float] | None:
    return None if vector is None else [float(x) for x in vector]
