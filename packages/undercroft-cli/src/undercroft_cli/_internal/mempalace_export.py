"""Reading a MemPalace 3.11 export (``mempalace.exporter.export_palace``): ``index.md`` + ``<wing>/<room>.md``.

Each drawer is a section: ``## <id>``, a blank line, the content as a block quote (every line prefixed
``> ``; MemPalace strips trailing newlines only), a blank line, then a ``| Field | Value |`` table naming
Source, Filed and Added by. The words come back verbatim; MemPalace's own id is kept as the provenance
(``source_file = mempalace:<id>``), which also makes a re-import land on the same Undercroft ids.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from undercroft_cli._internal.transfer_format import InvalidExport

__all__ = ["MemPalaceDrawer", "is_mempalace_export", "read_mempalace_export"]

_HEADING = re.compile(r"^# (?P<wing>.+) / (?P<room>.+)$")
_DATE = re.compile(r"^(\d{4}-\d{2}-\d{2})")


@dataclass(frozen=True, slots=True)
class MemPalaceDrawer:
    """One drawer of a MemPalace export."""

    id: str
    wing: str
    room: str
    content: str
    source: str | None
    filed: str | None
    added_by: str | None

    @property
    def content_date(self) -> str | None:
        """The day MemPalace filed it (``YYYY-MM-DD``), when its Filed cell starts with one."""
        match = _DATE.match(self.filed or "")
        return match[1] if match else None


def is_mempalace_export(path: Path) -> bool:
    """True for a directory holding MemPalace's ``index.md`` (its export's table of contents)."""
    index = path / "index.md"
    return (
        path.is_dir() and index.is_file() and index.read_text("utf-8", errors="replace").startswith("# Palace Export")
    )


def _table(lines: list[str], start: int) -> tuple[dict[str, str], int]:
    cells: dict[str, str] = {}
    at = start
    while at < len(lines) and lines[at].startswith("|"):
        parts = [p.strip() for p in lines[at].strip().strip("|").split("|")]
        if len(parts) == 2 and parts[0] not in ("Field", "-------"):
            cells[parts[0]] = parts[1]
        at += 1
    return cells, at


def _room_file(path: Path, root: Path) -> list[MemPalaceDrawer]:
    name = path.relative_to(root).as_posix()
    lines = path.read_text("utf-8").split("\n")
    heading = _HEADING.match(lines[0]) if lines else None
    if heading is None:
        raise InvalidExport(f"{name}: line 1: expected '# <wing> / <room>'")
    wing, room = heading["wing"], heading["room"]
    drawers: list[MemPalaceDrawer] = []
    at = 1
    while at < len(lines):
        if not lines[at].startswith("## "):
            at += 1
            continue
        drawer_id, at = lines[at][3:].strip(), at + 1
        while at < len(lines) and lines[at] == "":
            at += 1
        quoted: list[str] = []
        while at < len(lines) and lines[at].startswith(">"):
            quoted.append(lines[at][2:] if lines[at].startswith("> ") else lines[at][1:])
            at += 1
        if not quoted:
            raise InvalidExport(f"{name}: line {at + 1}: drawer {drawer_id} has no quoted content")
        while at < len(lines) and lines[at] == "":
            at += 1
        cells, at = _table(lines, at)

        def cell(key: str, values: dict[str, str] = cells) -> str | None:
            value = values.get(key)
            return None if value in (None, "", "unknown") else value

        drawers.append(
            MemPalaceDrawer(drawer_id, wing, room, "\n".join(quoted), cell("Source"), cell("Filed"), cell("Added by"))
        )
    return drawers


def read_mempalace_export(root: Path) -> list[MemPalaceDrawer]:
    """Every drawer of the export at ``root``, room files in sorted order."""
    drawers: list[MemPalaceDrawer] = []
    for path in sorted(root.glob("*/*.md")):
        drawers.extend(_room_file(path, root))
    return drawers
