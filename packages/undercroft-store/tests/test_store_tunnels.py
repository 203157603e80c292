"""Tunnels: create, list, follow, delete, traverse; tagged, audited and verified."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace
from undercroft_store.memory.kg.errors import FactTampered, InvalidSurfaceInput, SurfaceNotFound
from undercroft_store.memory.tunnels import create_tunnel, delete_tunnel, follow_tunnel, list_tunnels, traverse


def test_create_list_follow_traverse_delete(palace: Palace) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        store.remember("API notes", wing="backend", room="api", added_by="t")
        store.remember("UI notes", wing="frontend", room="ui", added_by="t")
        store.remember("Infra notes", wing="ops", room="infra", added_by="t")
        a = create_tunnel(store, "backend", "frontend", "serves the UI", to_room="ui")
        b = create_tunnel(store, "frontend", "ops", "deployed by")
        assert [t.id for t in list_tunnels(store)] == [a.id, b.id]
        assert [t.id for t in list_tunnels(store, wing="ops")] == [b.id]
        assert [d.content for d in follow_tunnel(store, a.id)] == ["UI notes"]
        assert [d.content for d in follow_tunnel(store, a.id, from_wing="frontend")] == ["API notes"]
        assert traverse(store, "backend", depth=2) == [("frontend", 1, a.id), ("ops", 2, b.id)]
        assert traverse(store, "backend", depth=1) == [("frontend", 1, a.id)]
        assert store.verify().ok
        delete_tunnel(store, a.id)
        assert [t.id for t in list_tunnels(store)] == [b.id]
        with pytest.raises(SurfaceNotFound, match=f"no tunnel '{a.id}'"):
            follow_tunnel(store, a.id)
        assert store.verify().ok


def test_bad_tunnels(palace: Palace) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        with pytest.raises(InvalidSurfaceInput, match="both ends are 'a'"):
            create_tunnel(store, "a", "a", "self")
        with pytest.raises(InvalidSurfaceInput, match="cannot be a tunnel end"):
            create_tunnel(store, "a", "quarantine-pending", "x")
        with pytest.raises(InvalidSurfaceInput, match="label must be a non-empty string"):
            create_tunnel(store, "a", "b", " ")
        with pytest.raises(InvalidSurfaceInput, match="depth must be an integer from 1 to 8, got 0"):
            traverse(store, "a", depth=0)


def test_tampered_resurrected_and_sealed_label(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        a = create_tunnel(store, "backend", "frontend", "Zorblax secret label")
        b = create_tunnel(store, "ops", "frontend", "second")
    db = home / "vaults" / "default" / "vault.db"
    with sqlite3.connect(db) as raw:
        row = raw.execute("SELECT * FROM tunnels WHERE id = ?", (b.id,)).fetchone()
    raw_bytes = b"".join(p.read_bytes() for p in db.parent.iterdir() if p.name.startswith("vault.db"))
    assert b"Zorblax" not in raw_bytes
    with palace.open_vault("default", HashEmbedder()) as store:
        delete_tunnel(store, b.id)
    with sqlite3.connect(db) as raw:
        raw.execute("INSERT INTO tunnels VALUES (?, ?, ?, ?, ?, ?, ?, ?)", row)
        raw.execute("UPDATE tunnels SET to_wing = 'ops' WHERE id = ?", (a.id,))
    with palace.open_vault("default", HashEmbedder()) as store:
        surfaces = store.verify().surfaces
        assert surfaces is not None
        assert surfaces.resurrected == [f"tunnel {b.id}"]
        assert surfaces.mirror_drift == [f"tunnel {a.id}"]
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE tunnels SET label = X'00' WHERE id = ?", (a.id,))
    with palace.open_vault("default", HashEmbedder()) as store, pytest.raises(FactTampered, match="fails its HMAC"):
        list_tunnels(store)
