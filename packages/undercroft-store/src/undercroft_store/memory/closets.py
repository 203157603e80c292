"""Closets: the compact, LLM-scannable index of a vault or a wing, built on demand (an AAAK-style listing).

Shape (after MemPalace's closet pointer lines): per wing/room, one line per drawer group —
``topic|entities|YYYY-MM-DD|→drawer_ids`` — where the topic is an action phrase, a markdown header or a
short quote from the drawer's own words (else ``wing/room/source``), entities are capitalised names the
group repeats, and the date is the content date (else the filing date). Lines are packed greedily into
closets of at most `CLOSET_CHARS` characters, never split. Nothing is persisted; the quarantine wing is
never listed.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from pathlib import PurePosixPath
from typing import TYPE_CHECKING, Final

from undercroft_core.drawer import Drawer
from undercroft_core.vocabulary import QUARANTINE_WING

from undercroft_store.kernel._internal.read_door import audited_read
from undercroft_store.memory.kg._internal.entities import entity_counts
from undercroft_store.memory.kg.errors import InvalidSurfaceInput

if TYPE_CHECKING:
    from undercroft_store.store import VaultStore

__all__ = ["CLOSET_CHARS", "Closet", "build_closets", "closet_lines", "render_closets"]

#: A closet fills up to this many characters, then the next one starts.
CLOSET_CHARS: Final = 1500
_ACTION: Final = re.compile(
    r"\b(?:built|fixed|wrote|added|pushed|tested|created|decided|chose|migrated|reviewed|deployed|configured|"
    r"removed|updated|switched|prefer(?:s|red)?)\s+[\w ]{3,40}",
    re.IGNORECASE,
)
_HEADER: Final = re.compile(r"^#{1,3}\s+(.{5,60})$", re.MULTILINE)
_QUOTE: Final = re.compile(r"\"([^\"]{15,150})\"")


@dataclass(frozen=True, slots=True)
class Closet:
    """One packed closet: its wing/room and its pointer lines."""

    wing: str
    room: str
    number: int
    lines: tuple[str, ...]


def _topics(text: str) -> list[str]:
    topics = [m.group().strip().lower() for m in _ACTION.finditer(text)]
    topics += [h.strip() for h in _HEADER.findall(text)]
    topics += [f'"{q}"' for q in _QUOTE.findall(text)[:3]]
    return list(dict.fromkeys(topics))[:12]


def closet_lines(drawers: list[Drawer]) -> list[str]:
    """The pointer lines for one group of drawers from the same source (or one drawer)."""
    first = drawers[0]
    text = "\n".join(d.content for d in drawers)[:5000]
    counts: Counter[str] = Counter()
    for drawer in drawers:
        counts.update(entity_counts(drawer.content))
    repeated = [name for name, count in counts.most_common() if count >= 2][:5] or [n for n, _ in counts.most_common(3)]
    entities = ";".join(repeated)
    date = (first.content_date or first.filed_at).split("T", 1)[0]
    ids = ",".join(d.id for d in drawers[:3])
    topics = _topics(text)
    if not topics:
        source = PurePosixPath(first.source_file).stem[:40] if first.source_file else first.id[-8:]
        topics = [f"{first.wing}/{first.room}/{source}"]
    return [f"{topic}|{entities}|{date}|→{ids}" for topic in topics]


@audited_read("closet", subject=lambda a: str(a["wing"] or ""), scope=lambda a: {"wing": a["wing"]})
def build_closets(store: VaultStore, *, wing: str | None = None, max_chars: int = CLOSET_CHARS) -> list[Closet]:
    """Every closet of the vault (or of `wing`), grouped by wing and room, oldest drawers first."""
    if wing == QUARANTINE_WING:
        raise InvalidSurfaceInput(f"the {QUARANTINE_WING!r} wing has no closets: review it with admission")
    if isinstance(max_chars, bool) or not isinstance(max_chars, int) or max_chars < 80:
        raise InvalidSurfaceInput(f"max_chars must be an integer of at least 80, got {max_chars!r}")
    groups: dict[tuple[str, str], dict[str, list[Drawer]]] = {}
    for drawer in reversed(store.list_drawers(wing=wing)):
        by_source = groups.setdefault((drawer.wing, drawer.room), {})
        by_source.setdefault(drawer.source_file or drawer.id, []).append(drawer)
    closets: list[Closet] = []
    for (closet_wing, room), sources in sorted(groups.items()):
        current: list[str] = []
        size, number = 0, 1
        for drawers in sources.values():
            for line in closet_lines(drawers):
                if current and size + len(line) + 1 > max_chars:
                    closets.append(Closet(closet_wing, room, number, tuple(current)))
                    current, size, number = [], 0, number + 1
                current.append(line)
                size += len(line) + 1
        if current:
            closets.append(Closet(closet_wing, room, number, tuple(current)))
    return closets


def render_closets(closets: list[Closet]) -> str:
    """The listing as text: a ``## wing/room #n`` header per closet, then its lines."""
    out: list[str] = []
    for closet in closets:
        out.append(f"## {closet.wing}/{closet.room} #{closet.number:02d}")
        out += closet.lines
    return "\n".join(out)
