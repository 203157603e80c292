"""Per-agent diaries, each in its own wing ``diary-<agent>`` (`write_diary`, `read_diary`, `diary_agents`).

Entries are ordinary drawers written through the choke point (screened), carrying the agent in their
HMAC-covered meta; reads are verified reads, newest first.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from undercroft_core.drawer import Drawer
from undercroft_core.errors import InvalidInput
from undercroft_core.names import validate_name

from undercroft_store.errors import NothingToRemember
from undercroft_store.kernel._internal.meta_at_rest import label_name
from undercroft_store.kernel._internal.read_door import audited_read
from undercroft_store.kernel._internal.transaction import check_writable, readable
from undercroft_store.kernel.screening import Screen
from undercroft_store.kernel.writes import WriteResult
from undercroft_store.memory.kg.errors import InvalidSurfaceInput

if TYPE_CHECKING:
    from undercroft_store.store import VaultStore

__all__ = ["DIARY_PREFIX", "DIARY_ROOM", "diary_agents", "diary_wing", "read_diary", "write_diary"]

#: Every diary wing is ``diary-<agent>``.
DIARY_PREFIX: Final = "diary-"
#: The room entries land in unless a topic names another.
DIARY_ROOM: Final = "entries"


def diary_wing(agent: str) -> str:
    """The wing of `agent`'s diary (the agent name must be a safe name)."""
    try:
        validate_name(agent, what="agent")
        return validate_name(DIARY_PREFIX + agent, what="diary wing")
    except InvalidInput as error:
        raise InvalidSurfaceInput(str(error)) from None


def write_diary(store: VaultStore, agent: str, text: str, *, topic: str | None = None) -> list[WriteResult]:
    """Append an entry to `agent`'s diary (room `topic` or ``entries``)."""
    wing = diary_wing(agent)
    try:
        room = validate_name(topic, what="topic") if topic is not None else DIARY_ROOM
    except InvalidInput as error:
        raise InvalidSurfaceInput(str(error)) from None
    check_writable(store._context)
    if not isinstance(text, str):
        raise InvalidSurfaceInput("a diary entry must not be empty")
    try:
        return store.remember(text, wing=wing, room=room, added_by=f"diary:{agent}", agent=agent, screening=Screen())
    except NothingToRemember:
        raise InvalidSurfaceInput("a diary entry must not be empty") from None


@audited_read("diary", subject=lambda a: str(a["agent"]), scope=lambda a: {"topic": a["topic"], "last": a["last"]})
def read_diary(store: VaultStore, agent: str, *, last: int = 10, topic: str | None = None) -> list[Drawer]:
    """`agent`'s newest `last` entries (verified), optionally one topic only."""
    if isinstance(last, bool) or not isinstance(last, int) or last < 1:
        raise InvalidSurfaceInput(f"last must be a positive integer, got {last!r}")
    return store.list_drawers(wing=diary_wing(agent), room=topic, limit=last)


def diary_agents(store: VaultStore) -> dict[str, int]:
    """Every agent with a diary → its entry count."""
    context = readable(store._context)
    if not context.metadata_sealed:
        rows = context.connection.execute(
            "SELECT wing, count(*) FROM drawers WHERE substr(wing, 1, ?) = ? GROUP BY wing ORDER BY wing",
            (len(DIARY_PREFIX), DIARY_PREFIX),
        )
        return {str(wing)[len(DIARY_PREFIX) :]: int(count) for wing, count in rows}
    # Sealed: the wing column holds blind values (no prefix match), so every wing is named and filtered here.
    counts = context.connection.execute("SELECT wing, count(*) FROM drawers GROUP BY wing").fetchall()
    named = sorted((label_name(context, "wing", str(wing)), int(count)) for wing, count in counts)
    return {wing[len(DIARY_PREFIX) :]: count for wing, count in named if wing.startswith(DIARY_PREFIX)}
