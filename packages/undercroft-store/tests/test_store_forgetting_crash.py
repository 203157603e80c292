"""Forgetting is one transaction: kill -9 between the tombstones and the ``forget/`` record, or after the
commit before the anchor, and the reopened vault holds all of it or none — a receipt record iff the drawers
are gone — and verifies clean."""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Callable
from pathlib import Path
from types import ModuleType

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import DrawerNotFound, Palace
from undercroft_store.governance import forgetting as forgetting_module
from undercroft_store.governance.forgetting import forget, verify_forgetting
from undercroft_store.kernel._internal import chain_append as anchor_module
from undercroft_store.store import VaultStore

TEXTS = ["Alice lives at 12 Elm Street.", "Alice's phone is 555-0100.", "The team chose GraphQL."]


def _die(*_args: object, **_kwargs: object) -> None:
    os.kill(os.getpid(), signal.SIGKILL)


def _killed(home: Path, module: ModuleType, name: str, action: Callable[[VaultStore], object]) -> None:
    """Run `action` in a forked child whose `module.name` SIGKILLs it; assert the kill point was reached."""
    pid = os.fork()
    if pid == 0:  # forked with the modules imported; the parent's handles are closed
        try:
            with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
                setattr(module, name, _die)
                action(store)
        finally:
            os._exit(3)  # reached only when the kill point never ran
    _, status = os.waitpid(pid, 0)
    assert os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGKILL, f"child exited: {status}"


def _fill(home: Path) -> list[str]:
    with Palace(home) as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            return [store.remember(text, wing="people", room="alice", added_by="t")[0].id for text in TEXTS]


def _labels(home: Path) -> list[str]:
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as raw:
        return [str(r[0]) for r in raw.execute("SELECT record_id FROM audit ORDER BY seq")]


def _present(store: VaultStore, ids: list[str]) -> list[bool]:
    found = []
    for drawer_id in ids:
        try:
            store.get(drawer_id)
            found.append(True)
        except DrawerNotFound:
            found.append(False)
    return found


# (module, attribute) killed at: between the former two commits (the forget record's tag is computed after
# the tombstones), and after the one commit before the manifest anchor.
BETWEEN = (forgetting_module, "compute_tag")
BEFORE_ANCHOR = (anchor_module, "swap_manifest")  # every anchor goes through chain_append.anchor_now


def test_kill_between_tombstones_and_the_forget_record_leaves_nothing(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    ids = _fill(home)
    before = _labels(home)
    _killed(home, *BETWEEN, lambda store: forget(store, ids[:2], reason="data subject request"))
    assert _labels(home) == before  # no tombstone record, no forget record
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        assert _present(store, ids) == [True, True, True]
        assert store._context.connection.execute("SELECT count(*) FROM tombstones").fetchone()[0] == 0
        report = store.verify()
        assert report.ok, report.render()
        receipt = forget(store, ids[:2], reason="data subject request")  # the erasure can simply be retried
        assert verify_forgetting(store, receipt.to_json()).status == "verified"


def test_kill_after_the_commit_keeps_the_erasure_and_its_record(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    ids = _fill(home)
    before = _labels(home)
    _killed(home, *BEFORE_ANCHOR, lambda store: forget(store, ids[:2], reason="data subject request"))
    after = _labels(home)
    assert after[: len(before)] == before
    new = after[len(before) :]
    assert new[:2] == [f"delete/{ids[0]}", f"delete/{ids[1]}"]
    assert len(new) == 3 and new[2].startswith("forget/")
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        assert _present(store, ids) == [False, False, True]
        report = store.verify()  # the anchor was left behind: the open heals it, never a false alarm
        assert report.ok, report.render()


@pytest.mark.parametrize("point", [BETWEEN, BEFORE_ANCHOR], ids=["between", "before-anchor"])
def test_a_receipt_record_exists_iff_the_drawers_are_gone(tmp_path: Path, point: tuple[ModuleType, str]) -> None:
    home = tmp_path / "palace"
    ids = _fill(home)
    _killed(home, *point, lambda store: forget(store, ids, reason="operator"))
    receipts = [label for label in _labels(home) if label.startswith("forget/")]
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        present = _present(store, ids)
        assert present in ([True] * 3, [False] * 3)
        assert bool(receipts) == (present == [False] * 3)
        assert store.verify().ok


def test_a_failure_inside_the_transaction_rolls_back_on_a_live_handle(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "palace"
    ids = _fill(home)
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        height = store.stats().chain_records

        def refuse(*_args: object) -> bytes:
            raise RuntimeError("injected between the tombstones and the forget record")

        with monkeypatch.context() as patch:
            patch.setattr(forgetting_module, "compute_tag", refuse)
            with pytest.raises(RuntimeError, match="injected between"):
                forget(store, ids[:1])
        assert store.stats().chain_records == height and _present(store, ids) == [True, True, True]
        assert not store._context.connection.in_transaction
        receipt = forget(store, ids[:1])  # the same handle forgets afterwards, its label guard intact
        assert receipt.body.interval_start == height and receipt.record_height == height + 2
        assert verify_forgetting(store, receipt.to_json()).status == "verified"
        assert store.verify().ok


def test_a_row_relabelled_beneath_a_replayed_handle_refuses_before_destroying(tmp_path: Path) -> None:
    """The whole trail is replayed inside the transaction, before the first tombstone: nothing is destroyed."""
    from undercroft_store.kernel.label_guard import LabelGuardRefused, label_guard

    home = tmp_path / "palace"
    ids = _fill(home)
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        label_guard(store)  # replayed once, clean
        with sqlite3.connect(home / "vaults" / "default" / "vault.db") as raw:
            raw.execute("UPDATE audit SET record_id = 'drawer/elsewhere' WHERE seq = 1")
        with pytest.raises(LabelGuardRefused, match="undercroft verify"):
            forget(store, ids[:1])
        assert _present(store, ids) == [True, True, True]
        assert store._context.connection.execute("SELECT count(*) FROM tombstones").fetchone()[0] == 0
