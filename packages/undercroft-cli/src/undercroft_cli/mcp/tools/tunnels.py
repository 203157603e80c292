"""Tunnel tools: create, list, delete, follow, traverse — labelled links between wings (or rooms).

Creation and listing use MemPalace 3.11's argument names (``source_wing``/``source_room``/``target_wing``/
``target_room``/``label``, ``tunnel_id``, ``wing``/``room``, ``max_hops``). Drawers reached by following a
tunnel are rendered as untrusted memory blocks.
"""

from __future__ import annotations

import json

from undercroft_store.memory import tunnels

from undercroft_cli.mcp.arguments import Arguments
from undercroft_cli.mcp.tools.base import ToolSession, ToolSpec, drawer_block, integer, read_once, string

__all__ = ["TUNNEL_TOOLS"]


def _create(session: ToolSession, args: Arguments) -> str:
    tunnel = tunnels.create_tunnel(
        session.store,
        args.required_text("source_wing"),
        args.required_text("target_wing"),
        args.text("label") or "related",
        from_room=args.text("source_room"),
        to_room=args.text("target_room"),
    )
    return f"created: {tunnel.id}"


def _list(session: ToolSession, args: Arguments) -> str:
    found = tunnels.list_tunnels(session.store, wing=args.text("wing"))
    return json.dumps({"tunnels": [t.to_dict() for t in found]}, indent=2, ensure_ascii=False)


def _delete(session: ToolSession, args: Arguments) -> str:
    tunnel_id = args.required_text("tunnel_id")
    tunnels.delete_tunnel(session.store, tunnel_id)
    return f"deleted: {tunnel_id}"


def _follow(session: ToolSession, args: Arguments) -> str:
    wing, room = args.required_text("wing"), args.text("room")
    limit = args.integer("limit", default=10, low=1, high=100) or 10
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
    blocks = []
    for tunnel, drawers in reached:
        blocks.append(f"tunnel {tunnel.id}: {tunnel.label}")
        blocks.extend(drawer_block(drawer, full=False) for drawer in drawers)
    return "\n".join(blocks) or f"no tunnels from {wing}"


def _traverse(session: ToolSession, args: Arguments) -> str:
    hops = args.integer("max_hops", default=2, low=1, high=tunnels.MAX_DEPTH) or 2
    reached = tunnels.traverse(session.store, args.required_text("start_wing"), depth=hops)
    rows = [{"wing": wing, "hops": depth, "via": via} for wing, depth, via in reached]
    return json.dumps({"reached": rows}, indent=2, ensure_ascii=False)


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
    ),
    ToolSpec(
        "undercroft_list_tunnels", "List tunnels, optionally touching one wing.", {"wing": string("filter")}, _list
    ),
    ToolSpec(
        "undercroft_delete_tunnel",
        "Remove a tunnel (audited).",
        {"tunnel_id": string("tunnel id")},
        _delete,
        required=("tunnel_id",),
    ),
    ToolSpec(
        "undercroft_follow_tunnels",
        "Follow every tunnel leaving a wing (or room): the newest drawers at each far end.",
        {"wing": string("wing"), "room": string("room (optional)"), "limit": integer("drawers per tunnel")},
        _follow,
        required=("wing",),
    ),
    ToolSpec(
        "undercroft_traverse",
        "Wings reachable from a start wing over tunnels, with hop counts.",
        {"start_wing": string("start wing"), "max_hops": integer(f"max hops (1-{tunnels.MAX_DEPTH})")},
        _traverse,
        required=("start_wing",),
    ),
)
