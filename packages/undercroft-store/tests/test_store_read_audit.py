"""Read and egress records, the anchor window, and the audit ceiling (reports, never deletes)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace, ReadOnlyStore
from undercroft_store.governance.read_audit import (
    EGRESS_DETAIL_KEYS,
    InvalidAuditRecord,
    anchor,
    ceiling_report,
    record_egress,
    record_read,
)

CHAIN = {"UNDERCROFT_READ_AUDIT": "chain"}


def _anchored(home: Path) -> int:
    return int(json.loads((home / "vaults" / "default" / "vault.json").read_text())["anchor"]["count"])


def test_read_records_carry_no_text_and_leave_the_anchor_behind(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        store.remember("secret plans", wing="w", room="r", added_by="t")
        assert record_read(store, "search", subject="secret plans", scope={"wing": "w"}, count=1, env={}) is False
        assert record_read(store, "search", subject="secret plans", scope={"wing": "w"}, count=1, env=CHAIN)
        assert store.stats().chain_records == 2
        assert _anchored(home) == 1  # read records do not anchor
        assert anchor(store) == 2
        assert _anchored(home) == 2
        assert record_egress(
            store, "export", surface="cli", recipient=None, counts={"drawers": 1}, manifest_digest="ab"
        )
        assert store.verify().ok
    raw = (home / "vaults" / "default" / "vault.db").read_bytes()
    assert b"secret plans" not in raw  # never the text (sealed vault; the subject is a keyed fingerprint)
    labels = [
        r[0] for r in sqlite3.connect(home / "vaults" / "default" / "vault.db").execute("SELECT record_id FROM audit")
    ]
    assert labels[1:] == ["read/search", "egress/export"]


def test_refusals_and_the_ceiling(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        store.remember("a", wing="w", room="r", added_by="t")
        with pytest.raises(InvalidAuditRecord, match="read op 'peek'"):
            record_read(store, "peek", subject="x", count=1, env=CHAIN)
        with pytest.raises(InvalidAuditRecord, match="non-negative"):
            record_read(store, "get", subject="x", count=-1, env=CHAIN)
        with pytest.raises(InvalidAuditRecord, match="egress kind"):
            record_egress(store, "leak", surface="cli", recipient=None, counts={}, manifest_digest="")
        report = ceiling_report(store, 0 + 1)
        assert (report.chain_records, report.over) == (1, False) and "under" in report.render()
        store.remember("b", wing="w", room="r", added_by="t")
        assert ceiling_report(store, 1).over and store.count() == 2  # reported, nothing deleted
    with Palace(home, read_only=True) as frozen, frozen.open_vault("default", HashEmbedder(), read_only=True) as ro:
        assert record_read(ro, "get", subject="x", count=1, env=CHAIN) is False  # serves unaudited
        for call in (
            lambda: anchor(ro),
            lambda: record_egress(ro, "export", surface="cli", recipient=None, counts={}, manifest_digest=""),
        ):
            with pytest.raises(ReadOnlyStore):
                call()


def test_egress_details_are_a_closed_set_of_short_names(palace: Palace, home: Path) -> None:
    # details bind declarations and scope; a key outside the kind's set, or text, is refused and nothing lands.
    with palace.open_vault("default", HashEmbedder()) as store:
        height = store.stats().chain_records
        refusals = {
            "text": ({"model": "ollama:m", "text": "x"}, "binds no detail 'text'"),
            "query": ({"query": "who"}, "binds no detail 'query'"),
            "key": ({"model": "m", "api_key": "sk-1"}, "binds no detail 'api_key'"),
            "long": ({"model": "m" * 257}, "not a short one-line name"),
            "lines": ({"wing": "notes\nZanzibar"}, "not a short one-line name"),
        }
        for details, match in refusals.values():
            with pytest.raises(InvalidAuditRecord, match=match) as refused:
                record_egress(
                    store, "refine", surface="cli", recipient=None, counts={}, manifest_digest="", details=details
                )
            assert "Zanzibar" not in str(refused.value) and "sk-1" not in str(refused.value)
        with pytest.raises(InvalidAuditRecord, match="its details are none"):
            record_egress(
                store, "export", surface="cli", recipient=None, counts={}, manifest_digest="", details={"m": "x"}
            )
        assert store.stats().chain_records == height  # every refusal appended nothing
        assert record_egress(
            store, "refine", surface="cli", recipient="https://llm.internal:443", counts={"drawers_sent": 1},
            manifest_digest="", details={"model": "ollama:m", "wing": "notes", "room": None, "limit": 5,
                                         "dry_run": False},
        )  # fmt: skip
    assert set(EGRESS_DETAIL_KEYS) == {"export", "index-push", "refine", "embed/repair", "advise/dedup"}
