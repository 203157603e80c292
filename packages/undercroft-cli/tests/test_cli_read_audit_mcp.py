"""Read auditing over MCP: one ``read/<op>`` record per content-returning tool call, none for anything else.

Under ``UNDERCROFT_READ_AUDIT=chain`` every tool is called once over a furnished vault and the ``read/``
records it appended are counted in the raw ``vault.db``. The quarantine fence's id lookup, a save's
``supersedes`` existence check, an update's current-row read, delete-by-source's match and the graph tools'
open-fact lookup are the surface's own reads: they must add nothing. A tool that answers from several doors
(hallways across wings, several tunnels followed) still records once. Every registered tool is in the table,
so a new tool cannot ship unclassified.
"""

from __future__ import annotations

import os
import shutil
import sqlite3
import warnings
from collections.abc import Callable, Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from undercroft_cli.mcp import McpDispatcher, ToolReply, ToolSession
from undercroft_cli.mcp.tools import registry
from undercroft_core import HashEmbedder
from undercroft_store import Palace, VaultStore
from undercroft_store.governance.forgetting import forget
from undercroft_store.memory.kg.authority import declare_authority
from undercroft_store.memory.kg.graph import KnowledgeGraph
from undercroft_store.memory.tunnels import create_tunnel

FIXED = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
Furnished = dict[str, str]
Arguments = Callable[[Furnished], dict[str, object]]


class _NoMirror:
    """A Chroma-shaped server that holds no collection: index status answers "no mirror" (counts only)."""

    def handle(self, method: str, path: str, body: object) -> tuple[int, object]:
        return 404, {"error": "NotFoundError", "message": "Collection does not exist"}


@pytest.fixture(scope="module")
def no_mirror() -> Iterator[str]:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[3] / "tests"))
    from remote_servers import serving_json

    with serving_json(_NoMirror()) as url:
        yield url


@pytest.fixture(autouse=True)
def chain(monkeypatch: pytest.MonkeyPatch, no_mirror: str) -> None:
    for name in [n for n in os.environ if n.startswith("UNDERCROFT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("UNDERCROFT_READ_AUDIT", "chain")
    monkeypatch.setenv("UNDERCROFT_CHROMA_URL", no_mirror)


def _reads(palace: Palace) -> list[str]:
    with sqlite3.connect(palace.home / "vaults" / "default" / "vault.db") as db:
        return [str(r[0]) for r in db.execute("SELECT record_id FROM audit WHERE record_id LIKE 'read/%' ORDER BY seq")]


def _saved(reply: ToolReply) -> str:
    assert not reply.is_error and reply.text.startswith("created: drawer_"), reply.text
    return reply.text.split()[1]


def _furnish(store: VaultStore, plant_quarantined: Callable[..., str]) -> Furnished:
    mcp = McpDispatcher(ToolSession(store, HashEmbedder(), clock=lambda: FIXED))

    def save(content: str, wing: str, room: str, **extra: str) -> str:
        return _saved(mcp.call("undercroft_add_drawer", {"content": content, "wing": wing, "room": room, **extra}))

    ids = {
        "alice": save("Alice met Bob at Acme.", "work", "a"),
        "shipped": save("Alice and Bob shipped it.", "work", "b"),
        "carol": save("Carol visited Paris.", "life", "trips"),
        "car": save("Parked on level 3.", "life", "car", source_file="notes/car.md"),
        "invoices": save("Invoices go out on the 1st.", "billing", "ops"),
        "victim": save("Delete me on request.", "scratch", "tmp"),
    }
    _saved(mcp.call("undercroft_diary_write", {"agent_name": "coder", "entry": "Fixed the flaky test."}))
    graph = KnowledgeGraph(store)
    graph.add("alice", "works_at", "acme", valid_from="2024-01-01", source_drawer=ids["alice"])
    vat = graph.add("vat", "rate", "20%")
    declare_authority(store, vat.id, authority_class="golden", review_state="approved", canonical_key="vat-rate")
    ids["tunnel"] = create_tunnel(store, "work", "billing", "money").id
    create_tunnel(store, "work", "life", "people")
    ids["receipt"] = forget(store, [ids.pop("victim")], reason="subject request").to_json()
    ids["held"] = plant_quarantined(store)
    return ids


@pytest.fixture(scope="module")
def template(tmp_path_factory: pytest.TempPathFactory, plant_quarantined: Callable[..., str]) -> tuple[Path, Furnished]:
    """One furnished palace per module (built under chain); each test works on its own copy."""
    root = tmp_path_factory.mktemp("template") / "palace"
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("UNDERCROFT_READ_AUDIT", "chain")
        with Palace.from_env({"UNDERCROFT_HOME": str(root)}) as palace:
            palace.init()
            with palace.open_vault("default", HashEmbedder()) as store:
                ids = _furnish(store, plant_quarantined)
            assert _reads(palace) == []  # furnishing wrote; it read nothing through a door
    return root, ids


@pytest.fixture
def palace(template: tuple[Path, Furnished], tmp_path: Path) -> Iterator[Palace]:
    shutil.copytree(template[0], tmp_path / "palace")
    with Palace.from_env({"UNDERCROFT_HOME": str(tmp_path / "palace")}) as opened:
        yield opened


@pytest.fixture
def furnished(template: tuple[Path, Furnished]) -> Furnished:
    return dict(template[1])


@pytest.fixture
def store(palace: Palace) -> Iterator[VaultStore]:
    with palace.open_vault("default", HashEmbedder()) as opened:
        yield opened


@pytest.fixture
def mcp(store: VaultStore) -> McpDispatcher:
    return McpDispatcher(ToolSession(store, HashEmbedder(), clock=lambda: FIXED))


NONE: list[str] = []

# (case, tool, arguments, the read records one call must append)
CASES: list[tuple[str, str, Arguments, list[str]]] = [
    # Writes and their own lookups: nothing.
    ("save", "undercroft_save", lambda f: {"content": "A new note."}, NONE),
    ("save supersedes", "undercroft_save", lambda f: {"content": "Level 4 now.", "supersedes": f["car"]}, NONE),
    ("add supersedes", "undercroft_add_drawer",
     lambda f: {"wing": "work", "room": "a", "content": "Alice left.", "supersedes": f["alice"]}, NONE),
    ("update", "undercroft_update_drawer", lambda f: {"drawer_id": f["car"], "content": "Parked on level 4."}, NONE),
    ("update unchanged", "undercroft_update_drawer", lambda f: {"drawer_id": f["car"]}, NONE),
    ("delete", "undercroft_delete_drawer", lambda f: {"drawer_id": f["carol"]}, NONE),
    ("delete by source dry", "undercroft_delete_by_source",
     lambda f: {"source_file": "notes/car.md", "dry_run": True}, NONE),
    ("delete by source", "undercroft_delete_by_source", lambda f: {"source_file": "notes/car.md"}, NONE),
    ("dedup dry", "undercroft_dedup", lambda f: {}, NONE),
    ("dedup apply", "undercroft_dedup", lambda f: {"dry_run": False}, NONE),
    ("diary write", "undercroft_diary_write", lambda f: {"agent_name": "coder", "entry": "Paired with QA."}, NONE),
    ("kg add cited", "undercroft_kg_add",
     lambda f: {"subject": "bob", "predicate": "works_at", "object": "acme", "source_drawer_id": f["alice"]}, NONE),
    ("kg invalidate", "undercroft_kg_invalidate", lambda f: {"subject": "alice", "predicate": "works_at"}, NONE),
    ("kg supersede", "undercroft_kg_supersede",
     lambda f: {"subject": "alice", "predicate": "works_at", "new_object": "globex", "at": "2024-06-01"}, NONE),
    ("tunnel create", "undercroft_create_tunnel", lambda f: {"source_wing": "life", "target_wing": "billing"}, NONE),
    ("tunnel delete", "undercroft_delete_tunnel", lambda f: {"tunnel_id": f["tunnel"]}, NONE),
    # Content-returning reads: exactly one record each.
    ("get", "undercroft_get_drawer", lambda f: {"drawer_id": f["car"]}, ["read/get"]),
    ("list", "undercroft_list_drawers", lambda f: {"wing": "work"}, ["read/list"]),
    ("search", "undercroft_search", lambda f: {"query": "where did I park"}, ["read/search"]),
    ("wake up", "undercroft_wake_up", lambda f: {}, ["read/recent"]),
    ("duplicate found", "undercroft_check_duplicate", lambda f: {"content": "Carol visited Paris."}, ["read/get"]),
    ("closets", "undercroft_get_closet_index", lambda f: {}, ["read/closet"]),
    ("hallways every wing", "undercroft_list_hallways", lambda f: {}, ["read/hallways"]),
    ("hallways one wing", "undercroft_list_hallways", lambda f: {"wing": "work"}, ["read/hallways"]),
    ("diary read", "undercroft_diary_read", lambda f: {"agent_name": "coder"}, ["read/diary"]),
    ("kg query", "undercroft_kg_query", lambda f: {"entity": "alice"}, ["read/kg-query"]),
    ("kg timeline", "undercroft_kg_timeline", lambda f: {"entity": "alice"}, ["read/kg-timeline"]),
    ("kg rel", "undercroft_kg_rel", lambda f: {"predicate": "works_at"}, ["read/kg-query"]),
    ("canonical", "undercroft_lookup_canonical", lambda f: {"key": "vat-rate"}, ["read/kg-canonical"]),
    ("kg entities", "undercroft_kg_entities", lambda f: {}, ["read/kg-entities"]),
    ("follow two tunnels", "undercroft_follow_tunnels", lambda f: {"wing": "work"}, ["read/tunnel"]),
    # Metadata, verdicts and labels (never drawer words): nothing.
    ("no duplicate", "undercroft_check_duplicate", lambda f: {"content": "Nothing like it."}, NONE),
    ("status", "undercroft_status", lambda f: {}, NONE),
    ("wings", "undercroft_list_wings", lambda f: {}, NONE),
    ("rooms", "undercroft_list_rooms", lambda f: {"wing": "work"}, NONE),
    ("taxonomy", "undercroft_get_taxonomy", lambda f: {}, NONE),
    ("verify", "undercroft_verify", lambda f: {}, NONE),
    ("agents", "undercroft_list_agents", lambda f: {}, NONE),
    ("kg stats", "undercroft_kg_stats", lambda f: {}, NONE),
    ("kg receipts", "undercroft_kg_receipts", lambda f: {}, NONE),
    ("tunnels", "undercroft_list_tunnels", lambda f: {}, NONE),
    ("traverse", "undercroft_traverse", lambda f: {"start_wing": "work"}, NONE),
    ("history", "undercroft_history", lambda f: {}, NONE),
    ("supersessions", "undercroft_supersessions", lambda f: {}, NONE),  # ids and verdicts, never words
    ("history of a drawer", "undercroft_history", lambda f: {"drawer_id": f["car"]}, NONE),
    ("erasure receipt", "undercroft_check_erasure_receipt", lambda f: {"attestation": f["receipt"]}, NONE),
    ("index status", "undercroft_index_status", lambda f: {"backend": "chroma"}, NONE),  # counts, never content
]  # fmt: skip


@pytest.mark.parametrize(("case", "tool", "arguments", "expected"), CASES, ids=[c[0] for c in CASES])
def test_each_tool_call_appends_exactly_its_read_records(
    case: str,
    tool: str,
    arguments: Arguments,
    expected: list[str],
    mcp: McpDispatcher,
    furnished: Furnished,
    palace: Palace,
) -> None:
    reply = mcp.call(tool, arguments(furnished))
    assert not reply.is_error, f"{case}: {reply.text}"
    assert _reads(palace) == expected, case


def test_every_registered_tool_is_classified() -> None:
    assert set(registry()) == {tool for _, tool, _, _ in CASES}


def test_a_read_through_the_fence_records_once_and_again_on_the_next_call(
    mcp: McpDispatcher, furnished: Furnished, palace: Palace
) -> None:
    for _ in range(3):
        assert not mcp.call("undercroft_get_drawer", {"drawer_id": furnished["alice"]}).is_error
    assert _reads(palace) == ["read/get"] * 3


@pytest.mark.parametrize(
    ("tool", "arguments"),
    [
        ("undercroft_get_drawer", lambda f: {"drawer_id": f["held"]}),  # the fence refuses
        ("undercroft_update_drawer", lambda f: {"drawer_id": f["held"], "content": "x"}),
        ("undercroft_get_drawer", lambda f: {"drawer_id": "drawer_" + "a" * 32}),  # a read that raises
        ("undercroft_save", lambda f: {"content": "x", "supersedes": "drawer_" + "a" * 32}),
        ("undercroft_kg_invalidate", lambda f: {"subject": "vat", "predicate": "rate"}),  # authority fence
        ("undercroft_kg_invalidate", lambda f: {"subject": "nobody", "predicate": "rate"}),
    ],
)
def test_a_refused_call_records_nothing(
    tool: str, arguments: Arguments, mcp: McpDispatcher, furnished: Furnished, palace: Palace
) -> None:
    reply = mcp.call(tool, arguments(furnished))
    assert reply.is_error, reply.text
    assert _reads(palace) == []


def test_nothing_is_recorded_with_auditing_off(
    furnished: Furnished, palace: Palace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("UNDERCROFT_READ_AUDIT")
    with palace.open_vault("default", HashEmbedder()) as store:
        quiet = McpDispatcher(ToolSession(store, HashEmbedder(), clock=lambda: FIXED))
        answered = [
            tool
            for _, tool, arguments, expected in CASES
            if expected and not quiet.call(tool, arguments(furnished)).is_error
        ]
    assert len(answered) == sum(1 for case in CASES if case[3])  # every read was served
    assert _reads(palace) == []


def test_a_read_only_server_serves_unaudited(furnished: Furnished, palace: Palace) -> None:
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # said once, on unhealed (serve-mcp prints it), never a raw warning
        with palace.open_vault("default", HashEmbedder(), read_only=True) as store:
            reader = McpDispatcher(ToolSession(store, HashEmbedder(), read_only=True))
            got = reader.call("undercroft_get_drawer", {"drawer_id": furnished["car"]})
            hallways = reader.call("undercroft_list_hallways", {})
            unhealed = store.unhealed
    assert "Parked on level 3." in got.text and not hallways.is_error
    assert any("reads are served unaudited" in line for line in unhealed)
    assert _reads(palace) == []
