"""An admission deny is one transaction: kill -9 between the erasure and the ruling, or after the commit before
the anchor, and the reopened vault holds the erasure, its ``forget/`` receipt record and the ``ruling/``
record together, or none of them — and verifies clean."""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from undercroft_config.values import Admission
from undercroft_core import HashEmbedder
from undercroft_core.drawer import Drawer
from undercroft_core.ids import ID_RECIPE_SOURCE, source_drawer_id
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_store import DrawerNotFound, DrawerWrite, Palace, Screen
from undercroft_store.governance import rulings as rulings_module
from undercroft_store.governance.admission import AdmissionPolicy, load_fixtures
from undercroft_store.governance.forgetting import verify_forgetting
from undercroft_store.governance.quarantine import install_gate
from undercroft_store.governance.rulings import deny, list_admissions
from undercroft_store.kernel._internal import chain_append as anchor_module
from undercroft_store.store import VaultStore

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

ATTACK = load_fixtures()[0].text
BETWEEN = (rulings_module, "ruling_tag")  # computed after the erasure, where the second commit began
BEFORE_ANCHOR = (anchor_module, "swap_manifest")  # every anchor goes through chain_append.anchor_now


def _die(*_args: object, **_kwargs: object) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _killed(home: Path, module: ModuleType, name: str, action: Callable[[VaultStore], object]) -> None:
    """Run `action` in a forked child whose `module.name` SIGKILLs it; assert the kill point was reached."""
    pid = os.fork()
    if pid == 0:
        try:
            with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
                setattr(module, name, _die)
                action(store)
        finally:
            os._exit(3)  # reached only when the kill point never ran
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, f"child exited: {status}"


def _queued(home: Path) -> str:
    drawer = Drawer(
        id=source_drawer_id("notes", "inbox", "doc.md", 0),
        content=ATTACK,
        wing="notes",
        room="inbox",
        chunk_index=0,
        id_recipe=ID_RECIPE_SOURCE,
        source_file="doc.md",
        added_by="import",
        filed_at="2026-05-01T09:00:00.000000Z",
    )
    with Palace(home) as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            install_gate(store, AdmissionPolicy(mode=Admission.QUARANTINE))
            [queued] = store.write([DrawerWrite(drawer)], screening=Screen())
            assert queued.outcome == "quarantined"
            return queued.id


def _labels(home: Path) -> list[str]:
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as raw:
        return [str(r[0]) for r in raw.execute("SELECT record_id FROM audit ORDER BY seq")]


def _resident(store: VaultStore, slot: str) -> bool:
    try:
        store.get(slot, wing=QUARANTINE_WING)
    except DrawerNotFound:
        return False
    return True


def test_kill_between_the_erasure_and_the_ruling_leaves_nothing(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    slot = _queued(home)
    before = _labels(home)
    _killed(home, *BETWEEN, lambda store: deny(store, slot))
    assert _labels(home) == before  # no delete/, no forget/, no ruling/
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        assert _resident(store, slot)
        assert [item.entry.drawer_id for item in list_admissions(store)] == [slot]
        report = store.verify()
        assert report.ok, report.render()
        ruling = deny(store, slot)  # the ruling is simply taken again, with its receipt
        assert ruling.receipt is not None
        assert verify_forgetting(store, ruling.receipt.to_json()).status == "verified"


def test_kill_after_the_commit_keeps_erasure_receipt_and_ruling(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    slot = _queued(home)
    before = _labels(home)
    _killed(home, *BEFORE_ANCHOR, lambda store: deny(store, slot))
    new = _labels(home)[len(before) :]
    assert len(new) == 3
    assert new[0] == f"delete/{slot}" and new[1].startswith("forget/") and new[2] == f"ruling/{slot}"
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        assert not _resident(store, slot)
        assert list_admissions(store) == []
        report = store.verify()
        assert report.ok, report.render()


@pytest.mark.parametrize("point", [BETWEEN, BEFORE_ANCHOR], ids=["between", "before-anchor"])
def test_a_receipt_record_exists_iff_the_resident_is_gone(tmp_path: Path, point: tuple[ModuleType, str]) -> None:
    home = tmp_path / "palace"
    slot = _queued(home)
    _killed(home, *point, lambda store: deny(store, slot))
    labels = _labels(home)
    receipts = [label for label in labels if label.startswith("forget/")]
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        gone = not _resident(store, slot)
        assert bool(receipts) == gone == (f"ruling/{slot}" in labels)
        assert (list_admissions(store) == []) == gone
        assert store.verify().ok


def test_a_failure_at_the_ruling_rolls_the_erasure_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "palace"
    slot = _queued(home)
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        height = store.stats().chain_records

        def refuse(*_args: object) -> bytes:
            raise RuntimeError("injected between the erasure and the ruling")

        with monkeypatch.context() as patch:
            patch.setattr(rulings_module, "ruling_tag", refuse)
            with pytest.raises(RuntimeError, match="injected between"):
                deny(store, slot)
        assert store.stats().chain_records == height and _resident(store, slot)
        assert not store._context.connection.in_transaction
        ruling = deny(store, slot)
        assert ruling.receipt is not None and ruling.receipt.record_height == height + 2
        assert store.stats().chain_records == height + 3  # delete/, forget/, ruling/
        assert verify_forgetting(store, ruling.receipt.to_json()).status == "verified"
        assert store.verify().ok
