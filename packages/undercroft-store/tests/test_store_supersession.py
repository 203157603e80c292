"""Drawer supersession: keyed receipts, supersession times, live_at reconstruction, verdicts, verify."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

from undercroft_core import HashEmbedder
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.memory.supersession import live_at, supersede_drawer, supersessions


def test_supersede_lists_verdicts_and_live_at(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        [old] = store.remember("The VPN gateway is vpn-1", wing="ops", room="net", added_by="t")
        [other] = store.remember("Printer is on floor 2", wing="ops", room="net", added_by="t")
        filed_old = store.get(old.id).filed_at
        link = supersede_drawer(store, old.id, "The VPN gateway is vpn-2", added_by="t")
        new = store.get(link.drawer_id)
        assert new.supersedes == old.id and link.at > filed_old
        assert [(s.superseded_id, s.verdict) for s in supersessions(store)] == [(old.id, "verified")]
        before = {d.id for d in live_at(store, filed_old)}
        assert old.id in before and new.id not in before
        after = {d.id for d in live_at(store, link.at)}
        assert old.id not in after and {new.id, other.id} <= after
        assert store.verify().ok
        store.write([DrawerWrite(replace(store.get(old.id), content="The VPN gateway is vpn-9"))], screening=Screen())
        assert supersessions(store)[0].verdict == "superseded_changed"
        store.delete(old.id)
        assert supersessions(store)[0].verdict == "superseded_gone"
        assert store.verify().ok
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as raw:
        raw.execute(
            'UPDATE supersessions SET meta_json = CAST(replace(CAST(meta_json AS TEXT), \'"at":"2\', '
            '\'"at":"1\') AS BLOB)'
        )
    with palace.open_vault("default", HashEmbedder()) as store:
        assert supersessions(store)[0].verdict == "tampered"
        surfaces = store.verify().surfaces
        assert surfaces is not None and surfaces.tampered == [f"supersession {link.drawer_id}"]


def test_a_diverted_supersession_links_under_the_id_it_aims_at(palace: Palace) -> None:
    """The screen diverts the superseding text: the link (same commit) names the id it aims at; allow lands it."""
    from undercroft_config.values import Admission
    from undercroft_core.vocabulary import QUARANTINE_WING
    from undercroft_store.governance.admission import AdmissionPolicy, load_fixtures
    from undercroft_store.governance.quarantine import install_gate
    from undercroft_store.governance.rulings import allow, list_admissions

    with palace.open_vault("default", HashEmbedder()) as store:
        [old] = store.remember("The VPN gateway is vpn-1", wing="ops", room="net", added_by="t")
        install_gate(store, AdmissionPolicy(mode=Admission.QUARANTINE))
        link = supersede_drawer(store, old.id, load_fixtures()[0].text, added_by="t")
        [item] = list_admissions(store)
        assert item.entry.intended_id == link.drawer_id != item.entry.drawer_id
        resident = store.get(item.entry.drawer_id, wing=QUARANTINE_WING)
        assert resident.supersedes == old.id
        assert [(s.drawer_id, s.verdict) for s in supersessions(store)] == [(link.drawer_id, "verified")]
        report = store.verify()
        assert report.ok and report.surfaces is not None and report.surfaces.supersession_gaps == [], report.render()
        allow(store, item.entry.drawer_id)
        assert store.get(link.drawer_id).supersedes == old.id
        report = store.verify()
        assert report.ok and report.surfaces is not None and report.surfaces.supersession_gaps == [], report.render()
