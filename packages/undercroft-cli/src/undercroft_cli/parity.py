"""The parity table: every capability × every surface (CLI, MCP, /v1) — present, or absent with its reason.

A test counts it against the live CLI command tree, the MCP server's inventory and the /v1 route table in both
directions: a command, tool or route that no row names fails, and a row naming one that does not exist fails.
An absence is either a **boundary** (a deliberate design decision, with the reason the documents give) or a
**gap** (not built yet, named as such so it cannot pass for a decision). The CLI-only commands are the local
program itself: set-up, mining, serving and key tooling, which have no per-vault operation to mirror.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["CLI_ONLY", "OPERATION_BYPASSES", "PARITY", "Capability"]

_OPERATOR = "boundary: an operator surface, deliberately never MCP (inventory OPERATOR_ONLY: {})"
_KG_WRITE = (
    "boundary: /v1's graph is the read-only browse plus the authority tier (the documents' table); facts are "
    "written through MCP, the CLI, import and refine"
)
_LIFECYCLE = "boundary: vault lifecycle is an operator act on the palace, and MCP serves the one --vault vault"

_V = "/v1/vaults/{id}"


@dataclass(frozen=True, slots=True)
class Capability:
    """One capability: the CLI commands, MCP tools and /v1 routes that carry it, or why a surface does not."""

    name: str
    cli: tuple[str, ...] | str
    mcp: tuple[str, ...] | str
    v1: tuple[tuple[str, str], ...] | str


def _op(word: str) -> str:
    return _OPERATOR.format(word)


PARITY: tuple[Capability, ...] = (
    Capability("save", ("remember",), ("undercroft_save", "undercroft_add_drawer"), (("POST", f"{_V}/drawers"),)),
    Capability(
        "update a drawer",
        ("drawer update",),
        ("undercroft_update_drawer",),
        (("PUT", f"{_V}/drawers/{{drawer_id}}"),),
    ),
    Capability(
        "delete a drawer",
        ("drawer delete",),
        ("undercroft_delete_drawer",),
        (("DELETE", f"{_V}/drawers/{{drawer_id}}"),),
    ),
    Capability(
        "delete by source",
        ("drawer delete-by-source",),
        ("undercroft_delete_by_source",),
        (("DELETE", f"{_V}/drawers"),),
    ),
    Capability("get a drawer", ("drawer get",), ("undercroft_get_drawer",), (("GET", f"{_V}/drawers/{{drawer_id}}"),)),
    Capability("list drawers", ("drawer list",), ("undercroft_list_drawers",), (("GET", f"{_V}/drawers"),)),
    Capability("search", ("search",), ("undercroft_search",), (("POST", f"{_V}/search"),)),
    Capability("wake-up", ("wake-up",), ("undercroft_wake_up",), (("GET", f"{_V}/wake-up"),)),
    Capability(
        "duplicate check",
        ("drawer check-dup",),
        ("undercroft_check_duplicate",),
        (("POST", f"{_V}/drawers/check-duplicate"),),
    ),
    Capability("dedup", ("dedup",), ("undercroft_dedup",), (("POST", f"{_V}/dedup"),)),
    Capability("stats", ("stats",), ("undercroft_status",), (("GET", f"{_V}/stats"),)),
    Capability(
        "taxonomy",
        ("taxonomy",),
        ("undercroft_list_wings", "undercroft_list_rooms", "undercroft_get_taxonomy"),
        (("GET", f"{_V}/taxonomy"),),
    ),
    Capability("closets", ("closets",), ("undercroft_get_closet_index",), (("GET", f"{_V}/closets"),)),
    Capability("hallways", ("hallways",), ("undercroft_list_hallways",), (("GET", f"{_V}/hallways"),)),
    Capability("diary write", ("diary write",), ("undercroft_diary_write",), (("POST", f"{_V}/diary"),)),
    Capability("diary read", ("diary read",), ("undercroft_diary_read",), (("GET", f"{_V}/diary"),)),
    Capability("diary keepers", ("diary agents",), ("undercroft_list_agents",), (("GET", f"{_V}/diary/agents"),)),
    Capability("tunnel create", ("tunnel create",), ("undercroft_create_tunnel",), (("POST", f"{_V}/tunnels"),)),
    Capability("tunnel list", ("tunnel list",), ("undercroft_list_tunnels",), (("GET", f"{_V}/tunnels"),)),
    Capability(
        "tunnel delete", ("tunnel delete",), ("undercroft_delete_tunnel",), (("DELETE", f"{_V}/tunnels/{{tid}}"),)
    ),
    Capability(
        "tunnel follow",
        ("tunnel follow",),
        ("undercroft_follow_tunnels",),
        (("GET", f"{_V}/tunnels/{{tid}}/drawers"),),
    ),
    Capability("traverse", ("tunnel traverse",), ("undercroft_traverse",), (("GET", f"{_V}/tunnels/traverse"),)),
    Capability("verify", ("verify",), ("undercroft_verify",), (("POST", f"{_V}/verify"),)),
    Capability(
        "audit history",
        ("history",),
        ("undercroft_history",),
        (("GET", f"{_V}/history"),),
    ),
    Capability(
        "check an erasure receipt",
        ("verify-forgetting",),
        ("undercroft_check_erasure_receipt",),
        (("POST", f"{_V}/verify-forgetting"),),
    ),
    Capability(
        "remote index status", ("index status",), ("undercroft_index_status",), (("GET", f"{_V}/index/status"),)
    ),
    Capability(
        "remote index push",
        ("index push",),
        "boundary: an egress act (the corpus leaves for a remote index): operator only, like export",
        "gap: not in the documents' /v1 table; push from the CLI",
    ),
    Capability("fact add", ("kg add",), ("undercroft_kg_add",), _KG_WRITE),
    Capability("fact invalidate", ("kg invalidate",), ("undercroft_kg_invalidate",), _KG_WRITE),
    Capability("fact supersede", ("kg supersede",), ("undercroft_kg_supersede",), _KG_WRITE),
    Capability("fact query", ("kg query",), ("undercroft_kg_query",), (("GET", f"{_V}/kg/query"),)),
    Capability("fact timeline", ("kg timeline",), ("undercroft_kg_timeline",), (("GET", f"{_V}/kg/timeline"),)),
    Capability("graph stats", ("kg stats",), ("undercroft_kg_stats",), (("GET", f"{_V}/kg/stats"),)),
    Capability("facts by relation", ("kg rel",), ("undercroft_kg_rel",), (("GET", f"{_V}/kg/rel"),)),
    Capability("fact receipts", ("kg receipts",), ("undercroft_kg_receipts",), (("GET", f"{_V}/kg/receipts"),)),
    Capability(
        "canonical answer",
        ("kg canonical",),
        ("undercroft_lookup_canonical",),
        (("GET", f"{_V}/kg/canonical/{{key}}"),),
    ),
    Capability(
        "graph entities",
        ("kg entities",),
        ("undercroft_kg_entities",),
        (("GET", f"{_V}/kg/entities"),),
    ),
    Capability("authority tier", ("kg authority",), _op("authority"), (("POST", f"{_V}/kg/authority"),)),
    Capability(
        "supersession links",
        ("supersessions",),
        ("undercroft_supersessions",),
        (("GET", f"{_V}/supersessions"),),
    ),
    Capability("vault create", ("vault create",), _LIFECYCLE, (("POST", "/v1/vaults"),)),
    Capability("vault list", ("vault list",), _LIFECYCLE, (("GET", "/v1/vaults"),)),
    Capability("vault delete", ("vault delete",), _LIFECYCLE, (("DELETE", _V),)),
    Capability("rotate", ("vault rotate",), _op("rotate"), (("POST", f"{_V}/rotate"),)),
    Capability("backup create", ("backup create",), _LIFECYCLE, (("POST", f"{_V}/backups"),)),
    Capability("backup list", ("backup list",), _LIFECYCLE, (("GET", f"{_V}/backups"),)),
    Capability("backup restore", ("backup restore",), _LIFECYCLE, (("POST", f"{_V}/backups/restore"),)),
    Capability(
        "repair",
        ("repair",),
        "boundary: remediation rewrites the vault's integrity material; an operator act",
        (("POST", f"{_V}/repair"),),
    ),
    Capability("admission queue", ("admission list",), _op("admission"), (("GET", f"{_V}/admission"),)),
    Capability(
        "admission ruling", ("admission allow", "admission deny"), _op("admission"), (("POST", f"{_V}/admission"),)
    ),
    Capability("trust list", ("trust list",), _op("trust"), (("GET", f"{_V}/trust"),)),
    Capability("trust set", ("trust set",), _op("trust"), (("POST", f"{_V}/trust"),)),
    Capability("retention list", ("retention list",), _op("retention"), (("GET", f"{_V}/retention"),)),
    Capability("retention set", ("retention set",), _op("retention"), (("POST", f"{_V}/retention"),)),
    Capability(
        "retention clear",
        ("retention clear",),
        _op("retention"),
        "gap: not in the documents' /v1 table; clear from the CLI",
    ),
    Capability("retention sweep", ("retention sweep",), _op("retention"), (("POST", f"{_V}/retention/sweep"),)),
    Capability("forget", ("forget",), _op("forget"), (("POST", f"{_V}/forget"),)),
    Capability(
        "witness emit",
        ("witness emit",),
        "boundary: the witness routes are off MCP by the maintainer's ruling (O245)",
        (("GET", f"{_V}/witness"),),
    ),
    Capability(
        "witness check",
        ("witness check",),
        "boundary: the witness routes are off MCP by the maintainer's ruling (O245)",
        (("POST", f"{_V}/witness"),),
    ),
    Capability("anchor", ("anchor",), _op("anchor"), (("POST", f"{_V}/anchor"),)),
    Capability("export", ("export",), _op("export"), (("GET", f"{_V}/export"),)),
    Capability("import", ("import",), _op("import"), (("POST", f"{_V}/import"),)),
    Capability("refine", ("refine",), _op("refine"), (("POST", f"{_V}/refine"),)),
    Capability(
        "stats history",
        "gap: telemetry (the observability issue)",
        "gap: telemetry (the observability issue)",
        (("GET", f"{_V}/stats/history"),),
    ),
)
"""Every capability and where it lives."""

CLI_ONLY: dict[str, str] = {
    "init": "creates the palace's master key and default vault on this machine",
    "vault status": "reads the vault's files without opening its keys",
    "mine": "reads files on this machine into drawers",
    "sweep": "reads transcripts on this machine into drawers",
    "transcript render": "renders a local transcript file; touches no vault",
    "serve-mcp": "starts the MCP stdio server",
    "serve-http": "starts this HTTP server",
    "assert-header": "mints a request header from a local secret",
    "mcp": "prints a host's MCP configuration",
    "hooks claude-code": "prints hook settings for a local agent tool",
    "daemon run": "the local auto-save loop",
    "config check": "reports this process's environment",
    "bundle keygen": "local key material for sealed bundles",
    "bundle recipient": "local key material for sealed bundles",
    "bundle sender": "local key material for sealed bundles",
    "bundle sign-keygen": "local key material for sealed bundles",
}
"""The commands of the local program, with what each does on this machine."""


OPERATION_BYPASSES: dict[str, str] = {}
"""The CLI commands that still reach the store themselves for a capability MCP or /v1 also carries, each with why.

A command belongs here when its parity row names an MCP tool or a /v1 route and the command (its callback, or a
function of its own module that the callback reaches) calls nothing from ``undercroft_cli.operations``.
``tests/test_cli_operation_layer.py`` finds them by reading the source and fails both ways — a new bypass not
listed, a listed command that no longer bypasses — so this list can only shrink.
"""
