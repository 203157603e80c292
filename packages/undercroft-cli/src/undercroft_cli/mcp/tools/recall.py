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


def _wake_up(session: ToolSession, args: Arguments) -> str:
    woken = wakeup.wake_up(
        session.store,
        wing=args.text("wing"),
        limit=args.integer("limit", default=15, low=1, high=50) or 15,
        max_chars=args.integer("max_chars", default=3200, low=200, high=20_000) or 3200,
    )
    if not woken.essentials:
        return "no memories yet (save decisions worth keeping with undercroft_save)"
    footer = (
        f"({len(woken.essentials)} essential memories: {', '.join(wakeup.ESSENTIAL_KINDS)} first, then newest; "
        "previews are clipped, get_drawer for the full text)"
    )
    return "\n".join([SEARCH_NOTICE, *(_snippet_block(d) for d in woken.essentials), footer])


def _check_duplicate(session: ToolSession, args: Arguments) -> str:
    threshold = args.number("threshold", default=DEFAULT_DUPLICATE_THRESHOLD, low=0.0, high=1.0)
    found = dedup.check_duplicate(
        session.store, args.required_text("content"), wing=args.text("wing"), room=args.text("room"),
        threshold=threshold,
    )  # fmt: skip
    if not found.duplicate or found.id is None:
        nearest = "" if found.similarity is None else f"nearest similarity {found.similarity:.3f} "
        return f"no duplicate ({nearest}below threshold {threshold:.2f})"
    # A verified read that refuses a quarantine resident: defence in depth behind the store's own exclusion.
    match = session.store.get(found.id)
    how = "exact" if found.exact else f"similarity {found.similarity or 0.0:.3f} >= {threshold:.2f}"
    return "\n".join([f"duplicate: {match.id} ({how}) in {match.wing}/{match.room}", SEARCH_NOTICE,
                      drawer_block(match, full=False)])  # fmt: skip


def _dedup(session: ToolSession, args: Arguments) -> str:
    dry_run = args.flag("dry_run", default=True)
    report = dedup.dedup(session.store, apply=not dry_run, wing=args.text("wing"))
    copies = sum(len(group.duplicates) for group in report.groups)
    lines = [f"{len(report.groups)} duplicate group(s), {copies} extra copies"]
    lines += [f"  {g.wing}/{g.room}: keep {g.keep}, copies {', '.join(g.duplicates)}" for g in report.groups]
    if dry_run:
        lines.append("dry run: nothing changed (call again with dry_run=false to apply)")
    else:
        lines.append(f"removed {report.removed} copies; every date they carried is kept in the survivor's occurrences")
    return "\n".join(lines)


def _page(args: Arguments, *, default: int, high: int) -> tuple[int, int]:
    limit = args.integer("limit", default=default, low=1, high=high) or default
    return limit, args.integer("offset", default=0, low=0, high=1_000_000) or 0


def _closet_index(session: ToolSession, args: Arguments) -> str:
    limit, offset = _page(args, default=20, high=100)
    built = closets.build_closets(session.store, wing=args.text("wing"))
    page = built[offset : offset + limit]
    if not page:
        return f"no closets (offset {offset} of {len(built)})"
    blocks = [
        memory_block({"wing": c.wing, "room": c.room, "closet": f"{c.number:02d}"}, "\n".join(c.lines)) for c in page
    ]
    footer = f"({len(page)} of {len(built)} closet(s); next offset {offset + len(page)}; topic|entities|date|→ids)"
    return "\n".join([SEARCH_NOTICE, *blocks, footer])


def _list_hallways(session: ToolSession, args: Arguments) -> str:
    limit, offset = _page(args, default=100, high=500)
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
    if not page:
        return f"no hallways (offset {offset} of {len(found)})"
    by_wing: dict[str, list[str]] = {}
    for hall_wing, hall in page:
        line = f"{hall.first} <-> {hall.second} | {hall.count} drawer(s) | {', '.join(hall.drawers)}"
        by_wing.setdefault(hall_wing, []).append(line)
    blocks = [memory_block({"wing": w, "listing": "hallways"}, "\n".join(lines)) for w, lines in by_wing.items()]
    footer = f"({len(page)} hallway(s), strongest first; next offset {offset + len(page)})"
    return "\n".join([SEARCH_NOTICE, *blocks, footer])


RECALL_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "undercroft_wake_up",
        "Session start: the essential recent memories (decisions, preferences, milestones, facts, problems "
        "first, then newest), trimmed to a character budget, as <memory> previews.",
        {
            "wing": string("scope to one wing (optional)"),
            "limit": integer("max memories (1-50, default 15)"),
            "max_chars": integer("character budget (200-20000, default 3200)"),
        },
        _wake_up,
    ),
    ToolSpec(
        "undercroft_check_duplicate",
        "Check whether content is already stored before filing it: exact by keyed fingerprint, else by "
        "embedding similarity at or above the threshold.",
        {
            "content": string("content to check"),
            "threshold": number(f"similarity threshold in (0, 1] (default {DEFAULT_DUPLICATE_THRESHOLD})"),
            "wing": string("only within this wing"),
            "room": string("only within this room"),
        },
        _check_duplicate,
        required=("content",),
    ),
    ToolSpec(
        "undercroft_dedup",
        "Find exact duplicates (same words, same wing and room); with dry_run=false keep the oldest, fold every "
        "copy's dates into it and delete the copies (tombstoned, audited). Dry run by default.",
        {"wing": string("only within this wing"), "dry_run": boolean("only report (default true)")},
        _dedup,
    ),
    ToolSpec(
        "undercroft_get_closet_index",
        "The compact index of the vault (or a wing): per wing/room closet, one line per drawer group — "
        "topic|entities|date|→drawer ids — to scan before searching.",
        {
            "wing": string("scope to one wing (optional)"),
            "limit": integer("closets per page (1-100, default 20)"),
            "offset": integer("closet to continue from"),
        },
        _closet_index,
    ),
    ToolSpec(
        "undercroft_list_hallways",
        "Within-wing entity co-occurrence: pairs of names mentioned in the same drawers, strongest first, paged.",
        {
            "wing": string("filter hallways by wing (default: every wing)"),
            "limit": integer("page size (1-500, default 100)"),
            "offset": integer("offset for pagination"),
        },
        _list_hallways,
    ),
)
