"""The label guard: one replay per handle, append-only afterwards, refusal on a chain that does not replay."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_core.errors import IntegrityError
from undercroft_store import Palace
from undercroft_store.kernel._internal.meta_at_rest import stored_label
from undercroft_store.kernel.label_guard import LabelGuardRefused, label_guard
from undercroft_store.kernel.trust import list_trust, set_trust


def _db(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / "default" / "vault.db")


def test_replays_once_per_handle_and_follows_appends(palace: Palace, embedder: HashEmbedder) -> None:
    with palace.open_vault("default", embedder) as store:
        store.remember("First note.", wing="notes", room="inbox", added_by="cli")
        guard = label_guard(store)
        set_trust(store, "notes", "trusted")
        store.remember("Second note.", wing="notes", room="inbox", added_by="cli")
        assert label_guard(store) is guard
        assert guard.full_replays == 1
        notes = "trust/" + str(stored_label(store._context, "wing", "notes"))  # a blind key on a sealed vault
        assert guard.newest(notes) is not None
        assert set(guard.labels("trust/")) == {notes}


def test_appends_by_another_connection_are_folded(palace: Palace, embedder: HashEmbedder) -> None:
    with palace.open_vault("default", embedder) as first, palace.open_vault("default", embedder) as second:
        guard = label_guard(first)
        set_trust(second, "notes", "trusted")
        notes = "trust/" + str(stored_label(first._context, "wing", "notes"))
        assert label_guard(first).newest(notes) is not None
        assert guard.full_replays == 1


def test_relabelled_audit_row_refuses(palace: Palace, embedder: HashEmbedder, home: Path) -> None:
    with palace.open_vault("default", embedder) as store:
        set_trust(store, "scraped", "quarantined")
        set_trust(store, "team", "trusted")
        scraped, elsewhere = (stored_label(store._context, "wing", wing) for wing in ("scraped", "elsewhere"))
    with _db(home) as connection:
        connection.execute(
            "UPDATE audit SET record_id = ? WHERE record_id = ?", (f"trust/{elsewhere}", f"trust/{scraped}")
        )
    with palace.open_vault("default", embedder) as store:
        with pytest.raises(LabelGuardRefused, match=r"does not replay.*undercroft verify") as caught:
            list_trust(store)
        assert isinstance(caught.value, IntegrityError)
        assert not store.verify().ok


def test_row_removed_under_an_open_handle_refuses(palace: Palace, embedder: HashEmbedder, home: Path) -> None:
    with palace.open_vault("default", embedder) as store:
        set_trust(store, "scraped", "quarantined")
        store.remember("A note.", wing="notes", room="inbox", added_by="cli")
        label_guard(store)
        with _db(home) as connection:
            scraped = stored_label(store._context, "wing", "scraped")
            connection.execute("DELETE FROM audit WHERE record_id = ?", (f"trust/{scraped}",))
        store.remember("Another note.", wing="notes", room="inbox", added_by="cli")
        with pytest.raises(LabelGuardRefused, match="gone"):
            label_guard(store)
