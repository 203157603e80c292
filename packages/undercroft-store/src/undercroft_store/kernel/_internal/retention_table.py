"""The retention policy table: DDL only, so `schema` can create it without importing `retention`.

``retention_policy`` — one row per wing (``room`` = '') or wing/room: ``max_age_seconds``, ``at`` (when it
was set) and ``tag`` = HMAC(mac, ``retention/<wing>[/<room>]`` ␟ canonical {max_age_seconds, at} ␟ ''),
also the tag of the newest ``retention/<scope>`` audit record. A clear deletes the row and appends
``retention-clear/<scope>``.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence
from typing import Final

from undercroft_vault import AuditRow, VaultKeys, compute_tag, constant_time_equal

__all__ = [
    "CLEAR_PREFIX",
    "LABEL_PREFIX",
    "RETENTION_DDL",
    "RETENTION_TABLE",
    "policy_label",
    "policy_tag",
    "retention_findings",
]

#: Audit label prefixes: an assignment, and a clear.
LABEL_PREFIX: Final = "retention/"
CLEAR_PREFIX: Final = "retention-clear/"

#: Operator-declared retention per wing or wing/room.
RETENTION_TABLE: Final = "retention_policy"

RETENTION_DDL: Final = (
    f"""CREATE TABLE {RETENTION_TABLE} (
        wing TEXT NOT NULL,
        room TEXT NOT NULL,
        max_age_seconds INTEGER NOT NULL,
        at TEXT NOT NULL,
        tag BLOB NOT NULL,
        PRIMARY KEY (wing, room)
    ) STRICT""",
)


def policy_label(wing: str, room: str) -> str:
    return LABEL_PREFIX + (wing if not room else f"{wing}/{room}")


def _covered(max_age: int, at: str) -> bytes:
    return json.dumps({"at": at, "max_age_seconds": max_age}, sort_keys=True, separators=(",", ":")).encode()


def policy_tag(keys: VaultKeys, wing: str, room: str, max_age: int, at: str) -> bytes:
    return compute_tag(keys, policy_label(wing, room), _covered(max_age, at), b"")


def _as_found(label: str) -> str:
    return label


def retention_findings(
    connection: sqlite3.Connection,
    keys: VaultKeys,
    rows: Sequence[AuditRow],
    named: Callable[[str], str] = _as_found,
) -> list[str]:
    """The policy leg, both directions: each row verifies and is its scope's newest record; none is missing.

    `named` shows a label with its names (a sealed vault's rows and labels carry blind values)."""
    newest: dict[str, tuple[int, AuditRow]] = {}
    cleared: dict[str, int] = {}
    for position, row in enumerate(rows):
        if row.record_id.startswith(LABEL_PREFIX):
            newest[row.record_id] = (position, row)
        elif row.record_id.startswith(CLEAR_PREFIX):
            cleared[LABEL_PREFIX + row.record_id[len(CLEAR_PREFIX) :]] = position
    findings: list[str] = []
    present: set[str] = set()
    query = f"SELECT wing, room, max_age_seconds, at, tag FROM {RETENTION_TABLE} ORDER BY wing, room"  # noqa: S608
    for wing, room, max_age, at, tag in connection.execute(query):
        label = policy_label(wing, room)
        present.add(label)
        recorded = newest.get(label)
        if not constant_time_equal(policy_tag(keys, wing, room, int(max_age), at), bytes(tag)):
            findings.append(f"{named(label)}: the row fails its HMAC tag")
        elif recorded is None or cleared.get(label, -1) > recorded[0]:
            findings.append(f"{named(label)}: the row was never recorded, or was cleared after it was set")
        elif not constant_time_equal(recorded[1].tag, bytes(tag)):
            findings.append(f"{named(label)}: the row is not its scope's newest assignment (an older row written back)")
    for label, (position, _row) in newest.items():
        if label not in present and cleared.get(label, -1) < position:
            findings.append(f"{named(label)}: a recorded assignment whose row is gone with no later clear")
    return findings
