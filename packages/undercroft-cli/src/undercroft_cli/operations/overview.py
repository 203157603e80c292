"""The vault overview: what ``undercroft stats|taxonomy``, the MCP tools ``undercroft_status`` /
``undercroft_get_taxonomy`` and the /v1 routes bound to them read, said once.

Both read the store's one `VaultStats` (counts and labels, never content). The rendering stays each surface's:
``stats --json`` prints every field (`VaultStats.to_dict`), the tool the summary of `status_record` (wing and
room *counts*, the handle's posture); ``taxonomy --json`` prints the tree beside the quarantined count
(`Taxonomy.to_dict`), the tool puts the quarantine wing inside the tree as an operator-only entry
(`Taxonomy.with_quarantine`), so a model sees that held drawers exist without their rooms.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_store import VaultStats
from undercroft_store.store import VaultStore

__all__ = ["Taxonomy", "status_record", "taxonomy_of", "vault_stats"]


def vault_stats(store: VaultStore) -> VaultStats:
    """The vault's counts: drawers, wings, rooms, chain height and head, size, posture, failures, unhealed."""
    return store.stats()


def status_record(stats: VaultStats, *, read_only: bool) -> dict[str, Any]:
    """The tool's overview: `stats` with wings and rooms as counts and ``read_only`` the serving posture."""
    return {
        "vault": stats.vault,
        "level": stats.level,
        "read_only": read_only,
        "drawers": stats.drawers,
        "quarantined": stats.quarantined,
        "wings": len(stats.wings),
        "rooms": len(stats.rooms),
        "chain_records": stats.chain_records,
        "writes": stats.writes,
        "head": stats.head,
        "db_bytes": stats.db_bytes,
        "embedder": stats.embedder,
        "embed_failures": stats.embed_failures,
        "rerank_failures": stats.rerank_failures,
        "late_failures": stats.late_failures,
        "token_matrices": stats.token_matrices,
        "unhealed": stats.unhealed,
        "chain_ceiling": stats.chain_ceiling,
        "chain_over_ceiling": stats.chain_over_ceiling,
        "chain_replays": stats.chain_replays,
        "heals": stats.heals,
    }


@dataclass(frozen=True, slots=True)
class Taxonomy:
    """Wing → room → drawers (the quarantine wing's rooms excluded), and how many drawers await a ruling."""

    tree: dict[str, dict[str, int]]
    quarantined: int

    def to_dict(self) -> dict[str, object]:
        """The ``taxonomy --json`` record: ``{taxonomy, quarantined}``."""
        return {"taxonomy": self.tree, "quarantined": self.quarantined}

    def with_quarantine(self) -> dict[str, object]:
        """The tree with the quarantine wing inside it, its rooms withheld (the tool's ``taxonomy``)."""
        tree: dict[str, object] = dict(self.tree)
        if self.quarantined:
            tree[QUARANTINE_WING] = {"drawers": self.quarantined, "rooms": "operator-only"}
        return tree


def taxonomy_of(store: VaultStore) -> Taxonomy:
    """The vault's taxonomy from its stats."""
    stats = vault_stats(store)
    return Taxonomy(stats.taxonomy(), stats.quarantined)
