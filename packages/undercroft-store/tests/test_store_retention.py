"""Retention: tagged, chain-audited policies, the explicit sweep through forgetting, and raw-file tampers."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import ChainBroken, Palace, ReadOnlyStore
from undercroft_store.governance.forgetting import verify_forgetting
from undercroft_store.governance.retention import (
    InvalidRetention,
    clear_retention,
    list_retention,
    parse_max_age,
    set_retention,
    sweep,
)
from undercroft_store.kernel._internal.meta_at_rest import stored_label

DAY = 86400
START = datetime(2026, 5, 1, 9, 0, 0, tzinfo=UTC)  # the conftest StepClock's origin


def _raw(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / "default" / "vault.db", isolation_level=None)


def _fill(palace: Palace) -> dict[str, str]:
    with palace.open_vault("default", HashEmbedder()) as store:
        return {
            f"{wing}/{room}": store.remember(f"note in {wing} {room}", wing=wing, room=room, added_by="t")[0].id
            for wing, room in [("chat", "general"), ("chat", "legal"), ("work", "plans")]
        }


def test_set_list_clear_and_verify(palace: Palace) -> None:
    _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        set_retention(store, "chat", max_age=30 * DAY)
        set_retention(store, "chat", "legal", max_age=365 * DAY)
        listing = list_retention(store)
        assert listing.ok and [(p.scope, p.max_age_seconds) for p in listing.policies] == [
            ("chat", 30 * DAY),
            ("chat/legal", 365 * DAY),
        ]
        assert clear_retention(store, "chat", "legal") is True
        assert clear_retention(store, "chat", "legal") is False
        assert [p.scope for p in list_retention(store).policies] == ["chat"]
        assert store.verify().ok
        labels = [r[0] for r in _raw(palace.home).execute("SELECT record_id FROM audit ORDER BY seq")]
        chat, legal = (stored_label(store._context, f, v) for f, v in (("wing", "chat"), ("room", "legal")))
        # A sealed vault's labels carry the scope's blind values, never its names.
        assert labels[-3:] == [f"retention/{chat}", f"retention/{chat}/{legal}", f"retention-clear/{chat}/{legal}"]


def test_sweep_destroys_through_attested_forgetting(palace: Palace) -> None:
    ids = _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        set_retention(store, "chat", max_age=30 * DAY)
        set_retention(store, "chat", "legal", max_age=365 * DAY)
        nothing = sweep(store, now=START + timedelta(days=29))
        assert nothing.ok and nothing.forgotten == [] and nothing.receipt is None and nothing.examined == 3
        report = sweep(store, now=START + timedelta(days=31))
        assert report.ok and report.forgotten == [ids["chat/general"]]  # the room policy keeps legal
        assert report.receipt is not None and report.receipt.body.reason == "retention sweep"
        assert verify_forgetting(store, report.receipt.to_json()).status == "verified"
        assert sorted(d.id for d in store.list_drawers()) == sorted([ids["chat/legal"], ids["work/plans"]])
        assert store.verify().ok


def test_the_sweep_reads_the_covered_scope_not_the_mirror(palace: Palace, home: Path) -> None:
    ids = _fill(palace)
    with _raw(home) as raw:  # flip the clear mirror out of the policy's wing
        raw.execute("UPDATE drawers SET wing = 'work' WHERE id = ?", (ids["chat/general"],))
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        set_retention(store, "chat", max_age=DAY)
        assert sweep(store, now=START + timedelta(days=2)).forgotten == [ids["chat/general"], ids["chat/legal"]]


def test_an_older_policy_row_written_back_is_detected(palace: Palace, home: Path) -> None:
    ids = _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        set_retention(store, "chat", max_age=DAY)
    with _raw(home) as raw:
        old = raw.execute("SELECT * FROM retention_policy").fetchone()
    with palace.open_vault("default", HashEmbedder()) as store:
        set_retention(store, "chat", max_age=3650 * DAY)
    with _raw(home) as raw:  # the attacker restores the genuine, validly tagged, shorter policy
        raw.execute("UPDATE retention_policy SET max_age_seconds = ?, at = ?, tag = ?", (old[2], old[3], old[4]))
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        report = store.verify()
        assert not report.ok and report.retention_drift == [
            "retention/chat: the row is not its scope's newest assignment (an older row written back)"
        ]
        assert "POLICY: retention/chat" in report.render() and report.render().endswith("VERIFY FAILED")
        listing = list_retention(store)
        assert not listing.ok and listing.policies == () and listing.failed[0].startswith("retention/chat:")
        swept = sweep(store, now=START + timedelta(days=5))
        assert not swept.ok and swept.forgotten == [] and swept.undecided == 2  # named, destroyed nowhere
        assert store.get(ids["chat/general"]).wing == "chat"


def test_a_flipped_policy_row_and_a_deleted_one(palace: Palace, home: Path, label_of: Callable[..., str]) -> None:
    _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        set_retention(store, "chat", max_age=DAY)
        set_retention(store, "work", max_age=DAY)
    with _raw(home) as raw:
        raw.execute("UPDATE retention_policy SET max_age_seconds = 9 WHERE wing = ?", (label_of("chat"),))
        raw.execute("DELETE FROM retention_policy WHERE wing = ?", (label_of("work"),))
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        assert store.verify().retention_drift == [
            "retention/chat: the row fails its HMAC tag",
            "retention/work: a recorded assignment whose row is gone with no later clear",
        ]


def test_the_sweep_names_a_tampered_drawer_and_still_destroys_the_rest(palace: Palace, home: Path) -> None:
    ids = _fill(palace)
    with _raw(home) as raw:
        raw.execute("UPDATE drawers SET tag = zeroblob(32) WHERE id = ?", (ids["chat/legal"],))
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        set_retention(store, "chat", max_age=DAY)
        report = sweep(store, now=START + timedelta(days=2))
        assert not report.ok and report.tampered_drawers == [ids["chat/legal"]]
        assert report.forgotten == [ids["chat/general"]]


def test_a_broken_chain_refuses_every_retention_reader(palace: Palace, home: Path) -> None:
    _fill(palace)
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        set_retention(store, "chat", max_age=DAY)
        chat, work = (stored_label(store._context, "wing", wing) for wing in ("chat", "work"))
        with _raw(home) as raw:
            raw.execute(
                "UPDATE audit SET record_id = ? WHERE record_id = ?", (f"retention/{work}", f"retention/{chat}")
            )
        for call in (lambda: list_retention(store), lambda: sweep(store), lambda: set_retention(store, "x", max_age=5)):
            with pytest.raises(ChainBroken, match="run undercroft verify"):
                call()


@pytest.mark.parametrize(
    ("text", "seconds"), [("90d", 90 * DAY), ("12h", 43200), ("30m", 1800), ("3600", 3600), ("2w", 14 * DAY)]
)
def test_parse_max_age(text: str, seconds: int) -> None:
    assert parse_max_age(text) == seconds


@pytest.mark.parametrize("text", ["", "0d", "-5d", "5y", "1.5d", "d", "99999999999d"])
def test_bad_ages_are_refused(text: str) -> None:
    with pytest.raises(InvalidRetention, match="max age"):
        parse_max_age(text)


def test_bad_scopes_and_read_only_are_refused(palace: Palace, home: Path) -> None:
    _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        with pytest.raises(InvalidRetention, match="wing"):
            set_retention(store, "../etc", max_age=DAY)
        with pytest.raises(InvalidRetention, match="quarantine-pending"):
            set_retention(store, "quarantine-pending", max_age=DAY)
        with pytest.raises(InvalidRetention, match="1 second to 100 years"):
            set_retention(store, "chat", max_age=0)
        with pytest.raises(InvalidRetention, match="1 second to 100 years"):
            set_retention(store, "chat", max_age=True)
    with Palace(home, read_only=True) as frozen, frozen.open_vault("default", HashEmbedder(), read_only=True) as ro:
        assert list_retention(ro).ok
        for call in (lambda: set_retention(ro, "chat", max_age=DAY), lambda: sweep(ro)):
            with pytest.raises(ReadOnlyStore):
                call()


def test_policy_rows_carry_no_content(palace: Palace, home: Path) -> None:
    _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        policy = set_retention(store, "chat", "legal", max_age=DAY)
    assert json.loads(json.dumps(policy.to_dict()))["room"] == "legal"
    row = _raw(home).execute("SELECT wing, room, max_age_seconds FROM retention_policy").fetchone()
    with palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        keys = (stored_label(store._context, "wing", "chat"), stored_label(store._context, "room", "legal"))
    assert row == (*keys, DAY) and keys != ("chat", "legal")  # blind values on a sealed vault


def test_policies_survive_a_rotation(palace: Palace, home: Path) -> None:
    from undercroft_store.integrity import rotation  # landed: a missing module is a failure, not a skip

    ids = _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        set_retention(store, "chat", max_age=DAY)
    rotation.rotate_vault(palace, "default", HashEmbedder())
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        assert store.verify().ok and list_retention(store).ok
        assert sweep(store, now=START + timedelta(days=2)).forgotten == [ids["chat/general"], ids["chat/legal"]]
