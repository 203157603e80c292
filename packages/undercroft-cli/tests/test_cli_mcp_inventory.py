"""The MCP inventory counted against the live server's tools/list, in both directions, and the boundary."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import anyio
import pytest
from mcp.client import Client
from undercroft_cli.mcp import OPERATOR_ONLY, PENDING, READ, TOOLS, WRITE, McpDispatcher, ToolSession, build_server
from undercroft_cli.mcp.inventory import TOOL_PREFIX, advertised_names, entry
from undercroft_cli.mcp.server import SERVER_INSTRUCTIONS
from undercroft_cli.mcp.tools import TEXT_OUTPUT, UNTRUSTED_NOTICE, ToolSpec, registry
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


def test_the_inventory_holds_40_tools_12_of_them_writes() -> None:
    names = [t.name for t in TOOLS]
    assert len(names) == 40 and len(set(names)) == 40
    assert all(name.startswith(TOOL_PREFIX) for name in names)
    assert len(WRITE) == 12 and len(READ) == 28 and not READ & WRITE
    assert "undercroft_save" in WRITE and "undercroft_search" in READ and "undercroft_dedup" in WRITE


def test_the_live_tools_list_matches_the_inventory_in_both_directions(store: VaultStore) -> None:
    live = set(_live_tools(McpDispatcher(ToolSession(store, HashEmbedder()))))
    missing_entry = live - {t.name for t in TOOLS}
    assert not missing_entry, f"advertised without an inventory entry: {sorted(missing_entry)}"
    not_served = advertised_names() - live
    assert not not_served, f"inventoried (not pending) but not advertised: {sorted(not_served)}"
    assert not live & set(PENDING), "a pending tool is advertised"
    assert live | set(PENDING) == {t.name for t in TOOLS}


def test_nothing_waits_any_more_the_whole_inventory_is_served() -> None:
    assert PENDING == {} and advertised_names() == {t.name for t in TOOLS} and len(advertised_names()) == 40
    assert entry("undercroft_index_status").read_only  # the last pending tool landed as a read


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


def test_a_tool_still_marked_pending_cannot_be_served(store: VaultStore, monkeypatch: pytest.MonkeyPatch) -> None:
    from undercroft_cli.mcp import server

    monkeypatch.setitem(server.PENDING, "undercroft_index_status", "a capability that has not landed")
    early = ToolSpec("undercroft_index_status", "a stub", {}, lambda session, args: "")
    with pytest.raises(RuntimeError, match="still marked pending"):
        McpDispatcher(ToolSession(store, HashEmbedder()), {early.name: early})


def test_the_untrusted_notice_is_said_once_in_the_instructions_not_in_every_description(store: VaultStore) -> None:
    async def initialised() -> tuple[str | None, list[object]]:
        async with Client(build_server(McpDispatcher(ToolSession(store, HashEmbedder())))) as client:
            return client.instructions, (await client.list_tools()).tools

    instructions, tools = anyio.run(initialised)
    assert instructions == SERVER_INSTRUCTIONS and "UNTRUSTED DATA" in instructions
    for tool in tools:
        assert "UNTRUSTED" not in (tool.description or ""), tool.name  # type: ignore[attr-defined]
    assert UNTRUSTED_NOTICE in SERVER_INSTRUCTIONS  # the one notice, said once


def test_every_tool_is_annotated_for_hosts(store: VaultStore) -> None:
    destructive_words = ("delete", "update", "invalidate", "supersede", "dedup")
    for name, tool in _live_tools(McpDispatcher(ToolSession(store, HashEmbedder()))).items():
        hints = tool.annotations  # type: ignore[attr-defined]
        assert hints is not None and hints.title and tool.title == hints.title, name  # type: ignore[attr-defined]
        assert hints.read_only_hint is (name in READ), name
        assert hints.destructive_hint is any(word in name for word in destructive_words), name
        assert hints.idempotent_hint is not None and hints.open_world_hint is False, name
        if name in READ:
            assert hints.idempotent_hint is True, name
    titles = [tool.title for tool in TOOLS]
    assert len(set(titles)) == len(titles), "two tools share a title"


def test_every_input_schema_states_its_constraints_and_every_tool_has_an_output_schema(store: VaultStore) -> None:
    for name, tool in _live_tools(McpDispatcher(ToolSession(store, HashEmbedder()))).items():
        schema = tool.input_schema  # type: ignore[attr-defined]
        assert schema["type"] == "object" and schema["additionalProperties"] is False, name
        for key, prop in schema["properties"].items():
            assert prop.get("description"), (name, key)
            if prop["type"] == "integer":
                assert {"minimum", "maximum"} <= set(prop), (name, key)
            if prop["type"] == "number":
                assert {"exclusiveMinimum", "maximum", "default"} <= set(prop), (name, key)
            if prop["type"] == "boolean":
                assert "default" in prop, (name, key)
            if "enum" in prop and "default" in prop:
                assert prop["default"] in prop["enum"], (name, key)
        output = tool.output_schema  # type: ignore[attr-defined]
        assert output["type"] == "object" and output["properties"], name
        assert set(output["required"]) <= set(output["properties"]), name
    text_only = [name for name, spec in registry().items() if spec.output == TEXT_OUTPUT]
    assert text_only == [], f"tools whose structured result is only their text: {text_only}"
    destructive = _live_tools(McpDispatcher(ToolSession(store, HashEmbedder())))["undercroft_delete_by_source"]
    assert destructive.input_schema["properties"]["dry_run"]["default"] is True  # type: ignore[attr-defined]


def _call_filling_required(mcp: McpDispatcher, name: str, **arguments: object) -> str:
    spec = mcp.tools[name]
    filled = {key: "x" for key in spec.required} | arguments
    reply = mcp.call(name, filled)
    assert reply.is_error, (name, arguments, reply.text)
    return reply.text


def test_the_advertised_bounds_and_choices_are_the_ones_the_call_enforces(store: VaultStore) -> None:
    """The parser reads its limits from the schema: one step past an advertised bound is refused, naming it."""
    mcp = McpDispatcher(ToolSession(store, HashEmbedder()))
    checked = 0
    for name, spec in mcp.tools.items():
        for key, prop in spec.properties.items():
            if prop["type"] == "integer":
                low, high = prop["minimum"], prop["maximum"]
                for past in (low - 1, high + 1):
                    text = _call_filling_required(mcp, name, **{key: past})
                    assert f"argument '{key}' must be between {low} and {high}, got {past}" in text, (name, text)
                checked += 1
            if "enum" in prop:
                text = _call_filling_required(mcp, name, **{key: "not-a-choice"})
                assert f"argument '{key}' must be one of {', '.join(prop['enum'])}" in text, (name, text)
                checked += 1
    assert checked >= 20  # the premise: the schemas do carry bounds and choices to check


def test_arguments_are_named_as_mempalace_names_them(store: VaultStore) -> None:
    live = _live_tools(McpDispatcher(ToolSession(store, HashEmbedder())))
    for name, expected in MEMPALACE_ARGUMENTS.items():
        properties = set(live[name].input_schema["properties"])  # type: ignore[attr-defined]
        assert expected <= properties, f"{name}: missing {sorted(expected - properties)}"
