"""The MCP tool inventory as code: 38 tools (12 writes), the READ list, the operator-only capabilities.

The inventory is counted against the live server's ``tools/list`` in both directions by the tests: a tool
advertised without an entry fails, and an entry the server does not advertise fails unless it is marked
pending with the store capability it waits for. A pending tool is never advertised (no stubs).

Names are MemPalace 3.11's under the ``undercroft_`` prefix where the tool exists there, plus the tools the
Undercroft documents name. ``READ`` is the list a ``--read-only`` server serves; the gate fails closed, so a
tool missing from it is refused rather than served.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum

__all__ = [
    "OPERATOR_ONLY",
    "PENDING",
    "READ",
    "TOOLS",
    "TOOL_PREFIX",
    "WRITE",
    "Access",
    "ToolEntry",
    "advertised_names",
    "entry",
]

TOOL_PREFIX = "undercroft_"


class Access(StrEnum):
    """Whether a tool only reads the vault or may change it."""

    READ = "read"
    WRITE = "write"


@dataclass(frozen=True, slots=True)
class ToolEntry:
    """One inventoried tool: its name, its access class, and — while unbuilt — what it waits for."""

    name: str
    access: Access
    pending: str | None = None

    @property
    def is_pending(self) -> bool:
        """True while the store capability behind the tool has not landed (the tool is not advertised)."""
        return self.pending is not None


_R, _W = Access.READ, Access.WRITE

TOOLS: tuple[ToolEntry, ...] = (
    # Drawers: the agent surface proper.
    ToolEntry("undercroft_save", _W),
    ToolEntry("undercroft_add_drawer", _W),
    ToolEntry("undercroft_update_drawer", _W),
    ToolEntry("undercroft_delete_drawer", _W),
    ToolEntry("undercroft_delete_by_source", _W),
    ToolEntry("undercroft_search", _R),
    ToolEntry("undercroft_get_drawer", _R),
    ToolEntry("undercroft_list_drawers", _R),
    ToolEntry("undercroft_wake_up", _R),
    ToolEntry("undercroft_check_duplicate", _R),
    ToolEntry("undercroft_dedup", _W),
    # Navigation.
    ToolEntry("undercroft_status", _R),
    ToolEntry("undercroft_list_wings", _R),
    ToolEntry("undercroft_list_rooms", _R),
    ToolEntry("undercroft_get_taxonomy", _R),
    ToolEntry("undercroft_get_closet_index", _R),
    ToolEntry("undercroft_list_agents", _R),
    ToolEntry("undercroft_diary_write", _W),
    ToolEntry("undercroft_diary_read", _R),
    ToolEntry("undercroft_create_tunnel", _W),
    ToolEntry("undercroft_list_tunnels", _R),
    ToolEntry("undercroft_delete_tunnel", _W),
    ToolEntry("undercroft_follow_tunnels", _R),
    ToolEntry("undercroft_traverse", _R),
    ToolEntry("undercroft_list_hallways", _R),
    # Integrity and history.
    ToolEntry("undercroft_verify", _R),
    ToolEntry("undercroft_history", _R),
    ToolEntry("undercroft_check_erasure_receipt", _R),
    ToolEntry("undercroft_index_status", _R, pending="remote vector mirrors wired into the store"),
    # Knowledge graph.
    ToolEntry("undercroft_kg_add", _W),
    ToolEntry("undercroft_kg_invalidate", _W),
    ToolEntry("undercroft_kg_supersede", _W),
    ToolEntry("undercroft_kg_query", _R),
    ToolEntry("undercroft_kg_timeline", _R),
    ToolEntry("undercroft_kg_stats", _R),
    ToolEntry("undercroft_kg_rel", _R),
    ToolEntry("undercroft_kg_receipts", _R),
    ToolEntry("undercroft_lookup_canonical", _R),
)

READ: frozenset[str] = frozenset(t.name for t in TOOLS if t.access is Access.READ)
"""The tools a ``--read-only`` server serves; every other name is refused at the call."""

WRITE: frozenset[str] = frozenset(t.name for t in TOOLS if t.access is Access.WRITE)
"""The mutating tools (derived: the inventory minus ``READ``)."""

PENDING: dict[str, str] = {t.name: t.pending for t in TOOLS if t.pending is not None}
"""Inventoried tools not advertised yet, each with the store capability it waits for."""

OPERATOR_ONLY: tuple[str, ...] = (
    "admission",  # rulings on the quarantine queue that exists to contain the agent
    "trust",  # wing trust assignment decides what the agent may retrieve
    "retention",  # shortening the life of the memory the agent reads
    "forget",  # attested destruction
    "rotate",  # key rotation: an operation on the integrity machinery
    "authority",  # promoting a fact to the single answer lookup_canonical returns
    "anchor",  # moving the out-of-database evidence a rollback is detected against
    "export",  # the egress act: a whole corpus out in one call
    "import",  # records the agent did not compose, with caller-chosen ids and filed_at
    "refine",  # laundering text into the graph through a model
)
"""Capabilities no MCP tool may carry: a tool name containing one of these is a threat-model change."""


def entry(name: str) -> ToolEntry:
    """The inventory entry for ``name`` (``KeyError`` when the name is not inventoried)."""
    for tool in TOOLS:
        if tool.name == name:
            return tool
    raise KeyError(name)


def advertised_names() -> frozenset[str]:
    """The names the server must advertise: every entry that is not pending."""
    return frozenset(t.name for t in TOOLS if not t.is_pending)
