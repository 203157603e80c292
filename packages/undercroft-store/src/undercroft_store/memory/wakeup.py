"""Wake-up: what an agent reads at session start — L0 identity and L1 essential recent memories.

L0 is the caller's identity text (the CLI reads ``<home>/identity.txt``; the store never reads files).
L1 is the newest verified drawers, decisions, preferences, milestones, facts and problems first, trimmed
to a character budget. The quarantine wing is never included (listings exclude it unless named).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from undercroft_core.drawer import Drawer

from undercroft_store.kernel._internal.read_door import audited_read
from undercroft_store.memory.kg.errors import InvalidSurfaceInput

if TYPE_CHECKING:
    from undercroft_store.store import VaultStore

__all__ = ["ESSENTIAL_KINDS", "WakeUp", "wake_up"]

#: Kinds L1 puts first, in this order.
ESSENTIAL_KINDS: Final = ("decision", "preference", "milestone", "fact", "problem")
_SNIPPET: Final = 240


@dataclass(frozen=True, slots=True)
class WakeUp:
    """The two layers: `identity` (L0, may be None) and `essentials` (L1)."""

    identity: str | None
    essentials: tuple[Drawer, ...]

    def render(self) -> str:
        """The text an agent reads."""
        lines = ["## L0 — identity", self.identity.strip() if self.identity else "(no identity.txt)", ""]
        lines.append("## L1 — essential")
        for drawer in self.essentials:
            text = " ".join(drawer.content.split())
            if len(text) > _SNIPPET:
                text = text[: _SNIPPET - 1] + "…"
            kind = f" {drawer.kind}" if drawer.kind else ""
            lines.append(f"- [{drawer.wing}/{drawer.room}{kind} {drawer.filed_at[:10]}] {text}")
        if not self.essentials:
            lines.append("(no memories yet)")
        return "\n".join(lines)


@audited_read("recent", subject=lambda a: str(a["identity"] or ""), scope=lambda a: {"wing": a["wing"]})
def wake_up(
    store: VaultStore,
    *,
    identity: str | None = None,
    wing: str | None = None,
    limit: int = 15,
    max_chars: int = 3200,
    pool: int = 200,
) -> WakeUp:
    """L0 + L1: from the newest `pool` drawers, essential kinds first then recency, within `max_chars`."""
    for value, what in ((limit, "limit"), (max_chars, "max_chars"), (pool, "pool")):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidSurfaceInput(f"{what} must be a positive integer, got {value!r}")
    recent = store.list_drawers(wing=wing, limit=pool)
    rank = {kind: position for position, kind in enumerate(ESSENTIAL_KINDS)}
    ordered = sorted(enumerate(recent), key=lambda item: (rank.get(item[1].kind or "", len(ESSENTIAL_KINDS)), item[0]))
    chosen: list[Drawer] = []
    used = 0
    for _, drawer in ordered:
        cost = min(len(drawer.content), _SNIPPET) + 40
        if len(chosen) >= limit or used + cost > max_chars:
            break
        chosen.append(drawer)
        used += cost
    return WakeUp(identity, tuple(chosen))
