"""Every reader that decides from an audit label goes through the one label guard.

A relabelled audit row refuses the trust floor, the retention sweep and listing, forget and
verify-forgetting, the witness and the admission queue listing with the same integrity verdict naming
``undercroft verify`` — whether the row was relabelled before the handle opened (the first replay catches it)
or beneath a handle that had already replayed (the per-key invariant catches the label the reader looks at).
"""

from __future__ import annotations

import importlib.util
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_core.errors import IntegrityError
from undercroft_store import ChainBroken, Palace, VaultStore
from undercroft_store.governance.forgetting import forget, verify_forgetting
from undercroft_store.governance.retention import list_retention, set_retention, sweep
from undercroft_store.governance.rulings import list_admissions
from undercroft_store.integrity.witness import check_witness_document, emit_witness
from undercroft_store.kernel._internal.meta_at_rest import stored_label
from undercroft_store.kernel.label_guard import LabelGuardRefused, label_guard
from undercroft_store.kernel.trust import list_trust, set_trust
from undercroft_store.search.scope import trust_policy

Reader = Callable[[VaultStore, dict[str, object]], object]

READERS: dict[str, Reader] = {
    "trust floor": lambda s, f: trust_policy(s, {}),
    "trust listing": lambda s, f: list_trust(s),
    "retention listing": lambda s, f: list_retention(s),
    "retention sweep": lambda s, f: sweep(s),
    "forget": lambda s, f: forget(s, [str(f["victim"])]),
    "verify-forgetting": lambda s, f: verify_forgetting(s, str(f["receipt"])),
    "witness emit": lambda s, f: emit_witness(s),
    "witness check": lambda s, f: check_witness_document(s, f["witness"]),  # type: ignore[arg-type]
    "admission queue": lambda s, f: list_admissions(s),
}


def _db(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / "default" / "vault.db")


@pytest.fixture
def governed(palace: Palace, embedder: HashEmbedder) -> dict[str, object]:
    with palace.open_vault("default", embedder) as store:
        ids = [r.id for r in store.remember("First note.", wing="notes", room="inbox", added_by="cli")]
        ids += [r.id for r in store.remember("Second note.", wing="notes", room="inbox", added_by="cli")]
        ids += [r.id for r in store.remember("Third note.", wing="notes", room="inbox", added_by="cli")]
        set_trust(store, "notes", "trusted")
        set_retention(store, "notes", max_age=3600)
        receipt = forget(store, [ids[0]]).to_json()
        witness = emit_witness(store)
    return {"victim": ids[1], "receipt": receipt, "witness": witness}


def _relabel(home: Path) -> None:
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        notes, elsewhere = (stored_label(store._context, "wing", wing) for wing in ("notes", "elsewhere"))
    with _db(home) as connection:  # the offline writer moves a policy label to another wing
        for prefix in ("trust/", "retention/"):
            connection.execute(
                "UPDATE audit SET record_id = ? WHERE record_id = ?", (prefix + elsewhere, prefix + notes)
            )


@pytest.mark.parametrize("reader", sorted(READERS))
def test_a_relabelled_row_refuses_each_reader_on_a_fresh_handle(
    reader: str, governed: dict[str, object], palace: Palace, embedder: HashEmbedder, home: Path
) -> None:
    _relabel(home)
    with palace.open_vault("default", embedder) as store:
        count = store.count()
        with pytest.raises(LabelGuardRefused, match=r"undercroft verify") as caught:
            READERS[reader](store, governed)
        assert isinstance(caught.value, IntegrityError) and isinstance(caught.value, ChainBroken)
        assert store.count() == count  # nothing was destroyed


@pytest.mark.parametrize(
    "reader", ["trust floor", "trust listing", "retention listing", "retention sweep", "forget", "verify-forgetting"]
)
def test_a_row_relabelled_beneath_a_replayed_handle_refuses(
    reader: str, governed: dict[str, object], palace: Palace, embedder: HashEmbedder, home: Path
) -> None:
    with palace.open_vault("default", embedder) as store:
        guard = label_guard(store)  # replayed once, clean
        _relabel(home)
        with pytest.raises(LabelGuardRefused, match=r"(relabelled|does not authenticate).*undercroft verify"):
            READERS[reader](store, governed)
        assert guard.full_replays == 1


def test_the_duplicate_replay_check_is_gone() -> None:
    assert importlib.util.find_spec("undercroft_store.kernel._internal.replay_guard") is None


def test_clean_readers_share_one_replay(governed: dict[str, object], palace: Palace, embedder: HashEmbedder) -> None:
    with palace.open_vault("default", embedder) as store:
        for name in ("trust floor", "retention listing", "verify-forgetting", "witness emit", "admission queue"):
            READERS[name](store, governed)
        assert label_guard(store).full_replays == 1
        assert list_retention(store).ok and [a.wing for a in list_trust(store)] == ["notes"]
