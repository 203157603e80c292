"""The MCP tool inventory as code: 40 tools (12 writes), the READ list, the operator-only capabilities.

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
    """One inventoried tool: name, access class, the title a host shows, its hints, and what it waits for.

    The MCP annotations derive from it: ``readOnlyHint`` is the access class; ``destructiveHint`` marks a
    write that removes or rewrites what was there (deletes, updates, invalidations, supersessions, dedup);
    ``idempotentHint`` a call that repeated with the same arguments changes nothing more (every read is).
    """

    name: str
    access: Access
    title: str
    destructive: bool = False
    idempotent: bool = False
    pending: str | None = None

    @property
    def read_only(self) -> bool:
        """True for a tool that never changes the vault."""
        return self.access is Access.READ

    @property
    def is_pending(self) -> bool:
        """True while the store capability behind the tool has not landed (the tool is not advertised)."""
        return self.pending is not None


_R, _W = Access.READ, Access.WRITE

TOOLS: tuple[ToolEntry, ...] = (
    # Drawers: the agent surface proper.
    ToolEntry("undercroft_save", _W, "Save a memory"),
    ToolEntry("undercroft_add_drawer", _W, "File a drawer in a wing and room"),
    ToolEntry("undercroft_update_drawer", _W, "Replace a drawer's content", destructive=True),
    ToolEntry("undercroft_delete_drawer", _W, "Delete a drawer", destructive=True, idempotent=True),
    ToolEntry(
        "undercroft_delete_by_source", _W, "Delete the drawers mined from a file", destructive=True, idempotent=True
    ),
    ToolEntry("undercroft_search", _R, "Search memories"),
    ToolEntry("undercroft_get_drawer", _R, "Read one drawer"),
    ToolEntry("undercroft_list_drawers", _R, "List drawers"),
    ToolEntry("undercroft_wake_up", _R, "Wake up: the essentials"),
    ToolEntry("undercroft_check_duplicate", _R, "Check for a duplicate"),
    ToolEntry("undercroft_dedup", _W, "Remove duplicate drawers", destructive=True, idempotent=True),
    # Navigation.
    ToolEntry("undercroft_status", _R, "Vault status"),
    ToolEntry("undercroft_list_wings", _R, "List wings"),
    ToolEntry("undercroft_list_rooms", _R, "List rooms"),
    ToolEntry("undercroft_get_taxonomy", _R, "Wing and room taxonomy"),
    ToolEntry("undercroft_get_closet_index", _R, "Topic index (closets)"),
    ToolEntry("undercroft_list_agents", _R, "List diary keepers"),
    ToolEntry("undercroft_diary_write", _W, "Write a diary entry"),
    ToolEntry("undercroft_diary_read", _R, "Read a diary"),
    ToolEntry("undercroft_create_tunnel", _W, "Link two places (tunnel)", idempotent=True),
    ToolEntry("undercroft_list_tunnels", _R, "List tunnels"),
    ToolEntry("undercroft_delete_tunnel", _W, "Delete a tunnel", destructive=True, idempotent=True),
    ToolEntry("undercroft_follow_tunnels", _R, "Follow tunnels from a place"),
    ToolEntry("undercroft_traverse", _R, "Walk the wing graph"),
    ToolEntry("undercroft_list_hallways", _R, "Shared topics across rooms (hallways)"),
    # Integrity and history.
    ToolEntry("undercroft_verify", _R, "Verify the vault's integrity"),
    ToolEntry("undercroft_history", _R, "Audit history"),
    ToolEntry("undercroft_check_erasure_receipt", _R, "Check an erasure receipt"),
    ToolEntry("undercroft_index_status", _R, "Remote index status"),
    ToolEntry("undercroft_supersessions", _R, "Supersession links and their verdicts"),
    # Knowledge graph.
    ToolEntry("undercroft_kg_add", _W, "Add a fact"),
    ToolEntry("undercroft_kg_invalidate", _W, "End a fact", destructive=True, idempotent=True),
    ToolEntry("undercroft_kg_supersede", _W, "Replace a fact's value", destructive=True),
    ToolEntry("undercroft_kg_query", _R, "Facts about an entity"),
    ToolEntry("undercroft_kg_timeline", _R, "Fact timeline"),
    ToolEntry("undercroft_kg_stats", _R, "Knowledge-graph counts"),
    ToolEntry("undercroft_kg_rel", _R, "Facts by relation"),
    ToolEntry("undercroft_kg_receipts", _R, "Fact receipts against their sources"),
    ToolEntry("undercroft_lookup_canonical", _R, "The approved answer for a key"),
    ToolEntry("undercroft_kg_entities", _R, "Knowledge-graph entities"),
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
