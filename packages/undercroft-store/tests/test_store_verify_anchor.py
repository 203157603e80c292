"""verify's own chain and anchor verdicts, on a handle opened BEFORE the raw edit (the open's checks passed).

The open refuses a rolled-back or forked database itself, so these verdicts are only reachable from a handle
already open when the file changed beneath it (a restore, another process, a disk): the verify an operator runs
on a long-lived server. Each edit is made consistent enough that only the leg under test can see it.
"""

from __future__ import annotations

import sqlite3
from pathlib import Path

from undercroft_core import HashEmbedder
from undercroft_store import Palace
from undercroft_vault import AuditRow, replay

WORDS = ["zebra", "quokka", "marmalade", "lighthouse"]


def _raw(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / "default" / "vault.db", isolation_level=None)


def _rows(raw: sqlite3.Connection) -> list[AuditRow]:
    audit = raw.execute("SELECT record_id, tag, at FROM audit ORDER BY seq").fetchall()
    return [AuditRow(record_id, bytes(tag), at) for record_id, tag, at in audit]


def _opened(palace: Palace):
    store = palace.open_vault("default", HashEmbedder())
    for word in WORDS:
        store.remember(f"The {word} memory.", wing="life", room="misc", added_by="t")
    return store


def test_a_consistent_rollback_below_the_anchor_is_verifys_anchor_absent_verdict(palace: Palace, home: Path) -> None:
    """Rows and head rewound together (the chain is self-consistent): only the anchor can say it went back."""
    with _opened(palace) as store:
        clean = store.verify()
        assert clean.ok and clean.anchor == "equal"
        with _raw(home) as raw:
            keep = len(_rows(raw)) - 2
            last_kept = "SELECT seq FROM audit ORDER BY seq LIMIT 1 OFFSET ?"
            raw.execute(f"DELETE FROM audit WHERE seq > ({last_kept})", (keep - 1,))
            rows = _rows(raw)
            assert len(rows) == keep
            head = replay(store._context.keys, rows)
            raw.execute("UPDATE chain_meta SET head = ?, height = ? WHERE id = 1", (head, keep))
        report = store.verify()
    assert report.anchor == "absent" and not report.audit_chain_ok and not report.ok
    assert report.chain_detail == "the manifest anchor is not in the chain: rolled back or forked"
    assert "anchor absent" in report.render() and report.render().endswith("VERIFY FAILED")


def test_a_forked_chain_of_the_anchors_height_is_anchor_absent(palace: Palace, home: Path) -> None:
    """One early record's time edited and the head recomputed: same height, so only the anchor's head differs."""
    with _opened(palace) as store:
        with _raw(home) as raw:
            first = raw.execute("SELECT seq, at FROM audit ORDER BY seq LIMIT 1").fetchone()
            raw.execute("UPDATE audit SET at = ? WHERE seq = ?", (first[1].replace("2026", "2025"), first[0]))
            rows = _rows(raw)
            assert rows[0].at != first[1]
            raw.execute("UPDATE chain_meta SET head = ? WHERE id = 1", (replay(store._context.keys, rows),))
        report = store.verify()
    assert report.anchor == "absent" and not report.audit_chain_ok and not report.ok


def test_an_audit_row_removed_beneath_an_open_handle_is_the_row_count_verdict(palace: Palace, home: Path) -> None:
    with _opened(palace) as store:
        with _raw(home) as raw:
            height = int(raw.execute("SELECT height FROM chain_meta WHERE id = 1").fetchone()[0])
            raw.execute("DELETE FROM audit WHERE seq = (SELECT max(seq) FROM audit)")
        report = store.verify()
    assert not report.audit_chain_ok and not report.ok
    assert report.chain_detail == f"{height - 1} audit rows but the committed head is at height {height}"
