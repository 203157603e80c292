"""Anchoring: what ``undercroft anchor`` and ``POST /v1/vaults/{id}/anchor`` do, said once.

Reads leave the manifest's window open (their records land on the chain after the anchor); anchoring closes it at
the committed chain head. The open already re-anchors a lagging manifest, so ``behind_by`` counts the records
the anchor lagged a moment ago, that lag included.
"""

from __future__ import annotations

from dataclasses import dataclass

from undercroft_store import VaultStore
from undercroft_store.governance.read_audit import close_window

__all__ = ["Anchored", "anchor"]


@dataclass(frozen=True, slots=True)
class Anchored:
    """The anchor just written: the vault, the chain height it names, how far behind the previous one was."""

    vault: str
    anchored_at: int
    behind_by: int

    def to_dict(self) -> dict[str, object]:
        """The ``anchor --json`` record: ``{vault, anchored_at, behind_by}``."""
        return {"vault": self.vault, "anchored_at": self.anchored_at, "behind_by": self.behind_by}


def anchor(store: VaultStore) -> Anchored:
    """Anchor ``store``'s manifest at its committed chain head (a write: a read-only handle refuses)."""
    closed = close_window(store)
    return Anchored(store.name, closed.height, closed.behind_by)
