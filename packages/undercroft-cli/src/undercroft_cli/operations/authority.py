"""The authority tier, declared: what ``undercroft kg authority`` and ``POST /v1/vaults/{id}/kg/authority`` do,
said once (MCP deliberately has no authority tool: an operator surface; MCP reads the tier through
``undercroft_lookup_canonical``).

The record is ``{fact, displaced: fact | null}``: the fact as it stands now, and the previous holder of its
canonical key when approving this one closed it. A fact that is not active, or an unknown class or state, is the
store's refusal, with nothing changed.
"""

from __future__ import annotations

from typing import Any

from undercroft_store.memory.kg.authority import declare_authority
from undercroft_store.store import VaultStore

__all__ = ["declare_tier"]


def declare_tier(
    store: VaultStore,
    fact_id: str,
    *,
    authority_class: str | None = None,
    review_state: str | None = None,
    canonical_key: str | None = None,
) -> dict[str, Any]:
    """Set what is given of ``fact_id``'s authority class, review state and canonical key; ``{fact, displaced}``."""
    change = declare_authority(
        store, fact_id, authority_class=authority_class, review_state=review_state, canonical_key=canonical_key
    )
    displaced = None if change.displaced is None else change.displaced.to_dict()
    return {"fact": change.fact.to_dict(), "displaced": displaced}
