"""End to end: what an MCP host and a model read, through the official SDK client over real stdio.

The real ``undercroft serve-mcp`` program is spawned as a host spawns it. Every advertised tool must carry
annotations (title, readOnlyHint, destructiveHint, idempotentHint), an object input schema with its
constraints, and an output schema; then every tool is called once against a real vault and each successful
result's ``structuredContent`` is validated against that tool's output schema with ``jsonschema`` (the SDK's
client validates it too: a mismatch raises inside ``call_tool``). The untrusted-data notice is in the
server's instructions, once.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
import pytest
from live_server import palace_env
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from undercroft_cli.mcp.inventory import READ, advertised_names

PROGRAM = Path(sys.executable).parent / "undercroft"
WORDS = "We chose PostgreSQL for the billing service because of row-level locking."


def _cli(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROGRAM), *args], env=palace_env(home), capture_output=True, text=True, timeout=120, check=False
    )


def _serve(home: Path, script: Any) -> Any:
    params = StdioServerParameters(command=str(PROGRAM), args=["serve-mcp"], env=palace_env(home))

    async def main() -> Any:
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
                initialised = await session.initialize()
                return await script(session, initialised)

    return anyio.run(main)


def _text(result: Any) -> str:
    return "".join(part.text for part in result.content)


@pytest.fixture
def home(tmp_path: Path) -> Path:
    palace = tmp_path / "palace"
    assert _cli(palace, "init").returncode == 0
    return palace


def _receipt(home: Path) -> str:
    """A real erasure receipt: a drawer saved over MCP, then forgotten by the operator's CLI."""

    async def save(session: ClientSession, _init: Any) -> str:
        saved = await session.call_tool("undercroft_save", {"content": "Forget this on request."})
        return str(saved.structured_content["id"])

    drawer_id = _serve(home, save)
    out = home.parent / "receipt.json"
    forgotten = _cli(home, "forget", drawer_id, "--out", str(out))
    assert forgotten.returncode == 0, forgotten.stderr
    return out.read_text()


def test_every_tool_is_annotated_and_every_result_validates_against_its_output_schema(home: Path) -> None:
    receipt = _receipt(home)

    async def script(session: ClientSession, initialised: Any) -> dict[str, Any]:
        listed = {tool.name: tool for tool in (await session.list_tools()).tools}
        results: dict[str, Any] = {}

        async def call(name: str, arguments: dict[str, Any]) -> Any:
            results.setdefault(name, [])
            result = await session.call_tool(name, arguments)  # the SDK client validates structuredContent too
            results[name].append((arguments, result))
            return result

        saved = await call("undercroft_save", {"content": WORDS, "wing": "work", "room": "billing", "kind": "decision"})
        drawer_id = saved.structured_content["id"]
        note = {"wing": "work", "room": "notes", "source_file": "notes/a.md", "content": "Alice and Bob met at Acme."}
        added = await call("undercroft_add_drawer", note)
        second = added.structured_content["id"]
        await call("undercroft_save", {"content": "Alice drives to Acme on Mondays.", "wing": "life", "room": "car"})
        await call("undercroft_update_drawer", {"drawer_id": second, "content": "Alice and Bob met at Acme again."})
        await call("undercroft_search", {"query": "which database for billing", "limit": 5})
        await call("undercroft_search", {"query": "nothing like this at all", "wing": "life", "when": "2001"})
        await call("undercroft_get_drawer", {"drawer_id": drawer_id})
        await call("undercroft_list_drawers", {"wing": "work"})
        await call("undercroft_wake_up", {})
        await call("undercroft_check_duplicate", {"content": WORDS})
        await call("undercroft_check_duplicate", {"content": "An unrelated sentence about gardening."})
        await call("undercroft_dedup", {})
        for name in ("undercroft_status", "undercroft_list_wings", "undercroft_get_taxonomy",
                     "undercroft_get_closet_index", "undercroft_list_agents", "undercroft_list_hallways",
                     "undercroft_verify", "undercroft_history", "undercroft_list_tunnels", "undercroft_kg_stats",
                     "undercroft_kg_timeline", "undercroft_kg_receipts", "undercroft_kg_entities",
                     "undercroft_supersessions"):  # fmt: skip
            await call(name, {})
        await call("undercroft_list_rooms", {"wing": "work"})
        await call("undercroft_list_rooms", {})
        await call("undercroft_diary_write", {"agent_name": "claude", "entry": "Worked on the billing move."})
        await call("undercroft_diary_read", {"agent_name": "claude"})
        tunnel = await call(
            "undercroft_create_tunnel", {"source_wing": "work", "target_wing": "life", "label": "alice"}
        )
        await call("undercroft_follow_tunnels", {"wing": "work"})
        await call("undercroft_traverse", {"start_wing": "work"})
        await call("undercroft_delete_tunnel", {"tunnel_id": _text(tunnel).split()[1]})
        await call("undercroft_kg_add", {"subject": "alice", "predicate": "works_at", "object": "acme"})
        await call("undercroft_kg_query", {"entity": "alice"})
        await call("undercroft_kg_rel", {"predicate": "works_at"})
        await call("undercroft_kg_supersede", {"subject": "alice", "predicate": "works_at", "new_object": "initech"})
        await call("undercroft_kg_invalidate", {"subject": "alice", "predicate": "works_at"})
        await call("undercroft_kg_timeline", {"entity": "alice"})
        await call("undercroft_lookup_canonical", {"key": "billing.database"})
        await call("undercroft_check_erasure_receipt", {"attestation": receipt})
        await call("undercroft_delete_by_source", {"source_file": "notes/a.md"})
        await call("undercroft_delete_drawer", {"drawer_id": drawer_id})
        await call("undercroft_delete_by_source", {"source_file": "notes/a.md", "dry_run": False})
        # No mirror is declared for this server: the refusal names the variable (the success path runs against a
        # real Chroma in the remote-index suite).
        await call("undercroft_index_status", {"backend": "chroma"})
        return {"tools": listed, "results": results, "instructions": initialised.instructions}

    out = _serve(home, script)
    tools, results = out["tools"], out["results"]
    assert set(tools) == advertised_names()
    assert "UNTRUSTED DATA" in out["instructions"]

    for name, tool in tools.items():
        hints = tool.annotations
        assert hints is not None and hints.title and tool.title, name
        assert hints.read_only_hint is (name in READ), name
        assert isinstance(hints.destructive_hint, bool) and isinstance(hints.idempotent_hint, bool), name
        assert tool.input_schema["type"] == "object", name
        assert tool.output_schema is not None and tool.output_schema["type"] == "object", name
        assert "UNTRUSTED" not in (tool.description or ""), name
    for name in ("undercroft_delete_drawer", "undercroft_delete_by_source", "undercroft_update_drawer",
                 "undercroft_dedup", "undercroft_kg_invalidate", "undercroft_delete_tunnel"):  # fmt: skip
        assert tools[name].annotations.destructive_hint is True, name
    assert tools["undercroft_search"].input_schema["properties"]["limit"]["maximum"] == 100

    assert set(results) == set(tools), f"tools never called: {sorted(set(tools) - set(results))}"
    [(_, undeclared)] = results.pop("undercroft_index_status")
    assert undeclared.is_error is True and "UNDERCROFT_CHROMA_URL" in _text(undeclared)
    for name, calls in results.items():
        for arguments, result in calls:
            assert result.is_error is False, (name, arguments, _text(result))
            assert isinstance(result.structured_content, dict), name
            jsonschema.validate(result.structured_content, tools[name].output_schema)

    def only(name: str, index: int = 0) -> dict[str, Any]:
        return dict(results[name][index][1].structured_content)

    hits = only("undercroft_search")["hits"]
    assert hits and hits[0]["content"] == WORDS and hits[0]["wing"] == "work"
    assert only("undercroft_search", 1)["hits"] == []
    assert only("undercroft_save")["outcome"] == "created"
    dry, deleted = only("undercroft_delete_by_source"), only("undercroft_delete_by_source", 1)
    assert dry["dry_run"] is True and dry["deleted"] == 0 and len(dry["matched"]) == 1  # dry run by default
    assert deleted["dry_run"] is False and deleted["deleted"] == 1
    facts = only("undercroft_kg_query")["facts"]
    assert facts and all(value is not None for fact in facts for value in fact.values())  # no null fields
    assert only("undercroft_lookup_canonical") == {"fact": None}
    assert json.loads(_text(results["undercroft_status"][0][1]))["drawers"] == only("undercroft_status")["drawers"]


def test_the_printed_configuration_starts_a_working_server_with_nothing_else(home: Path, tmp_path: Path) -> None:
    """What `undercroft mcp` prints is all a host needs: no PATH, another working directory, still served."""
    printed = _cli(home, "mcp", "--json", "--read-only")
    assert printed.returncode == 0, printed.stderr
    launch = json.loads(printed.stdout)
    assert Path(launch["command"]).is_absolute() and launch["env"] == {"UNDERCROFT_HOME": str(home)}
    elsewhere = tmp_path / "some-project"
    elsewhere.mkdir()
    params = StdioServerParameters(command=launch["command"], args=launch["args"], env=launch["env"], cwd=elsewhere)

    async def main() -> tuple[Any, Any]:
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                status = await session.call_tool("undercroft_status", {})
                refused = await session.call_tool("undercroft_save", {"content": "not on a read-only server"})
                return status, refused

    status, refused = anyio.run(main)
    assert status.is_error is False and status.structured_content["read_only"] is True
    assert refused.is_error is True and "read-only" in _text(refused)
