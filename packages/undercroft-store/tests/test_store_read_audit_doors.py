"""Read auditing wired into every door: one ``read/<op>`` record per content-returning read, none when off.

The inventory runs in both directions: every public reader of `undercroft_store` whose return type carries
content (drawers, facts, entities, closets, hallways, a wake-up, the admission queue, search hits) must be
listed here as AUDITED (and carry the decorator) or EXCLUDED with a reason; every listed name must exist.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re
import sqlite3
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import undercroft_store
from undercroft_config import Refused
from undercroft_core import HashEmbedder
from undercroft_store import Palace, VaultStore
from undercroft_store.governance.read_audit import READERS, InternalRead, silent
from undercroft_store.governance.rulings import list_admissions
from undercroft_store.memory.closets import build_closets
from undercroft_store.memory.dedup import check_duplicate, dedup, save_with_dedup
from undercroft_store.memory.diaries import read_diary, write_diary
from undercroft_store.memory.hallways import hallways
from undercroft_store.memory.kg.authority import canonical, declare_authority
from undercroft_store.memory.kg.graph import KnowledgeGraph
from undercroft_store.memory.supersession import live_at, supersede_drawer, supersessions
from undercroft_store.memory.tunnels import create_tunnel, follow_tunnel, list_tunnels
from undercroft_store.memory.wakeup import wake_up
from undercroft_store.search import Searcher, SearchRequest

CONTENT = re.compile(r"\b(Drawer|Fact|KgEntity|Closet|Hallway|WakeUp|AdmissionItem|SearchResult|SearchHit)\b")

Call = Callable[[VaultStore, dict[str, str]], object]

#: name -> (op, a call that reads through it once)
AUDITED: dict[str, tuple[str, Call]] = {
    "undercroft_store.store:VaultStore.get": ("get", lambda s, ids: s.get(ids["note"])),
    "undercroft_store.store:VaultStore.list_drawers": ("list", lambda s, ids: s.list_drawers(wing="notes")),
    "undercroft_store.store:VaultStore.hydrate": ("get", lambda s, ids: s.hydrate([ids["note"]])),
    "undercroft_store.store:VaultStore.hydrate_many": ("get", lambda s, ids: s.hydrate_many([1, 2])),
    "undercroft_store.search.engine:Searcher.search": (
        "search",
        lambda s, ids: Searcher(s, HashEmbedder()).search(SearchRequest("Alice meets Bob", limit=3)),
    ),
    "undercroft_store.memory.wakeup:wake_up": ("recent", lambda s, ids: wake_up(s)),
    "undercroft_store.memory.diaries:read_diary": ("diary", lambda s, ids: read_diary(s, "scout")),
    "undercroft_store.memory.tunnels:follow_tunnel": ("tunnel", lambda s, ids: follow_tunnel(s, ids["tunnel"])),
    "undercroft_store.memory.closets:build_closets": ("closet", lambda s, ids: build_closets(s, wing="notes")),
    "undercroft_store.memory.hallways:hallways": ("hallways", lambda s, ids: hallways(s, "notes")),
    "undercroft_store.governance.rulings:list_admissions": ("admission-queue", lambda s, ids: list_admissions(s)),
    "undercroft_store.memory.supersession:live_at": ("list", lambda s, ids: live_at(s, "2030-01-01T00:00:00Z")),
    "undercroft_store.memory.kg.graph:KnowledgeGraph.get": (
        "kg-query",
        lambda s, ids: KnowledgeGraph(s).get(ids["fact"]),
    ),
    "undercroft_store.memory.kg.graph:KnowledgeGraph.query": (
        "kg-query",
        lambda s, ids: KnowledgeGraph(s).query("Alice"),
    ),
    "undercroft_store.memory.kg.graph:KnowledgeGraph.rel": ("kg-query", lambda s, ids: KnowledgeGraph(s).rel("knows")),
    "undercroft_store.memory.kg.graph:KnowledgeGraph.timeline": (
        "kg-timeline",
        lambda s, ids: KnowledgeGraph(s).timeline("Alice"),
    ),
    "undercroft_store.memory.kg.graph:KnowledgeGraph.entities": (
        "kg-entities",
        lambda s, ids: KnowledgeGraph(s).entities(),
    ),
    "undercroft_store.memory.kg.authority:canonical": ("kg-canonical", lambda s, ids: canonical(s, "alice-employer")),
}

#: name -> why it appends nothing
EXCLUDED: dict[str, str] = {
    "undercroft_store.memory.kg.facts:decode_fact": "a codec over bytes its caller already read",
    "undercroft_store.memory.kg.facts:with_changes": "a pure copy of a fact the caller holds",
    "undercroft_store.memory.kg.graph:KnowledgeGraph.add": "a write: returns the fact it wrote",
    "undercroft_store.memory.kg.graph:KnowledgeGraph.add_many": "a write: returns the facts it wrote",
    "undercroft_store.memory.kg.graph:KnowledgeGraph.invalidate": "a write: returns the fact it closed",
    "undercroft_store.memory.kg.graph:KnowledgeGraph.supersede": "a write: returns the facts it closed and wrote",
    "undercroft_store.search.lexicon:BagSource.hydrate_many": "a protocol: the store's hydrate_many is audited",
    "undercroft_store.search.lexicon:Lexicon.entries": "search internals: reads through VaultStore.hydrate_many",
    "undercroft_store.facade:Memory.search": "the facade: delegates to Searcher.search, which is audited",
}


def _public_content_readers() -> set[str]:
    found: set[str] = set()
    for info in pkgutil.walk_packages(undercroft_store.__path__, "undercroft_store."):
        if "._" in info.name:
            continue
        module = importlib.import_module(info.name)
        for name, obj in vars(module).items():
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            members: list[tuple[str, Any]] = []
            if inspect.isfunction(obj):
                members = [(name, obj)]
            elif inspect.isclass(obj):
                members = [(f"{name}.{m}", f) for m, f in vars(obj).items() if not m.startswith("_")]
            for qualname, function in members:
                if inspect.isfunction(function) and CONTENT.search(
                    str(inspect.signature(inspect.unwrap(function)).return_annotation)
                ):
                    found.add(f"{module.__name__}:{qualname}")
    return found


def test_the_inventory_runs_in_both_directions() -> None:
    found = _public_content_readers()
    assert not set(AUDITED) & set(EXCLUDED)
    unlisted = found - set(AUDITED) - set(EXCLUDED)
    assert not unlisted, f"public content readers with no inventory entry: {sorted(unlisted)}"
    vanished = (set(AUDITED) | set(EXCLUDED)) - found
    assert not vanished, f"inventory entries naming no public content reader: {sorted(vanished)}"
    # Every audited entry carries the decorator with its op, and the decorator registered nothing else.
    assert {name: op for name, (op, _) in AUDITED.items()} == READERS


def _labels(home: Path) -> list[str]:
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as connection:
        return [str(r[0]) for r in connection.execute("SELECT record_id FROM audit ORDER BY seq")]


@pytest.fixture
def furnished(palace: Palace, embedder: HashEmbedder) -> dict[str, str]:
    """A vault with a drawer in each door's reach (written with auditing off)."""
    with palace.open_vault("default", embedder) as store:
        note = store.remember("Alice meets Bob at the Harbour Office.", wing="notes", room="inbox", added_by="t")
        store.remember("Bob and Alice plan the Harbour Office move.", wing="notes", room="inbox", added_by="t")
        store.remember("Carol files the lease.", wing="legal", room="lease", added_by="t")
        write_diary(store, "scout", "Met Alice today.")
        tunnel = create_tunnel(store, "notes", "legal", "lease talk")
        graph = KnowledgeGraph(store)
        fact = graph.add("Alice", "knows", "Bob")
        employer = graph.add("Alice", "works at", "Harbour Office")
        declare_authority(store, employer.id, review_state="approved", canonical_key="alice-employer")
    return {"note": note[0].id, "tunnel": tunnel.id, "fact": fact.id}


@pytest.fixture
def chain(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("UNDERCROFT_READ_AUDIT", "chain")
    yield


@pytest.mark.parametrize("name", sorted(AUDITED))
def test_each_door_appends_exactly_one_record_under_chain(
    name: str, furnished: dict[str, str], palace: Palace, home: Path, chain: None
) -> None:
    op, call = AUDITED[name]
    with palace.open_vault("default", HashEmbedder()) as store:
        before = _labels(home)
        call(store, furnished)
        after = _labels(home)
        assert after[: len(before)] == before
        assert after[len(before) :] == [f"read/{op}"]
        assert store.verify().ok


@pytest.mark.parametrize("name", sorted(AUDITED))
def test_each_door_appends_nothing_when_off(
    name: str, furnished: dict[str, str], palace: Palace, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNDERCROFT_READ_AUDIT", "off")
    with palace.open_vault("default", HashEmbedder()) as store:
        before = _labels(home)
        AUDITED[name][1](store, furnished)
        assert _labels(home) == before


def test_engine_reads_stay_silent(furnished: dict[str, str], palace: Palace, home: Path, chain: None) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        before = _labels(home)
        Searcher(store, HashEmbedder()).warm()  # index maintenance
        check_duplicate(store, "Carol files the lease.", threshold=0.5)  # the duplicate oracle: ids, not words
        dedup(store)  # a report of ids
        supersessions(store)  # verification of the superseded words
        list_tunnels(store)  # names, no drawer content
        with silent(store, InternalRead.POLICY_FENCE):
            store.get(furnished["note"])
            store.list_drawers()
        assert _labels(home) == before
        # Writes that read to decide stay silent; only their own write records land.
        supersede_drawer(store, furnished["note"], "Alice meets Bob at the new Harbour Office.", added_by="t")
        save_with_dedup(store, "Carol files the lease.", wing="legal", room="lease", added_by="t", threshold=0.5)
        assert not [label for label in _labels(home)[len(before) :] if label.startswith("read/")]


def test_nested_doors_record_once_and_outside_reads_record_again(
    furnished: dict[str, str], palace: Palace, home: Path, chain: None
) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        before = len(_labels(home))
        wake_up(store)  # reads list_drawers inside
        store.get(furnished["note"])
        store.get(furnished["note"])
        assert _labels(home)[before:] == ["read/recent", "read/get", "read/get"]


def test_the_record_carries_no_text_and_a_failed_read_records_nothing(
    furnished: dict[str, str], palace: Palace, home: Path, chain: None
) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        before = len(_labels(home))
        with pytest.raises(undercroft_store.DrawerNotFound):
            store.get("drawer_" + "f" * 32)
        Searcher(store, HashEmbedder()).search(SearchRequest("Harbour Office secret words"))
        assert _labels(home)[before:] == ["read/search"]
        assert store.verify().ok
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as connection:
        blob = b"".join(bytes(r[0]) + str(r[1]).encode() for r in connection.execute("SELECT tag, at FROM audit"))
    assert b"secret words" not in blob


def test_read_only_handle_notes_it_at_open_and_serves(furnished: dict[str, str], home: Path, chain: None) -> None:
    with Palace(home, read_only=True) as frozen:
        with warnings.catch_warnings():
            warnings.simplefilter("error")  # the notice is an unhealed line, never a raw Python warning
            store = frozen.open_vault("default", HashEmbedder(), read_only=True)
        with store:
            before = _labels(home)
            assert store.get(furnished["note"]).wing == "notes"
            assert _labels(home) == before
            assert any("served unaudited" in line for line in store.unhealed)


def test_garbage_declaration_refuses_to_open(
    furnished: dict[str, str], palace: Palace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("UNDERCROFT_READ_AUDIT", "sometimes")
    with pytest.raises(Refused, match="UNDERCROFT_READ_AUDIT='sometimes' refuses to start: not one of the legal"):
        palace.open_vault("default", HashEmbedder())


def test_silent_requires_a_stated_reason(palace: Palace, embedder: HashEmbedder) -> None:
    with palace.open_vault("default", embedder) as store, pytest.raises(TypeError, match="InternalRead reason"):
        with silent(store, "because"):  # type: ignore[arg-type]
            pass
