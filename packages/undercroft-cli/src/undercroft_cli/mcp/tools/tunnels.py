"""Tunnel tools: create, list, delete, follow, traverse — labelled links between wings (or rooms).

Creation and listing use MemPalace 3.11's argument names (``source_wing``/``source_room``/``target_wing``/
``target_room``/``label``, ``tunnel_id``, ``wing``/``room``, ``max_hops``). Drawers reached by following a
tunnel are rendered as untrusted memory blocks.
"""

from __future__ import annotations

import json

from undercroft_store.memory import tunnels

from undercroft_cli.mcp.arguments import Arguments
from undercroft_cli.mcp.tools.base import ToolOutput, ToolSession, ToolSpec, drawer_block, integer, read_once, string
from undercroft_cli.operations import DRAWER_SCHEMA, drawer_record, reached_records
from undercroft_cli.operations.tunnels import open_tunnel, remove_tunnel, tunnel_records

__all__ = ["TUNNEL_TOOLS"]


def _create(session: ToolSession, args: Arguments) -> ToolOutput:
    tunnel = open_tunnel(
        session.store,
        args.required_text("source_wing"),
        args.required_text("target_wing"),
        args.text("label") or "related",
        from_room=args.text("source_room"),
        to_room=args.text("target_room"),
    )
    return ToolOutput(f"created: {tunnel['id']}", {"tunnel": tunnel})


def _list(session: ToolSession, args: Arguments) -> str:
    found = tunnel_records(session.store, wing=args.text("wing"))
    return json.dumps({"tunnels": found}, indent=2, ensure_ascii=False)


def _delete(session: ToolSession, args: Arguments) -> ToolOutput:
    tunnel_id = args.required_text("tunnel_id")
    remove_tunnel(session.store, tunnel_id)
    return ToolOutput(f"deleted: {tunnel_id}", {"deleted": tunnel_id})


def _follow(session: ToolSession, args: Arguments) -> ToolOutput:
    wing, room = args.required_text("wing"), args.text("room")
    limit = args.integer("limit") or 10
    followed = [
        tunnel
        for tunnel in tunnels.list_tunnels(session.store, wing=wing)
        if room is None or (tunnel.from_room if tunnel.from_wing == wing else tunnel.to_room) in (None, room)
    ]
    reached = read_once(
        session.store,
        "tunnel",
        lambda: [(t, tunnels.follow_tunnel(session.store, t.id, from_wing=wing, limit=limit)) for t in followed],
        subject=wing,
        scope={"from_wing": wing, "room": room},
        count=lambda pairs: sum(len(drawers) for _, drawers in pairs),
    )  # one record for the call, however many tunnels it followed
    data = {
        "tunnels": [
            {"id": t.id, "label": t.label, "drawers": [drawer_record(d, full=False) for d in drawers]}
            for t, drawers in reached
        ]
    }
    blocks = []
    for tunnel, drawers in reached:
        blocks.append(f"tunnel {tunnel.id}: {tunnel.label}")
        blocks.extend(drawer_block(drawer, full=False) for drawer in drawers)
    return ToolOutput("\n".join(blocks) or f"no tunnels from {wing}", data)


def _traverse(session: ToolSession, args: Arguments) -> str:
    hops = args.integer("max_hops") or 2
    reached = tunnels.traverse(session.store, args.required_text("start_wing"), depth=hops)
    return json.dumps({"reached": reached_records(reached)}, indent=2, ensure_ascii=False)


TUNNEL_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "undercroft_create_tunnel",
        "Connect two wings (optionally rooms) with a labelled tunnel.",
        {
            "source_wing": string("origin wing"),
            "source_room": string("origin room (optional)"),
            "target_wing": string("destination wing"),
            "target_room": string("destination room (optional)"),
            "label": string("why they are related"),
        },
        _create,
        required=("source_wing", "target_wing"),
        output={"tunnel": {"type": "object", "required": ["id"], "properties": {"id": {"type": "string"}}}},
    ),
    ToolSpec(
        "undercroft_list_tunnels",
        "List tunnels (labelled links between two wings or rooms), optionally those touching one wing.",
        {"wing": string("only tunnels touching this wing")},
        _list,
        output={"tunnels": {"type": "array", "items": {"type": "object"}}},
    ),
    ToolSpec(
        "undercroft_delete_tunnel",
        "Remove a tunnel (audited).",
        {"tunnel_id": string("tunnel id")},
        _delete,
        required=("tunnel_id",),
        output={"deleted": {"type": "string", "description": "the deleted tunnel's id"}},
    ),
    ToolSpec(
        "undercroft_follow_tunnels",
        "Follow every tunnel leaving a wing (or room): the newest drawers at each far end.",
        {
            "wing": string("wing"),
            "room": string("room (optional)"),
            "limit": integer("drawers per tunnel", minimum=1, maximum=100, default=10),
        },
        _follow,
        required=("wing",),
        output={
            "tunnels": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["id", "label", "drawers"],
                    "properties": {
                        "id": {"type": "string"},
                        "label": {"type": "string"},
                        "drawers": {"type": "array", "items": DRAWER_SCHEMA},
                    },
                },
            }
        },
    ),
    ToolSpec(
        "undercroft_traverse",
        "Wings reachable from a start wing over tunnels, with hop counts.",
        {
            "start_wing": string("start wing"),
            "max_hops": integer("max hops", minimum=1, maximum=tunnels.MAX_DEPTH, default=2),
        },
        _traverse,
        required=("start_wing",),
        output={"reached": {"type": "array", "items": {"type": "object"}, "description": "wing, hops, via"}},
    ),
)
