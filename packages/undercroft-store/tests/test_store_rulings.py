"""Admission rulings: list shows the destination's state, allow re-files unless the destination moved."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from undercroft_config.values import Admission
from undercroft_core import HashEmbedder
from undercroft_core.drawer import Drawer
from undercroft_core.ids import ID_RECIPE_SOURCE, source_drawer_id
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.errors import DrawerNotFound
from undercroft_store.governance.admission import AdmissionPolicy, load_fixtures
from undercroft_store.governance.quarantine import QueueTampered, install_gate
from undercroft_store.governance.rulings import DestinationMoved, QueueEntryNotFound, allow, list_admissions
from undercroft_store.store import VaultStore

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

ATTACK = load_fixtures()[0].text
CLEAN = "The quarterly report is due on Friday."


def _drawer(text: str) -> Drawer:
    return Drawer(
        id=source_drawer_id("notes", "inbox", "doc.md", 0),
        content=text,
        wing="notes",
        room="inbox",
        chunk_index=0,
        id_recipe=ID_RECIPE_SOURCE,
        source_file="doc.md",
        added_by="import",
        filed_at="2026-05-01T09:00:00.000000Z",
    )


@pytest.fixture
def store(palace: Palace, embedder: HashEmbedder) -> Iterator[VaultStore]:
    with palace.open_vault("default", embedder) as opened:
        install_gate(opened, AdmissionPolicy(mode=Admission.QUARANTINE))
        yield opened


def test_allow_refiles_to_the_intended_id(store: VaultStore) -> None:
    [queued] = store.write([DrawerWrite(_drawer(ATTACK))], screening=Screen())
    [item] = list_admissions(store)
    assert item.entry.drawer_id == queued.id and item.destination == "unchanged"
    # The fixture is an imperative override AND one of the committed attack fixtures: both signals, in order.
    assert item.entry.signals == ("imperative-instruction", "attack-fixture-similarity")
    ruling = allow(store, queued.id)
    assert ruling.verdict == "allow" and ruling.landed_id == queued.intended_id
    assert store.get(queued.intended_id or "").content == ATTACK
    with pytest.raises(DrawerNotFound):
        store.get(queued.id, wing=QUARANTINE_WING)
    assert list_admissions(store) == []
    report = store.verify()
    assert report.ok, report.render()
    with pytest.raises(QueueEntryNotFound):
        allow(store, queued.id)


def test_allow_refused_when_the_destination_moved(store: VaultStore) -> None:
    [queued] = store.write([DrawerWrite(_drawer(ATTACK))], screening=Screen())
    [written] = store.write([DrawerWrite(_drawer(CLEAN))], screening=Screen())
    assert written.outcome == "created" and written.id == queued.intended_id
    [item] = list_admissions(store)
    assert item.destination == "moved"
    with pytest.raises(DestinationMoved, match="written or deleted since"):
        allow(store, queued.id)
    assert store.get(written.id).content == CLEAN
    assert store.verify().ok


def test_destination_rechecked_inside_the_write_transaction(
    store: VaultStore, palace: Palace, embedder: HashEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    [queued] = store.write([DrawerWrite(_drawer(ATTACK))], screening=Screen())
    import undercroft_store.governance.rulings as rulings

    real = rulings._stored_vector

    def race(context: object, slot: str) -> object:  # another writer lands between the read and the commit
        with palace.open_vault("default", embedder) as other:
            other.write([DrawerWrite(_drawer(CLEAN))], screening=Screen())
        return real(context, slot)  # type: ignore[arg-type]

    monkeypatch.setattr(rulings, "_stored_vector", race)
    with pytest.raises(DestinationMoved):
        allow(store, queued.id)
    assert store.get(queued.id, wing=QUARANTINE_WING).content == ATTACK
    assert store.get(queued.intended_id or "").content == CLEAN
    assert store.verify().ok


@pytest.mark.parametrize(
    "edit",
    [
        "intended_wing = 'ops'",  # on a sealed vault the blind column no longer matches the sealed detail
        "queued_at = '2020-01-01T00:00:00.000000Z'",  # only the tag covers this one
        "chunk_index = chunk_index + 1",  # and this one
    ],
)
def test_tampered_queue_row_refuses_and_fails_verify(
    store: VaultStore, palace: Palace, embedder: HashEmbedder, home: Path, edit: str
) -> None:
    [queued] = store.write([DrawerWrite(_drawer(ATTACK))], screening=Screen())
    store.close()
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as connection:
        connection.execute(f"UPDATE admission_queue SET {edit}")  # `edit` is one of this test's parameters
    with palace.open_vault("default", embedder) as reopened:
        with pytest.raises(QueueTampered, match="fails its HMAC tag"):
            allow(reopened, queued.id)
        assert "QUEUE: queue row" in reopened.verify().render()


def test_queue_row_deleted_is_detected(store: VaultStore, palace: Palace, embedder: HashEmbedder, home: Path) -> None:
    store.write([DrawerWrite(_drawer(ATTACK))], screening=Screen())
    store.close()
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as connection:
        connection.execute("DELETE FROM admission_queue")
    with palace.open_vault("default", embedder) as reopened:
        render = reopened.verify().render()
        assert "removed without a ruling" in render and "has no queue row" in render


def test_deny_destroys_through_attested_forgetting(store: VaultStore) -> None:
    from undercroft_store.governance.forgetting import verify_forgetting
    from undercroft_store.governance.rulings import deny

    [queued] = store.write([DrawerWrite(_drawer(ATTACK))], screening=Screen())
    ruling = deny(store, queued.id)
    assert ruling.verdict == "deny" and ruling.receipt is not None and ruling.landed_id is None
    assert [f.id for f in ruling.receipt.body.forgotten] == [queued.id]
    with pytest.raises(DrawerNotFound):
        store.get(queued.id, wing=QUARANTINE_WING)
    with pytest.raises(DrawerNotFound):
        store.get(queued.intended_id or "")
    assert list_admissions(store) == []
    verdict = verify_forgetting(store, ruling.receipt.to_json())
    assert verdict.status == "verified", verdict
    report = store.verify()
    assert report.ok, report.render()
