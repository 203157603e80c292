"""Which part of a SQLite file a byte offset falls in: the header, a table's or index's b-tree page, or free.

The map comes from SQLite's own ``dbstat`` virtual table (compiled into CPython's sqlite3 on every
platform the project supports); pages ``dbstat`` does not list are the freelist (or unused space), and
the first 100 bytes of page 1 are the database header. A trial's report names the object a flipped bit
landed in, so a silent result points straight at the table (or index) whose damage went unseen.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass
from pathlib import Path

__all__ = ["PageMap", "page_map"]

_HEADER_BYTES = 100


@dataclass(frozen=True, slots=True)
class PageMap:
    """Page size and the owner (table or index name) of every b-tree page of one database file."""

    page_size: int
    owners: dict[int, str]

    def locate(self, offset: int) -> tuple[int, str]:
        """The 1-based page holding ``offset`` and its owner (``header``, a schema object, or ``free``)."""
        page = offset // self.page_size + 1
        if page == 1 and offset < _HEADER_BYTES:
            return page, "header"
        return page, self.owners.get(page, "free")


def page_map(database: Path) -> PageMap:
    """Read the page → owner map of ``database`` (opened read-only, immutable: nothing is written)."""
    connection = sqlite3.connect(f"file:{database}?mode=ro&immutable=1", uri=True)
    try:
        page_size = int(connection.execute("PRAGMA page_size").fetchone()[0])
        owners = {int(page): str(name) for name, page in connection.execute("SELECT name, pageno FROM dbstat")}
    finally:
        connection.close()
    return PageMap(page_size=page_size, owners=owners)
