"""The MCP inventory counted against the live server's tools/list, in both directions, and the boundary."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from undercroft_cli.mcp import OPERATOR_ONLY, PENDING, READ, TOOLS, WRITE, McpDispatcher, ToolSession, build_server
from undercroft_cli.mcp.inventory import TOOL_PREFIX, advertised_names
from undercroft_cli.mcp.tools import UNTRUSTED_NOTICE, ToolSpec, registry
from undercroft_core import HashEmbedder
from undercroft_store import Palace, VaultStore

# MemPalace 3.11's argument names (mempalace/mcp_server/schemas.py) for the tools both surfaces have.
MEMPALACE_ARGUMENTS: dict[str, set[str]] = {
    "undercroft_search": {"query", "limit", "wing", "room"},
    "undercroft_add_drawer": {"wing", "room", "content", "source_file"},
    "undercroft_get_drawer": {"drawer_id"},
    "undercroft_delete_drawer": {"drawer_id"},
    "undercroft_update_drawer": {"drawer_id", "content", "wing", "room"},
    "undercroft_list_drawers": {"wing", "room", "limit", "offset"},
    "undercroft_delete_by_source": {"source_file", "dry_run"},
    "undercroft_list_rooms": {"wing"},
    "undercroft_status": set(),
    "undercroft_list_wings": set(),
    "undercroft_get_taxonomy": set(),
    "undercroft_check_duplicate": {"content", "threshold"},
    "undercroft_diary_write": {"agent_name", "entry", "topic", "content"},
    "undercroft_diary_read": {"agent_name", "last_n"},
    "undercroft_list_hallways": {"wing", "limit", "offset"},
}


@pytest.fixture
def store(tmp_path: Path) -> Iterator[VaultStore]:
    with Palace.from_env({"UNDERCROFT_HOME": str(tmp_path / "palace")}) as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as opened:
            yield opened


def _live_tools(dispatcher: McpDispatcher) -> dict[str, object]:
    async def listing() -> dict[str, object]:
        async with Client(build_server(dispatcher)) as client:
            result = await client.list_tools()
            return {tool.name: tool for tool in result.tools}

    return anyio.run(listing)


def test_the_inventory_holds_38_tools_12_of_them_writes() -> None:
    names = [t.name for t in TOOLS]
    assert len(names) == 38 and len(set(names)) == 38
    assert all(name.startswith(TOOL_PREFIX) for name in names)
    assert len(WRITE) == 12 and len(READ) == 26 and not READ & WRITE
    assert "undercroft_save" in WRITE and "undercroft_search" in READ and "undercroft_dedup" in WRITE


def test_the_live_tools_list_matches_the_inventory_in_both_directions(store: VaultStore) -> None:
    live = set(_live_tools(McpDispatcher(ToolSession(store, HashEmbedder()))))
    missing_entry = live - {t.name for t in TOOLS}
    assert not missing_entry, f"advertised without an inventory entry: {sorted(missing_entry)}"
    not_served = advertised_names() - live
    assert not not_served, f"inventoried (not pending) but not advertised: {sorted(not_served)}"
    assert not live & set(PENDING), "a pending tool is advertised"
    assert live | set(PENDING) == {t.name for t in TOOLS}


def test_only_index_status_waits_and_it_says_for_what() -> None:
    assert PENDING == {"undercroft_index_status": "remote vector mirrors wired into the store"}


def test_every_pending_entry_names_what_it_waits_for() -> None:
    for name, reason in PENDING.items():
        assert reason.strip(), name
        assert name not in registry(), f"{name} is implemented: drop its pending mark"


def test_operator_only_capabilities_are_absent_from_the_inventory_and_the_live_server(store: VaultStore) -> None:
    assert set(OPERATOR_ONLY) == {
        "admission", "trust", "retention", "forget", "rotate", "authority", "anchor", "export", "import", "refine",
    }  # fmt: skip
    live = _live_tools(McpDispatcher(ToolSession(store, HashEmbedder())))
    for capability in OPERATOR_ONLY:
        assert not [t.name for t in TOOLS if capability in t.name], capability
        assert not [name for name in live if capability in name], capability


def test_a_tool_without_an_inventory_line_fails_the_build(store: VaultStore) -> None:
    rogue = ToolSpec("undercroft_admission_allow", "rule on the queue", {}, lambda session, args: "")
    with pytest.raises(KeyError, match="undercroft_admission_allow"):
        McpDispatcher(ToolSession(store, HashEmbedder()), {rogue.name: rogue})


def test_a_tool_still_marked_pending_cannot_be_served(store: VaultStore) -> None:
    early = ToolSpec("undercroft_index_status", "a stub", {}, lambda session, args: "")
    with pytest.raises(RuntimeError, match="still marked pending"):
        McpDispatcher(ToolSession(store, HashEmbedder()), {early.name: early})


def test_descriptions_say_memory_content_is_untrusted_and_schemas_are_objects(store: VaultStore) -> None:
    live = _live_tools(McpDispatcher(ToolSession(store, HashEmbedder())))
    for name, tool in live.items():
        assert UNTRUSTED_NOTICE in (tool.description or ""), name  # type: ignore[attr-defined]
        assert tool.input_schema["type"] == "object", name  # type: ignore[attr-defined]


def test_arguments_are_named_as_mempalace_names_them(store: VaultStore) -> None:
    live = _live_tools(McpDispatcher(ToolSession(store, HashEmbedder())))
    for name, expected in MEMPALACE_ARGUMENTS.items():
        properties = set(live[name].input_schema["properties"])  # type: ignore[attr-defined]
        assert expected <= properties, f"{name}: missing {sorted(expected - properties)}"
