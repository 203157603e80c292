"""The diary keepers, counted: what ``undercroft diary agents --json``, the MCP tool ``undercroft_list_agents`` and
``GET /v1/vaults/{id}/diary/agents`` (bound to it) answer, said once.

An agent is named by its ``diary-<agent>`` wing; the count is its entries. Names only, never an entry's words.
"""

from __future__ import annotations

from undercroft_store.memory.diaries import diary_agents
from undercroft_store.store import VaultStore

__all__ = ["diary_keepers"]


def diary_keepers(store: VaultStore) -> dict[str, dict[str, int]]:
    """``{agents: {name: entries}}`` in name order: every agent with a diary in ``store``."""
    return {"agents": diary_agents(store)}
