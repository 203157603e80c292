"""Diaries: the entry written and the keepers counted — what ``undercroft diary write|agents``, the MCP tools
``undercroft_diary_write`` / ``undercroft_list_agents`` and the /v1 routes bound to them do, said once.

An agent is named by its ``diary-<agent>`` wing; the count is its entries. Names only, never an entry's words.
An entry goes through the write choke point under the admission screen, its agent recorded as a claim. Who
the entry is stamped as (``added_by``, what ``UNDERCROFT_ADMIT_TRUSTED_SOURCES`` matches) is each surface's
to say, and they differ on purpose: over MCP the agent name is the caller's claim and must never become the
stamp, so the tool stamps its surface; the CLI's operator stamps ``diary:<agent>``, a claim of their own.
"""

from __future__ import annotations

from undercroft_core.names import validate_name
from undercroft_store import Screen
from undercroft_store.kernel.writes import WriteResult
from undercroft_store.memory.diaries import DIARY_ROOM, diary_agents, diary_wing
from undercroft_store.store import VaultStore

__all__ = ["diary_keepers", "write_entry"]


def diary_keepers(store: VaultStore) -> dict[str, dict[str, int]]:
    """``{agents: {name: entries}}`` in name order: every agent with a diary in ``store``."""
    return {"agents": diary_agents(store)}


def write_entry(
    store: VaultStore, agent: str, text: str, *, topic: str | None = None, added_by: str
) -> list[WriteResult]:
    """Append ``text`` to ``agent``'s diary (room ``topic``, default ``entries``), stamped ``added_by``, screened.

    A bad agent or topic name is ``InvalidInput``, blank text the store's ``NothingToRemember``: nothing written.
    """
    wing = diary_wing(agent)
    room = validate_name(topic, what="topic") if topic is not None else DIARY_ROOM
    return store.remember(text, wing=wing, room=room, added_by=added_by, agent=agent, screening=Screen())
