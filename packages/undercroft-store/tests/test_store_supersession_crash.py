"""Supersession is one transaction: kill -9 where the link row used to be recorded (after the new drawer's old
commit), or after the one commit before the anchor, and the reopened vault holds the drawer with its link or
neither — verify clean, no supersession gap. Verify names the gap an older build could leave."""

from __future__ import annotations

import os
import signal
import sqlite3
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from types import ModuleType

import pytest
from undercroft_core import HashEmbedder
from undercroft_core.drawer import Drawer
from undercroft_core.ids import ID_RECIPE_APPEND, append_drawer_id
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.kernel._internal import chain_append as anchor_module
from undercroft_store.memory import supersession as supersession_module
from undercroft_store.memory.supersession import supersede_drawer, supersessions
from undercroft_store.store import VaultStore

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

BETWEEN = (supersession_module, "supersession_tag")  # the link's tag: where the second commit began
BEFORE_ANCHOR = (anchor_module, "swap_manifest")  # every anchor goes through chain_append.anchor_now
NEW = "The VPN gateway is vpn-2"


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


def _old(home: Path) -> str:
    with Palace(home) as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            return store.remember("The VPN gateway is vpn-1", wing="ops", room="net", added_by="t")[0].id


def _labels(home: Path) -> list[str]:
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as raw:
        return [str(r[0]) for r in raw.execute("SELECT record_id FROM audit ORDER BY seq")]


def _superseding(store: VaultStore, old_id: str) -> list[str]:
    return [d.id for d in store.list_drawers(wing="ops", room="net") if d.supersedes == old_id]


def test_kill_where_the_link_was_recorded_leaves_neither(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    old_id = _old(home)
    before = _labels(home)
    _killed(home, *BETWEEN, lambda store: supersede_drawer(store, old_id, NEW, added_by="t"))
    assert _labels(home) == before
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        assert _superseding(store, old_id) == [] and supersessions(store) == []
        report = store.verify()
        assert report.ok, report.render()
        assert report.surfaces is not None and report.surfaces.supersession_gaps == []
        link = supersede_drawer(store, old_id, NEW, added_by="t")  # simply taken again
        assert _superseding(store, old_id) == [link.drawer_id]


def test_kill_after_the_commit_keeps_drawer_and_link(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    old_id = _old(home)
    before = _labels(home)
    _killed(home, *BEFORE_ANCHOR, lambda store: supersede_drawer(store, old_id, NEW, added_by="t"))
    new = _labels(home)[len(before) :]
    assert len(new) == 2 and new[0].startswith("supersession/") and new[1] == "drawer/" + new[0].split("/")[1]
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        [drawer_id] = _superseding(store, old_id)
        assert [(s.drawer_id, s.superseded_id, s.verdict) for s in supersessions(store)] == [
            (drawer_id, old_id, "verified")
        ]
        report = store.verify()
        assert report.ok, report.render()
        assert report.surfaces is not None and report.surfaces.supersession_gaps == []


@pytest.mark.parametrize("point", [BETWEEN, BEFORE_ANCHOR], ids=["between", "before-anchor"])
def test_a_superseding_drawer_exists_iff_its_link_does(tmp_path: Path, point: tuple[ModuleType, str]) -> None:
    home = tmp_path / "palace"
    old_id = _old(home)
    _killed(home, *point, lambda store: supersede_drawer(store, old_id, NEW, added_by="t"))
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        assert [s.drawer_id for s in supersessions(store)] == _superseding(store, old_id)
        assert store.verify().ok


def test_a_failure_at_the_link_rolls_the_drawer_back(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    home = tmp_path / "palace"
    old_id = _old(home)
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        height = store.stats().chain_records

        def refuse(*_args: object) -> bytes:
            raise RuntimeError("injected at the link")

        with monkeypatch.context() as patch:
            patch.setattr(supersession_module, "supersession_tag", refuse)
            with pytest.raises(RuntimeError, match="injected at the link"):
                supersede_drawer(store, old_id, NEW, added_by="t")
        assert store.stats().chain_records == height and _superseding(store, old_id) == []
        assert not store._context.connection.in_transaction
        link = supersede_drawer(store, old_id, NEW, added_by="t")
        assert store.stats().chain_records == height + 2 and supersessions(store)[0].drawer_id == link.drawer_id


def test_verify_reports_a_superseding_drawer_without_its_link(tmp_path: Path) -> None:
    """The gap an older build's crash left (the drawer committed, the link not): reported, not failed."""
    home = tmp_path / "palace"
    old_id = _old(home)
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        index = store.allocate_append_indices(1)
        gap = Drawer(
            id=append_drawer_id("ops", "net", index),
            content=NEW,
            wing="ops",
            room="net",
            chunk_index=index,
            id_recipe=ID_RECIPE_APPEND,
            added_by="t",
            filed_at="2026-05-01T09:00:00.000000Z",
            supersedes=old_id,
        )
        store.write([DrawerWrite(gap)], screening=Screen())
        report = store.verify()
        assert report.surfaces is not None
        assert report.surfaces.supersession_gaps == [f"drawer {gap.id} supersedes {old_id}: no link row"]
        assert report.ok  # a missing receipt is not tampering: visible, not a failure
        rendered = report.render()
        assert "supersede gaps:   1 (reported, not failed)" in rendered
        assert f"  GAP: drawer {gap.id} supersedes {old_id}: no link row" in rendered
        linked = supersede_drawer(store, old_id, "The VPN gateway is vpn-3", added_by="t")
        again = store.verify()
        assert again.surfaces is not None and len(again.surfaces.supersession_gaps) == 1
        assert linked.drawer_id not in again.surfaces.supersession_gaps[0]


def test_verify_reports_a_link_naming_another_drawer(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    old_id = _old(home)
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        [other] = store.remember("Printer is on floor 2", wing="ops", room="net", added_by="t")
        link = supersede_drawer(store, old_id, NEW, added_by="t")
        drawer = store.get(link.drawer_id)
        # A genuine re-write of the superseding drawer that names another drawer: both records are authentic.
        store.write([DrawerWrite(replace(drawer, supersedes=other.id))], screening=Screen())
        report = store.verify()
        assert report.surfaces is not None
        assert report.surfaces.supersession_gaps == [
            f"drawer {link.drawer_id} supersedes {other.id}: its link names {old_id}"
        ]
