"""Drawer supersession: keyed receipts, supersession times, live_at reconstruction, verdicts, verify."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

from undercroft_core import HashEmbedder
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.supersession import live_at, supersede_drawer, supersessions


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
