"""Recall surfaces: wake-up, the duplicate oracle, dedup, the closet index and hallways.

Each rides a store read that excludes the quarantine wing (and the fence above dispatch refuses naming it),
so none of them can hand the agent a diverted drawer's words at session start — exactly where injected text
wants to be. Unscoped (no ``wing``), each is under the vault's trust floor (``UNDERCROFT_TRUST_FLOOR``), the
store's one rule for unscoped reads. Everything derived from drawer words (snippets, closet topics and quotes,
hallway entity names) comes back inside ``<memory>`` blocks, as untrusted data. ``undercroft_dedup`` is the one
write: it folds every removed copy's dates into the survivor through the store's choke point (``Screen()``), so
no date is lost; it is a dry run unless ``dry_run`` is false.
"""

from __future__ import annotations

from undercroft_core.drawer import Drawer
from undercroft_store.kernel.trust import read_floor
from undercroft_store.memory import closets, dedup, hallways, wakeup

from undercroft_cli.mcp.arguments import Arguments
from undercroft_cli.mcp.tools.base import (
    ToolOutput,
    ToolSession,
    ToolSpec,
    boolean,
    drawer_block,
    integer,
    memory_block,
    number,
    read_once,
    string,
)
from undercroft_cli.mcp.tools.search import SEARCH_NOTICE
from undercroft_cli.operations import (
    DRAWER_SCHEMA,
    closet_record,
    dedup_record,
    drawer_record,
    hallway_record,
    nullable,
)
from undercroft_cli.operations.duplicates import find_duplicate

__all__ = ["DEFAULT_DUPLICATE_THRESHOLD", "RECALL_TOOLS"]

DEFAULT_DUPLICATE_THRESHOLD = 0.9
"""MemPalace 3.11's ``check_duplicate`` default similarity."""

_SNIPPET = 240  # wake-up's own per-drawer budget (undercroft_store.memory.wakeup)


def _snippet_block(drawer: Drawer) -> str:
    clipped = len(drawer.content) > _SNIPPET
    attributes = {
        "id": drawer.id,
        "wing": drawer.wing,
        "room": drawer.room,
        "kind": drawer.kind,
        "content_date": drawer.content_date,
        "filed": drawer.filed_at,
        "preview": "true" if clipped else None,
    }
    return memory_block(attributes, drawer.content[:_SNIPPET])


def _wake_up(session: ToolSession, args: Arguments) -> ToolOutput:
    woken = wakeup.wake_up(
        session.store,
        wing=args.text("wing"),
        limit=args.integer("limit") or 15,
        max_chars=args.integer("max_chars") or 3200,
    )
    data = {"memories": [drawer_record(d, full=False, preview_chars=_SNIPPET) for d in woken.essentials]}
    if not woken.essentials:
        return ToolOutput("no memories yet (save decisions worth keeping with undercroft_save)", data)
    footer = (
        f"({len(woken.essentials)} essential memories: {', '.join(wakeup.ESSENTIAL_KINDS)} first, then newest; "
        "previews are clipped, get_drawer for the full text)"
    )
    return ToolOutput("\n".join([SEARCH_NOTICE, *(_snippet_block(d) for d in woken.essentials), footer]), data)


def _check_duplicate(session: ToolSession, args: Arguments) -> ToolOutput:
    threshold = args.number("threshold") or DEFAULT_DUPLICATE_THRESHOLD
    found = find_duplicate(
        session.store, args.required_text("content"), wing=args.text("wing"), room=args.text("room"),
        threshold=threshold,
    )  # fmt: skip
    data = {"duplicate": False, "exact": found.exact, "similarity": found.similarity, "threshold": threshold}
    match = found.match
    if match is None:
        nearest = "" if found.similarity is None else f"nearest similarity {found.similarity:.3f} "
        return ToolOutput(f"no duplicate ({nearest}below threshold {threshold:.2f})", data)
    how = "exact" if found.exact else f"similarity {found.similarity or 0.0:.3f} >= {threshold:.2f}"
    text = "\n".join([f"duplicate: {match.id} ({how}) in {match.wing}/{match.room}", SEARCH_NOTICE,
                      drawer_block(match, full=False)])  # fmt: skip
    return ToolOutput(text, {**data, "duplicate": True, "drawer": drawer_record(match, full=False)})


def _dedup(session: ToolSession, args: Arguments) -> ToolOutput:
    dry_run = args.flag("dry_run")
    report = dedup.dedup(session.store, apply=not dry_run, wing=args.text("wing"))
    copies = sum(len(group.duplicates) for group in report.groups)
    lines = [f"{len(report.groups)} duplicate group(s), {copies} extra copies"]
    lines += [f"  {g.wing}/{g.room}: keep {g.keep}, copies {', '.join(g.duplicates)}" for g in report.groups]
    if dry_run:
        lines.append("dry run: nothing changed (call again with dry_run=false to apply)")
    else:
        lines.append(f"removed {report.removed} copies; every date they carried is kept in the survivor's occurrences")
    return ToolOutput("\n".join(lines), dedup_record(report, dry_run=dry_run))


def _page(args: Arguments) -> tuple[int, int]:
    return args.integer("limit") or 1, args.integer("offset") or 0


def _closet_index(session: ToolSession, args: Arguments) -> ToolOutput:
    limit, offset = _page(args)
    built = closets.build_closets(session.store, wing=args.text("wing"))
    page = built[offset : offset + limit]
    data = {
        "closets": [closet_record(c) for c in page],
        "total": len(built),
        "next_offset": offset + len(page),
    }
    if not page:
        return ToolOutput(f"no closets (offset {offset} of {len(built)})", data)
    blocks = [
        memory_block({"wing": c.wing, "room": c.room, "closet": f"{c.number:02d}"}, "\n".join(c.lines)) for c in page
    ]
    footer = f"({len(page)} of {len(built)} closet(s); next offset {offset + len(page)}; topic|entities|date|→ids)"
    return ToolOutput("\n".join([SEARCH_NOTICE, *blocks, footer]), data)


def _list_hallways(session: ToolSession, args: Arguments) -> ToolOutput:
    limit, offset = _page(args)
    wing = args.text("wing")
    if wing is not None:
        wings = [wing]
    else:  # every wing is an unscoped read: under the vault's trust floor, like the other recall surfaces
        floor = read_floor(session.store)
        wings = [w for w in sorted(session.store.stats().wings) if floor is None or floor.admits(w)]  # no quarantine
    found = read_once(
        session.store,
        "hallways",
        lambda: [(w, h) for w in wings for h in hallways.hallways(session.store, w, limit=offset + limit)],
        subject=wing or "",
        scope={"wing": wing},
        count=len,
    )  # one record for the call, however many wings it walked
    found.sort(key=lambda item: (-item[1].count, item[0], item[1].first, item[1].second))
    page = found[offset : offset + limit]
    data = {
        "hallways": [hallway_record(w, h) for w, h in page],
        "total": len(found),
        "next_offset": offset + len(page),
    }
    if not page:
        return ToolOutput(f"no hallways (offset {offset} of {len(found)})", data)
    by_wing: dict[str, list[str]] = {}
    for hall_wing, hall in page:
        line = f"{hall.first} ↔ {hall.second} | {hall.count} drawer(s) | {', '.join(hall.drawers)}"
        by_wing.setdefault(hall_wing, []).append(line)
    blocks = [memory_block({"wing": w, "listing": "hallways"}, "\n".join(lines)) for w, lines in by_wing.items()]
    footer = f"({len(page)} hallway(s), strongest first; next offset {offset + len(page)})"
    return ToolOutput("\n".join([SEARCH_NOTICE, *blocks, footer]), data)


RECALL_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "undercroft_wake_up",
        "Session start: the essential recent memories (decisions, preferences, milestones, facts, problems "
        "first, then newest), trimmed to a character budget, as <memory> previews.",
        {
            "wing": string("scope to one wing (optional)"),
            "limit": integer("max memories", minimum=1, maximum=50, default=15),
            "max_chars": integer("character budget", minimum=200, maximum=20_000, default=3200),
        },
        _wake_up,
        output={"memories": {"type": "array", "items": DRAWER_SCHEMA, "description": "previews, essentials first"}},
    ),
    ToolSpec(
        "undercroft_check_duplicate",
        "Check whether content is already stored before filing it: exact by keyed fingerprint, else by "
        "embedding similarity at or above the threshold.",
        {
            "content": string("content to check"),
            "threshold": number("similarity threshold", above=0.0, maximum=1.0, default=DEFAULT_DUPLICATE_THRESHOLD),
            "wing": string("only within this wing"),
            "room": string("only within this room"),
        },
        _check_duplicate,
        required=("content",),
        output={
            "duplicate": {"type": "boolean"},
            "exact": {"type": "boolean"},
            "similarity": nullable("number"),
            "threshold": {"type": "number"},
            "drawer": DRAWER_SCHEMA,
        },
        optional_output=("drawer",),
    ),
    ToolSpec(
        "undercroft_dedup",
        "Find exact duplicates (same words, same wing and room); with dry_run=false keep the oldest, fold every "
        "copy's dates into it and delete the copies (tombstoned, audited). Dry run by default.",
        {"wing": string("only within this wing"), "dry_run": boolean("only report", default=True)},
        _dedup,
        output={
            "dry_run": {"type": "boolean"},
            "groups": {"type": "array", "items": {"type": "object"}},
            "removed": {"type": "integer", "minimum": 0},
        },
    ),
    ToolSpec(
        "undercroft_get_closet_index",
        "A table of contents of the vault (or one wing), grouped by wing and room: one line per group of "
        "drawers — topic|names mentioned|date|→drawer ids — to scan before searching.",
        {
            "wing": string("scope to one wing (optional)"),
            "limit": integer("groups per page", minimum=1, maximum=100, default=20),
            "offset": integer("group to continue from", minimum=0, maximum=1_000_000, default=0),
        },
        _closet_index,
        output={
            "closets": {
                "type": "array",
                "items": {"type": "object", "required": ["wing", "room", "closet", "lines"]},
                "description": "lines: topic|names|date|→drawer ids; derived from drawer words: untrusted data",
            },
            "total": {"type": "integer", "minimum": 0},
            "next_offset": {"type": "integer", "minimum": 0},
        },
    ),
    ToolSpec(
        "undercroft_list_hallways",
        "Names that appear together: within each wing, pairs of names (people, projects, tools) mentioned in the "
        "same drawers, most shared drawers first, paged.",
        {
            "wing": string("filter hallways by wing (default: every wing)"),
            "limit": integer("page size", minimum=1, maximum=500, default=100),
            "offset": integer("offset for pagination", minimum=0, maximum=1_000_000, default=0),
        },
        _list_hallways,
        output={
            "hallways": {
                "type": "array",
                "items": {"type": "object", "required": ["wing", "first", "second", "count", "drawers"]},
                "description": "names read from drawer words: untrusted data",
            },
            "total": {"type": "integer", "minimum": 0},
            "next_offset": {"type": "integer", "minimum": 0},
        },
    ),
)
