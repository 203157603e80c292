"""Wing trust, assigned and listed: what ``undercroft trust set|list`` and ``POST|GET /v1/vaults/{id}/trust`` do,
said once (MCP deliberately has no trust tool: an operator surface).

A record is ``{wing, trust, at}``; an unassigned wing is ``standard`` and has none. Listing verifies every row:
a row that fails its tag, or is not its wing's newest record, raises the store's ``TrustTampered`` (an integrity
verdict: exit 2, HTTP 409).
"""

from __future__ import annotations

from undercroft_store.kernel.trust import list_trust, set_trust
from undercroft_store.store import VaultStore

__all__ = ["assign_trust", "trust_records"]


def assign_trust(store: VaultStore, wing: str, trust: str) -> dict[str, str]:
    """Assign ``trust`` (quarantined, standard or trusted) to ``wing``: a tagged row and a chain record; the
    assignment's record. A bad wing or class raises the store's ``InvalidInput``."""
    return set_trust(store, wing, trust).to_dict()


def trust_records(store: VaultStore, *, wing: str | None = None) -> list[dict[str, str]]:
    """Every verified assignment by wing (only ``wing``'s when given: none when it is unassigned)."""
    return [a.to_dict() for a in list_trust(store) if wing is None or a.wing == wing]
