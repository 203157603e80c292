"""Palace tools: status, wings, rooms, taxonomy, verify — metadata only, never a word of content.

The quarantine wing appears in the wing listings with its count (hiding the review queue's existence buys
nothing once naming it is refused by the fence); its rooms do not.
"""

from __future__ import annotations

import json

from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_store import VaultStats

from undercroft_cli.mcp.arguments import Arguments
from undercroft_cli.mcp.tools.base import ToolOutput, ToolSession, ToolSpec, string
from undercroft_cli.operations import verify_record
from undercroft_cli.operations.overview import status_record, taxonomy_of, vault_stats

__all__ = ["PALACE_TOOLS", "taxonomy"]


def _wings(stats: VaultStats) -> dict[str, int]:
    wings = dict(sorted(stats.wings.items()))
    if stats.quarantined:
        wings[QUARANTINE_WING] = stats.quarantined
    return wings


def taxonomy(stats: VaultStats) -> dict[str, dict[str, int]]:
    """Wing → room → drawers (quarantine rooms excluded): the store's one taxonomy."""
    return stats.taxonomy()


_STATUS_FIELDS = (
    ("vault", "string"), ("level", "string"), ("read_only", "boolean"), ("drawers", "integer"),
    ("quarantined", "integer"), ("wings", "integer"), ("rooms", "integer"), ("chain_records", "integer"),
    ("writes", "integer"), ("head", "string"), ("db_bytes", "integer"), ("embedder", ["string", "null"]),
    ("embed_failures", "integer"), ("rerank_failures", "integer"), ("late_failures", "integer"),
    ("token_matrices", "integer"), ("unhealed", "array"), ("chain_ceiling", ["integer", "null"]),
    ("chain_over_ceiling", "boolean"), ("chain_replays", "integer"), ("heals", "array"),
)  # fmt: skip
_STATUS_OUTPUT = {key: {"type": kind} for key, kind in _STATUS_FIELDS}


def _status(session: ToolSession, args: Arguments) -> str:
    return json.dumps(status_record(vault_stats(session.store), read_only=session.read_only), indent=2)


def _list_wings(session: ToolSession, args: Arguments) -> str:
    return json.dumps({"wings": _wings(session.store.stats())}, indent=2, ensure_ascii=False)


def _list_rooms(session: ToolSession, args: Arguments) -> str:
    tree = taxonomy(session.store.stats())
    wing = args.text("wing")
    if wing is None:
        rooms = {f"{w}/{r}": n for w, inner in tree.items() for r, n in inner.items()}
        return json.dumps({"rooms": rooms}, indent=2, ensure_ascii=False)
    return json.dumps({"wing": wing, "rooms": tree.get(wing, {})}, indent=2, ensure_ascii=False)


def _get_taxonomy(session: ToolSession, args: Arguments) -> str:
    tree = taxonomy_of(session.store).with_quarantine()
    return json.dumps({"taxonomy": tree}, indent=2, ensure_ascii=False)


def _verify(session: ToolSession, args: Arguments) -> ToolOutput:
    report = session.store.verify()
    return ToolOutput(report.render(), verify_record(report))


PALACE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "undercroft_status",
        "Vault overview: drawers, quarantined count, wings, rooms, audit-chain height and head, size, "
        "security level, posture, anything the open declined to repair (unhealed), the audit ceiling "
        "(chain_ceiling, chain_over_ceiling: reported, never enforced) and the label guard's chain_replays.",
        {},
        _status,
        output=_STATUS_OUTPUT,
    ),
    ToolSpec(
        "undercroft_list_wings",
        "Wings with drawer counts.",
        {},
        _list_wings,
        output={"wings": {"type": "object", "additionalProperties": {"type": "integer"}}},
    ),
    ToolSpec(
        "undercroft_list_rooms",
        "Rooms with drawer counts, within one wing or all of them.",
        {"wing": string("wing to list rooms for (optional)")},
        _list_rooms,
        output={
            "rooms": {"type": "object", "additionalProperties": {"type": "integer"}},
            "wing": {"type": "string"},
        },
        optional_output=("wing",),
    ),
    ToolSpec(
        "undercroft_get_taxonomy",
        "Full taxonomy: wing, then room, then drawer count.",
        {},
        _get_taxonomy,
        output={"taxonomy": {"type": "object"}},
    ),
    ToolSpec(
        "undercroft_verify",
        "Verify every record's HMAC and replay the tamper-evident audit chain; VERIFY OK or VERIFY FAILED.",
        {},
        _verify,
        output={
            "ok": {"type": "boolean", "description": "the verdict: false is VERIFY FAILED"},
            "vault": {"type": "string"},
            "records_checked": {"type": "integer", "minimum": 0},
            "audit_chain_ok": {"type": "boolean"},
            "tampered": {"type": "array", "items": {"type": "string"}},
        },
    ),
)
