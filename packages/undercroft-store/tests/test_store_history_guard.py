"""History and the admission queue read their labels through the one label guard, never raw audit rows.

`history` takes the whole trail from the handle's guard (`LabelGuard.replayed_rows`), so a trail that does
not replay refuses with `HistoryRefused` — now a `LabelGuardRefused`, hence ``ChainBroken`` and an integrity
verdict naming ``undercroft verify`` — and its own replay check is gone. The queue behind
``admission list|allow|deny`` is decided from the newest ``quarantine/`` and ``ruling/`` records the guard
holds (`LabelGuard.ordered`), so a queue label edited beneath a handle that already replayed refuses with
the guard's verdict instead of being read back raw. Neither is a read door: no ``read/`` record.
"""

from __future__ import annotations

import sqlite3
import warnings
from collections.abc import Iterator
from pathlib import Path

import pytest
import undercroft_store.integrity.history as history_module
from undercroft_config.values import Admission
from undercroft_core import HashEmbedder
from undercroft_core.errors import IntegrityError
from undercroft_store import ChainBroken, Palace, VaultStore
from undercroft_store.governance.admission import AdmissionPolicy, load_fixtures
from undercroft_store.governance.quarantine import install_gate
from undercroft_store.governance.rulings import allow, deny, list_admissions
from undercroft_store.integrity.history import HistoryRefused, history
from undercroft_store.kernel.label_guard import LabelGuard, LabelGuardRefused, label_guard

ATTACK = load_fixtures()[0].text


def _db(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / "default" / "vault.db")


def _labels(home: Path, prefix: str) -> list[str]:
    with _db(home) as db:
        sql = "SELECT record_id FROM audit WHERE record_id LIKE ? ORDER BY seq"
        return [str(r[0]) for r in db.execute(sql, (prefix + "%",))]


@pytest.fixture
def store(palace: Palace, embedder: HashEmbedder) -> Iterator[VaultStore]:
    with palace.open_vault("default", embedder) as opened:
        yield opened


def _three(store: VaultStore) -> list[str]:
    ids = [r.id for r in store.remember("Alpha decision.", wing="work", room="a", added_by="cli")]
    ids += [r.id for r in store.remember("Beta decision.", wing="work", room="a", added_by="cli")]
    store.delete(ids[0])
    return ids


# --- history ---------------------------------------------------------------------------------------------


def test_history_takes_its_rows_from_the_handles_guard(store: VaultStore, monkeypatch: pytest.MonkeyPatch) -> None:
    _three(store)
    calls: list[LabelGuard] = []
    original = LabelGuard.replayed_rows

    def spy(self: LabelGuard) -> object:
        calls.append(self)
        return original(self)

    monkeypatch.setattr(LabelGuard, "replayed_rows", spy)
    assert [r.height for r in history(store)] == [1, 2, 3]
    assert calls == [label_guard(store)]  # the handle's one guard, not a private replay
    assert not hasattr(history_module, "replay") and not hasattr(history_module, "read_audit_rows")


def test_history_shares_the_handles_one_replay_and_sees_later_appends(store: VaultStore) -> None:
    first, second = _three(store)[:2]
    guard = label_guard(store)
    assert [r.label for r in history(store)][-1] == f"delete/{first}"
    store.delete(second)
    assert [r.label for r in history(store)][-1] == f"delete/{second}"
    assert guard.full_replays == 1  # incremental syncs, one replay from genesis per handle


@pytest.mark.parametrize(
    "tamper",
    [
        "UPDATE audit SET record_id = 'drawer/elsewhere' WHERE seq = (SELECT min(seq) FROM audit)",  # relabel
        "UPDATE audit SET at = '2020-01-01T00:00:00.000000Z' WHERE seq = (SELECT min(seq) FROM audit)",
        "DELETE FROM audit WHERE seq = (SELECT max(seq) FROM audit)",  # a stripped tail
    ],
    ids=["relabelled", "re-timed", "tail removed"],
)
def test_a_trail_that_does_not_replay_refuses_with_the_guards_verdict(
    tamper: str, store: VaultStore, home: Path
) -> None:
    _three(store)
    with _db(home) as db:
        db.execute(tamper)
    with pytest.raises(HistoryRefused, match=r"does not reproduce the committed head.*undercroft verify") as caught:
        history(store)
    refused = caught.value
    assert isinstance(refused, LabelGuardRefused) and isinstance(refused, ChainBroken)
    assert isinstance(refused, IntegrityError)
    assert isinstance(refused.__cause__, LabelGuardRefused)


def test_a_row_edited_beneath_a_replayed_handle_refuses_history(store: VaultStore, home: Path) -> None:
    ids = _three(store)
    assert len(history(store)) == 3  # the guard replayed clean
    with _db(home) as db:
        db.execute("UPDATE audit SET record_id = ? WHERE record_id = ?", (f"drawer/{ids[1]}", f"drawer/{ids[0]}"))
    with pytest.raises(HistoryRefused, match="undercroft verify"):
        history(store)


def test_history_on_a_read_only_handle_and_under_read_audit(
    palace: Palace, embedder: HashEmbedder, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with palace.open_vault("default", embedder) as store:
        _three(store)
    monkeypatch.setenv("UNDERCROFT_READ_AUDIT", "chain")
    with palace.open_vault("default", embedder) as store:
        assert len(history(store, prefixes=("drawer/",))) == 2
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        reader = palace.open_vault("default", embedder, read_only=True)
    assert any("served unaudited" in line for line in reader.unhealed)
    with reader:
        assert len(history(reader)) == 3
    assert _labels(home, "read/") == []  # labels, times and heights are not a content read


# --- the admission queue ---------------------------------------------------------------------------------


@pytest.fixture
def gated(store: VaultStore) -> VaultStore:
    install_gate(store, AdmissionPolicy(mode=Admission.QUARANTINE))
    return store


def _queue_one(store: VaultStore) -> str:
    [queued] = store.remember(ATTACK, wing="notes", room="inbox", added_by="cli")
    assert queued.outcome == "quarantined"
    return queued.id


def test_a_queue_label_relabelled_beneath_a_replayed_handle_refuses_each_ruling(gated: VaultStore, home: Path) -> None:
    slot = _queue_one(gated)
    [item] = list_admissions(gated)  # the guard replayed clean and holds quarantine/<slot>
    assert item.entry.drawer_id == slot
    with _db(home) as db:
        db.execute("UPDATE audit SET record_id = 'quarantine/elsewhere' WHERE record_id = ?", (f"quarantine/{slot}",))
    for ruling in (list_admissions, lambda s: allow(s, slot), lambda s: deny(s, slot)):
        with pytest.raises(LabelGuardRefused, match=r"'quarantine/.*' was edited, relabelled or removed"):
            ruling(gated)
    count = gated.count()
    assert count == 1 and [r.id for r in gated.list_drawers(include_quarantine=True)] == [slot]  # nothing ruled


def test_a_clean_queue_is_ruled_on_one_replay(gated: VaultStore) -> None:
    first, second = _queue_one(gated), _queue_one(gated)
    assert [i.entry.drawer_id for i in list_admissions(gated)] == [first, second]
    allow(gated, first)
    deny(gated, second)
    assert list_admissions(gated) == []
    assert label_guard(gated).full_replays == 1
