"""The structural legs of verify: SQLite's own check, the scope index against its table, write order, the counter.

None of these bytes is under an HMAC — an index, the ``seq`` column, ``meta.append_counter`` — so each is
checked against something that is: the table rows (an index), the audit chain's order of ``drawer/``
records (``seq``), the covered ``chunk_index`` of every live append drawer (the counter).

* `sqlite_findings` — ``PRAGMA quick_check`` (page and b-tree structure; it does NOT compare an index's keys
  with its table) or, ``deep``, ``PRAGMA integrity_check`` (every index entry against every row too).
* `scope_index_findings` — the ``drawers_scope`` index answers each wing and each (wing, room) with the very
  rows, counted and summed by ``seq``, that a scan of the table holds. A flipped bit in that index is what
  quick_check misses and what makes a scoped read silently short; this check is also the per-handle guard
  every scoped read takes (`guard_scope_index`).
* `order_findings` — ``seq`` (recency order; the FTS rowid) must follow the order the chain recorded each
  live drawer's creation in: a swapped ``seq`` reorders recency and points full-text hits at other drawers.
* `counter_finding` — ``meta.append_counter`` must lie above every live append drawer's index, or the next
  save would be handed an index that already holds words.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Iterable, Sequence
from typing import Final

from undercroft_vault import AuditRow

from undercroft_store.errors import IndexDamaged, RecordTampered
from undercroft_store.kernel._internal.context import VaultContext

__all__ = [
    "counter_finding",
    "finding_names",
    "guard_scope_index",
    "order_findings",
    "read_counter",
    "scope_index_findings",
    "sqlite_findings",
]

#: Findings kept from one SQLite check (its own cap; a damaged page can report thousands of lines).
MAX_SQLITE_FINDINGS: Final = 100
_TABLE_GROUPS: Final = "SELECT wing, room, count(*), total(seq) FROM drawers NOT INDEXED GROUP BY wing, room"
_INDEX_PAIR: Final = "SELECT count(*), total(seq) FROM drawers INDEXED BY drawers_scope WHERE wing = ? AND room = ?"
_INDEX_WING: Final = "SELECT count(*), total(seq) FROM drawers INDEXED BY drawers_scope WHERE wing = ?"
_INDEX_ALL: Final = "SELECT count(*) FROM drawers INDEXED BY drawers_scope"


def sqlite_findings(connection: sqlite3.Connection, *, deep: bool) -> list[str]:
    """What SQLite's own check reports (empty when it says ``ok``); a check that cannot run is a finding."""
    pragma = "integrity_check" if deep else "quick_check"
    try:
        rows = connection.execute(f"PRAGMA {pragma}({MAX_SQLITE_FINDINGS})").fetchall()
    except sqlite3.DatabaseError as error:
        return [f"{pragma} could not run: {error}"]
    lines = [str(row[0]) for row in rows]
    return [] if lines == ["ok"] else lines


def _as_stored(_field: str, value: str) -> str:
    return value


def scope_index_findings(connection: sqlite3.Connection, named: Callable[[str, str], str] = _as_stored) -> list[str]:
    """Each wing and (wing, room) as the scope index answers it, against a scan of the table itself.

    `named` turns a stored label into the name a finding shows (a sealed vault stores blind values)."""
    try:
        table = {(str(w), str(r)): (int(n), float(s)) for w, r, n, s in connection.execute(_TABLE_GROUPS)}
        wings: dict[str, tuple[int, float]] = {}
        for (wing, _), (count, total) in table.items():
            held = wings.get(wing, (0, 0.0))
            wings[wing] = (held[0] + count, held[1] + total)
        findings = [
            f"drawers_scope answers wing {named('wing', wing)!r} room {named('room', room)!r} with {got[0]} "
            f"row(s), the table holds {want[0]}"
            for (wing, room), want in table.items()
            if (got := _answer(connection, _INDEX_PAIR, (wing, room))) != want
        ]
        findings += [
            f"drawers_scope answers wing {named('wing', wing)!r} with {got[0]} row(s), the table holds {want[0]}"
            for wing, want in wings.items()
            if (got := _answer(connection, _INDEX_WING, (wing,))) != want
        ]
        indexed = int(connection.execute(_INDEX_ALL).fetchone()[0])
        rows = sum(count for count, _ in table.values())
    except sqlite3.DatabaseError as error:
        return [f"the drawer table or its scope index does not read: {error}"]
    if indexed != rows:
        findings.append(f"drawers_scope holds {indexed} entries for {rows} drawer rows")
    return findings


def _answer(connection: sqlite3.Connection, sql: str, params: tuple[str, ...]) -> tuple[int, float]:
    count, total = connection.execute(sql, params).fetchone()
    return int(count), float(total)


def finding_names(context: VaultContext) -> Callable[[str, str], str]:
    """A finding's namer: the label's name when a verified row gives it, else the stored value as found."""
    from undercroft_store.kernel._internal.meta_at_rest import label_name  # local: it imports the context only

    def named(field: str, value: str) -> str:
        try:
            return label_name(context, field, value)
        except (KeyError, RecordTampered):
            return value

    return named


def guard_scope_index(context: VaultContext) -> None:
    """Once per handle, before its first scoped read: refuse (`IndexDamaged`, exit 2) a damaged scope index.

    A scoped read seeks the index; an index that lost entries would return fewer rows than the scope holds
    with nothing to say so. Checked once per handle (a table scan: measured in benchmarks/RESULTS.md), so
    damage arriving while a handle is open is seen by the next open — and by every verify.
    """
    if context.scope_index_checked:
        return
    findings = scope_index_findings(context.connection, finding_names(context))
    if findings:
        raise IndexDamaged(
            f"vault {context.vault_id!r}: the drawers_scope index disagrees with the drawer table, so a scoped "
            f"read would silently miss drawers ({findings[0]}); run undercroft repair (it rebuilds the index)"
        )
    context.scope_index_checked = True


def order_findings(live_in_seq_order: Sequence[str], rows: Iterable[AuditRow]) -> list[str]:
    """Live drawers whose ``seq`` is out of the order the chain recorded their creation in.

    A drawer is created by its first ``drawer/<id>`` record after its latest ``delete/<id>`` (an update
    keeps its ``seq``; a re-creation takes a new one), so ascending ``seq`` must follow those positions.
    """
    created: dict[str, int] = {}
    for position, row in enumerate(rows):
        kind, _, drawer_id = row.record_id.partition("/")
        if kind == "drawer":
            created.setdefault(drawer_id, position)
        elif kind == "delete":
            created.pop(drawer_id, None)
    findings: list[str] = []
    newest = -1
    for drawer_id in live_in_seq_order:
        at = created.get(drawer_id)
        if at is None:
            continue  # unlabelled: its own leg names it
        if at < newest:
            findings.append(drawer_id)
        newest = max(newest, at)
    return findings


def read_counter(connection: sqlite3.Connection) -> int | None:
    """``meta.append_counter`` as a number (None when absent or not a decimal)."""
    row = connection.execute("SELECT value FROM meta WHERE key = 'append_counter'").fetchone()
    if row is None:
        return None
    text = bytes(row[0]).decode("ascii", "replace")
    return int(text) if text.isdigit() and len(text) <= 20 else None


def counter_finding(connection: sqlite3.Connection, highest: int | None) -> str:
    """Empty when the counter lies above `highest` (the largest live append index), else what is wrong."""
    counter = read_counter(connection)
    if counter is None:
        return "meta.append_counter is absent or not a decimal number"
    if highest is not None and counter <= highest:
        return f"meta.append_counter is {counter} but a live drawer holds append index {highest}"
    return ""
