"""Diary tools: write, read, list agents — per-agent diaries in the store's ``diary-<agent>`` wings.

Arguments are MemPalace 3.11's (``agent_name``, ``entry`` with ``content`` as its alias, ``topic``,
``last_n``). The write is the CLI's (``operations.diaries.write_entry``) with one argument its own: the CLI stamps
``added_by="diary:<agent>"`` from its operator's agent name, but over MCP the name is a claim, and a claim must
never become the writing surface the trusted-sources bypass matches. So every entry is stamped with the
surface (``added_by="mcp"``), the agent is recorded as a claim, and the drawers go through the choke point with
``Screen()`` (a diverted entry is reported as quarantined, never as written).
"""

from __future__ import annotations

import json

from undercroft_core.errors import InvalidInput
from undercroft_core.names import validate_name
from undercroft_store.errors import NothingToRemember
from undercroft_store.memory.diaries import DIARY_ROOM, diary_wing, read_diary

from undercroft_cli.mcp.arguments import Arguments
from undercroft_cli.mcp.errors import InvalidArgument
from undercroft_cli.mcp.tools.base import ToolOutput, ToolSession, ToolSpec, drawer_block, integer, string
from undercroft_cli.mcp.tools.drawers import describe_write
from undercroft_cli.mcp.tools.search import SEARCH_NOTICE
from undercroft_cli.operations import DRAWER_SCHEMA, WRITE_PROPERTIES, drawer_record
from undercroft_cli.operations.diaries import diary_keepers, write_entry

__all__ = ["DIARY_TOOLS"]


def _topic(args: Arguments) -> str | None:
    topic = args.text("topic")
    if topic is None:
        return None
    try:
        return validate_name(topic, what="topic")
    except InvalidInput as error:
        raise InvalidArgument(f"{args.tool}: argument 'topic': {error}") from None


def _diary_write(session: ToolSession, args: Arguments) -> ToolOutput:
    agent = args.required_text("agent_name")
    wing = diary_wing(agent)
    room = _topic(args) or DIARY_ROOM
    entry = args.text("entry")
    if entry is None:  # MemPalace accepts 'content' as an alias; 'entry' wins when both are given
        entry = args.text("content")
    if entry is None:
        raise InvalidArgument(f"{args.tool}: argument 'entry' (or its alias 'content') is required")
    try:
        results = write_entry(session.store, agent, entry, topic=room, added_by=session.surface)
    except NothingToRemember:
        raise InvalidArgument(f"{args.tool}: argument 'entry' is empty after normalisation") from None
    text = "\n".join(describe_write(result, wing=wing, room=room) for result in results)
    rows = [{"outcome": r.outcome, "id": r.id, "wing": wing, "room": room} for r in results]
    return ToolOutput(text, {"results": rows})


def _diary_read(session: ToolSession, args: Arguments) -> ToolOutput:
    agent = args.required_text("agent_name")
    last = args.integer("last_n") or 10
    entries = read_diary(session.store, agent, last=last, topic=_topic(args))
    data = {"agent": agent, "entries": [drawer_record(d, full=False) for d in entries]}
    if not entries:
        return ToolOutput(f"no diary entries for {agent}", data)
    footer = f"({len(entries)} entr{'y' if len(entries) == 1 else 'ies'} of {agent}'s diary, newest first)"
    return ToolOutput("\n".join([SEARCH_NOTICE, *(drawer_block(d, full=False) for d in entries), footer]), data)


def _list_agents(session: ToolSession, args: Arguments) -> str:
    return json.dumps(diary_keepers(session.store), indent=2, ensure_ascii=False)


_AGENT = string("your name: each agent has its own diary wing (diary-<agent_name>)")

DIARY_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "undercroft_diary_write",
        "Append an entry to your own agent diary (kept verbatim, one drawer per chunk, screened like any save).",
        {
            "agent_name": _AGENT,
            "entry": string("the diary entry"),
            "content": string("alias for 'entry' ('entry' wins when both are given)"),
            "topic": string("topic room", default=DIARY_ROOM),
        },
        _diary_write,
        required=("agent_name",),
        output={"results": {"type": "array", "items": {"type": "object", "properties": WRITE_PROPERTIES}}},
    ),
    ToolSpec(
        "undercroft_diary_read",
        "Read your recent diary entries, newest first: what past sessions of you recorded.",
        {
            "agent_name": _AGENT,
            "last_n": integer("number of recent entries", minimum=1, maximum=100, default=10),
            "topic": string("only this topic room (optional)"),
        },
        _diary_read,
        required=("agent_name",),
        output={"agent": {"type": "string"}, "entries": {"type": "array", "items": DRAWER_SCHEMA}},
    ),
    ToolSpec(
        "undercroft_list_agents",
        "Every agent that keeps a diary, with its entry count.",
        {},
        _list_agents,
        output={"agents": {"type": "object", "additionalProperties": {"type": "integer"}}},
    ),
)
