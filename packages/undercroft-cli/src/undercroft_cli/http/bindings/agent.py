"""The /v1 routes that share their operation with an MCP tool: drawers, search, recall, the graph reads, tunnels.

Each is ``tool_binding(<tool>)`` with the documents' /v1 field names mapped onto the tool's arguments, so the
route and the tool parse, bound and answer identically. Where the route's documented shape differs (``apply``
against ``dry_run``, a DELETE that deletes), the difference is stated here, once.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from undercroft_store.memory.dedup import save_with_dedup
from undercroft_store.memory.kg.receipts import fact_receipts
from undercroft_store.memory.tunnels import follow_tunnel, list_tunnels

from undercroft_cli.http.bindings.shapes import jsonable
from undercroft_cli.http.errors import HttpRefusal
from undercroft_cli.http.operations import Binding, Call, Source, tool_binding
from undercroft_cli.mcp.server import structured_reply
from undercroft_cli.mcp.tools import registry
from undercroft_cli.mcp.tools.base import boolean, integer, number, string
from undercroft_cli.mcp.tools.drawers import DEFAULT_ROOM, DEFAULT_WING
from undercroft_cli.operations import drawer_record
from undercroft_cli.operations.graph import graph_counts

__all__ = ["AGENT_BINDINGS"]

_V = "/v1/vaults/{id}"


def _saved(data: Mapping[str, Any]) -> int:
    return 202 if data.get("outcome") == "quarantined" else 200


def _marked(binding: Binding) -> Binding:
    """A save whose reply carries ``quarantined: true|false`` beside the outcome (202 when diverted), and
    which takes ``dedup_threshold``: refresh in place the same wing+room drawer at least that close."""
    inner = binding.handler

    def run(call: Call) -> dict[str, Any]:
        threshold = call.args.number("dedup_threshold")
        if threshold is not None:
            return _dedup_save(call, threshold)
        data = dict(inner(call))
        data["quarantined"] = data.get("outcome") == "quarantined"
        return data

    properties = {
        **binding.properties,
        "dedup_threshold": number(
            "refresh in place the nearest drawer of the same wing and room whose cosine reaches this",
            above=0.0,
            maximum=1.0,
        ),
    }
    return Binding(binding.name, properties, run, required=binding.required, status=_saved)


def _dedup_save(call: Call, threshold: float) -> dict[str, Any]:
    """The documented dedup-refresh save: ``deduped`` only when the refresh landed (a diverted one did not)."""
    unsupported = sorted(set(call.args.raw) - {"text", "wing", "room", "kind", "dedup_threshold"})
    if unsupported:
        raise HttpRefusal(
            400, f"dedup_threshold: a dedup-refresh save takes text, wing, room and kind, not {unsupported}"
        )
    outcome = save_with_dedup(
        call.live.store,
        call.args.required_text("text"),
        wing=call.args.text("wing") or DEFAULT_WING,
        room=call.args.text("room") or DEFAULT_ROOM,
        added_by=call.live.surface,
        threshold=threshold,
        kind=call.args.choice("kind"),
    )
    [result, *_] = outcome.results
    quarantined = result.outcome == "quarantined"
    return {
        "outcome": result.outcome,
        "id": result.id,
        "deduped": outcome.deduped and not quarantined,
        "similarity": outcome.similarity,
        "quarantined": quarantined,
    }


def _stats() -> Binding:
    """``undercroft_status`` plus the /v1 names the documents give: ``records`` (the drawer count again, from
    the same read), ``kg``, ``tunnels`` and ``codebooks`` (the stage failure counters come with the status)."""
    tool = tool_binding("undercroft_status", source=Source.NONE)

    def run(call: Call) -> dict[str, Any]:
        data = dict(tool.handler(call))
        store = call.live.store
        data["records"] = data["drawers"]
        data["kg"] = graph_counts(store)
        data["tunnels"] = len(list_tunnels(store))
        data["codebooks"] = store.stats().index_generation
        return data

    return Binding("stats", {}, run, source=Source.NONE)


def _diary_status(data: Mapping[str, Any]) -> int:
    results = data.get("results") or []
    return 202 if results and all(r.get("outcome") == "quarantined" for r in results) else 200


def _with(binding: Binding, **fixed: object) -> Binding:
    """``binding`` with arguments fixed by the route (not advertised, not overridable: sending one is refused)."""

    def run(call: Call) -> Any:
        call.args = binding.arguments({**call.args.raw, **fixed})
        return binding.handler(call)

    properties = {k: v for k, v in binding.properties.items() if k not in fixed}
    return Binding(
        binding.name, properties, run, binding.required, binding.source, binding.reach, binding.path, binding.status
    )


def _dedup() -> Binding:
    tool = tool_binding("undercroft_dedup")

    def run(call: Call) -> Any:
        call.args = tool.arguments({"wing": call.args.text("wing"), "dry_run": not call.args.flag("apply")})
        return tool.handler(call)

    properties = {
        "wing": tool.properties["wing"],
        "apply": boolean("remove the duplicates (default: a dry run that only reports them)"),
    }
    return Binding("dedup", properties, run)


def _receipts() -> Binding:
    tool = tool_binding("undercroft_kg_receipts", source=Source.QUERY)

    def run(call: Call) -> Any:
        if call.args.flag("integrity_only"):
            return jsonable(fact_receipts(call.live.store, integrity_only=True))
        call.args = tool.arguments({"problems_only": call.args.flag("problems_only")})
        return tool.handler(call)

    properties = {
        **tool.properties,
        "integrity_only": boolean("answer {ok, checked} alone: one HMAC per fact, no drawer reads"),
    }
    return Binding("kg_receipts", properties, run, source=Source.QUERY)


def _verify() -> Binding:
    """The verify tool's report plus ``lines``: the text ``undercroft verify`` prints (``VerifyReport.render``),
    one leg per line, so the console shows the legs in the CLI's own words instead of re-deriving them in JS."""
    spec = registry()["undercroft_verify"]

    def run(call: Call) -> dict[str, Any]:
        reply = structured_reply(spec, spec.handler(call.live, spec.arguments({})))
        return {**dict(reply.structured or {}), "lines": reply.text.splitlines()}

    return Binding("verify", {}, run, source=Source.NONE)


def _tunnel_drawers(call: Call) -> dict[str, Any]:
    limit = call.args.integer("limit") or 20
    drawers = follow_tunnel(call.live.store, call.args.required_text("tunnel_id"), limit=limit)
    return {"drawers": [drawer_record(d, full=False) for d in drawers]}


AGENT_BINDINGS: dict[tuple[str, str], Binding] = {
    ("GET", f"{_V}/stats"): _stats(),
    ("POST", f"{_V}/drawers"): _marked(tool_binding("undercroft_save", rename={"text": "content"})),
    ("GET", f"{_V}/drawers"): tool_binding("undercroft_list_drawers", source=Source.QUERY),
    ("GET", f"{_V}/drawers/{{drawer_id}}"): tool_binding(
        "undercroft_get_drawer", source=Source.NONE, path={"drawer_id": "drawer_id"}
    ),
    ("PUT", f"{_V}/drawers/{{drawer_id}}"): tool_binding(
        "undercroft_update_drawer", rename={"text": "content"}, path={"drawer_id": "drawer_id"}, status=_saved
    ),
    ("DELETE", f"{_V}/drawers/{{drawer_id}}"): tool_binding(
        "undercroft_delete_drawer", source=Source.NONE, path={"drawer_id": "drawer_id"}
    ),
    ("POST", f"{_V}/search"): tool_binding("undercroft_search"),
    ("GET", f"{_V}/taxonomy"): tool_binding("undercroft_get_taxonomy", source=Source.NONE),
    ("POST", f"{_V}/drawers/check-duplicate"): tool_binding("undercroft_check_duplicate", rename={"text": "content"}),
    # A DELETE deletes: the tool's dry-run default protects an agent, the REST verb already says what it does.
    ("DELETE", f"{_V}/drawers"): _with(
        tool_binding("undercroft_delete_by_source", source=Source.QUERY, rename={"source": "source_file"}),
        dry_run=False,
    ),
    ("POST", f"{_V}/dedup"): _dedup(),
    ("GET", f"{_V}/kg/stats"): tool_binding("undercroft_kg_stats", source=Source.NONE),
    ("GET", f"{_V}/kg/entities"): tool_binding("undercroft_kg_entities", source=Source.QUERY),
    ("GET", f"{_V}/kg/query"): tool_binding("undercroft_kg_query", source=Source.QUERY),
    ("GET", f"{_V}/kg/timeline"): tool_binding("undercroft_kg_timeline", source=Source.QUERY),
    ("GET", f"{_V}/kg/receipts"): _receipts(),
    ("GET", f"{_V}/kg/canonical/{{key}}"): tool_binding(
        "undercroft_lookup_canonical", source=Source.NONE, path={"key": "key"}
    ),
    ("GET", f"{_V}/supersessions"): tool_binding("undercroft_supersessions", source=Source.NONE),
    ("GET", f"{_V}/kg/rel"): tool_binding("undercroft_kg_rel", source=Source.QUERY),
    ("POST", f"{_V}/tunnels"): tool_binding(
        "undercroft_create_tunnel",
        rename={"from": "source_wing", "to": "target_wing", "from_room": "source_room", "to_room": "target_room"},
    ),
    ("GET", f"{_V}/tunnels"): tool_binding("undercroft_list_tunnels", source=Source.QUERY),
    ("GET", f"{_V}/tunnels/traverse"): tool_binding(
        "undercroft_traverse", source=Source.QUERY, rename={"start": "start_wing", "depth": "max_hops"}
    ),
    ("DELETE", f"{_V}/tunnels/{{tid}}"): tool_binding(
        "undercroft_delete_tunnel", source=Source.NONE, path={"tid": "tunnel_id"}
    ),
    ("GET", f"{_V}/tunnels/{{tid}}/drawers"): Binding(
        "tunnel_drawers",
        {
            "tunnel_id": string("the tunnel"),
            "limit": integer("at most this many drawers", minimum=1, maximum=1000, default=20),
        },
        _tunnel_drawers,
        source=Source.QUERY,
        path={"tid": "tunnel_id"},
    ),
    ("GET", f"{_V}/wake-up"): tool_binding("undercroft_wake_up", source=Source.QUERY),
    ("POST", f"{_V}/diary"): tool_binding(
        "undercroft_diary_write", rename={"agent": "agent_name"}, status=_diary_status
    ),
    ("GET", f"{_V}/diary"): tool_binding(
        "undercroft_diary_read", source=Source.QUERY, rename={"agent": "agent_name", "limit": "last_n"}
    ),
    ("GET", f"{_V}/diary/agents"): tool_binding("undercroft_list_agents", source=Source.NONE),
    ("GET", f"{_V}/closets"): tool_binding("undercroft_get_closet_index", source=Source.QUERY),
    ("GET", f"{_V}/hallways"): tool_binding("undercroft_list_hallways", source=Source.QUERY, rename={"top": "limit"}),
    ("POST", f"{_V}/verify"): _verify(),
}
"""The agent-plane routes, by ``(method, path)``."""
