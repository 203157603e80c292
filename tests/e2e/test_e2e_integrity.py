"""End to end, issue 15's integrity findings against the real `undercroft` program (and serve-mcp through the
mcp SDK's stdio client): each vault is damaged on the raw file or rows with sqlite3, then driven as a user would.

A flipped index bit, a reset append counter, a removed audit tail and a deleted chain_meta row are each an
integrity verdict (exit 2) on the commands that meet them, never a short answer, an overwrite or a traceback;
the audit ceiling is reported on every stats surface; repair's vacuum sizes are measured consistently.
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
from live_server import palace_env
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from undercroft_core import Drawer, HashEmbedder
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.kernel._internal.meta_at_rest import stored_label

PROGRAM = Path(sys.executable).parent / "undercroft"
PER_WING = 40


def _run(home: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROGRAM), *args], env=palace_env(home, **extra), capture_output=True, text=True, timeout=120, check=False
    )


def _db(home: Path) -> Path:
    return home / "vaults" / "default" / "vault.db"


def _init(tmp_path: Path) -> Path:
    home = tmp_path / "palace"
    assert _run(home, "init").returncode == 0
    return home


def _fill_two_wings(home: Path) -> None:
    """PER_WING drawers in each of two wings (written through the store: 80 CLI runs would be slow)."""
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        ids = store.drawer_ids  # the vault's own id recipe (keyed on a new sealed vault)
    drawers = [
        Drawer(
            id=ids.append(wing, "misc", i),
            content=f"memory {i} filed under {wing}",
            wing=wing,
            room="misc",
            chunk_index=i,
            id_recipe="append",
            added_by="t",
            filed_at="2026-05-01T09:00:00.000000Z",
        )
        for i in range(2 * PER_WING)
        for wing in ("life" if i % 2 else "work",)
    ]
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        store.write([DrawerWrite(d) for d in drawers], screening=Screen())


def _flip_scope_index_bit(home: Path) -> None:
    """The last byte of one 'work' key in the drawers_scope index (the wing's blind value: the vault is sealed)
    set to 'z', which sorts after every 'work' key, so a seek for the wing stops there; the page stays well
    formed, so SQLite's quick_check passes."""
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        key = str(stored_label(store._context, "wing", "work")).encode()
    with sqlite3.connect(_db(home)) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        root = raw.execute("SELECT rootpage FROM sqlite_master WHERE name = 'drawers_scope'").fetchone()[0]
        size = raw.execute("PRAGMA page_size").fetchone()[0]
    data = bytearray(_db(home).read_bytes())
    at = data.index(key, (root - 1) * size, root * size) + len(key) - 1
    data[at] = ord("z")
    _db(home).write_bytes(bytes(data))


def test_a_flipped_scope_index_bit_is_found_refused_and_repaired(tmp_path: Path) -> None:
    home = _init(tmp_path)
    _fill_two_wings(home)
    _flip_scope_index_bit(home)
    verified = _run(home, "verify")
    assert verified.returncode == 2 and "INDEX: drawers_scope answers wing 'work'" in verified.stdout
    deep = _run(home, "verify", "--deep")
    assert deep.returncode == 2 and "sqlite check:     FAILED (integrity_check)" in deep.stdout
    for command in (("drawer", "list", "--wing", "work"), ("search", "memory", "--wing", "work")):
        refused = _run(home, *command)
        assert refused.returncode == 2, (command, refused.stdout, refused.stderr)
        assert "drawers_scope index disagrees" in refused.stderr and "Traceback" not in refused.stderr
    listed_by_agent = _mcp_call(home, "undercroft_list_drawers", {"wing": "work"})
    assert listed_by_agent.startswith("integrity: ") and "drawers_scope index disagrees" in listed_by_agent
    backup = _run(home, "backup", "create")
    assert backup.returncode == 2 and not list((home / "backups").glob("*/*/vault.db"))
    repaired = _run(home, "repair")
    assert repaired.returncode == 0 and "rebuilt (REINDEX" in repaired.stdout, repaired.stdout
    listed = _run(home, "drawer", "list", "--wing", "work", "--json")
    assert listed.returncode == 0 and len(json.loads(listed.stdout)) == PER_WING
    assert _run(home, "verify", "--deep").returncode == 0
    assert _run(home, "backup", "create").returncode == 0


def test_a_reset_append_counter_never_overwrites_a_memory(tmp_path: Path) -> None:
    home = _init(tmp_path)
    first = _run(home, "remember", "The first memory: the boat is moored at pier 4.")
    assert first.returncode == 0
    first_id = first.stdout.split()[1]
    assert _run(home, "remember", "The second memory.").returncode == 0
    with sqlite3.connect(_db(home)) as raw:
        raw.execute("UPDATE meta SET value = CAST('0' AS BLOB) WHERE key = 'append_counter'")
    intruder = _run(home, "remember", "An intruding memory.")
    assert intruder.returncode == 2 and "updated:" not in intruder.stdout
    assert "append_counter" in intruder.stderr and "Nothing was written" in intruder.stderr
    got = _run(home, "drawer", "get", first_id)
    assert got.returncode == 0 and "the boat is moored at pier 4." in got.stdout
    verified = _run(home, "verify")
    assert verified.returncode == 2 and "append counter:   BEHIND" in verified.stdout
    assert _run(home, "repair").returncode == 0
    again = _run(home, "remember", "A new memory after repair.")
    assert again.returncode == 0 and again.stdout.startswith("created: ")
    assert _run(home, "verify").returncode == 0


def test_writes_on_a_chain_missing_its_last_row_are_refused(tmp_path: Path) -> None:
    home = _init(tmp_path)
    assert _run(home, "remember", "one").returncode == 0
    assert _run(home, "remember", "two").returncode == 0
    with sqlite3.connect(_db(home)) as raw:
        raw.execute("DELETE FROM audit WHERE seq = (SELECT max(seq) FROM audit)")
        rows = raw.execute("SELECT count(*) FROM drawers").fetchone()[0]
    refused = _run(home, "remember", "three")
    assert refused.returncode == 2 and "audit rows were removed or inserted" in refused.stderr
    with sqlite3.connect(_db(home)) as raw:
        assert raw.execute("SELECT count(*) FROM drawers").fetchone()[0] == rows
    verified = _run(home, "verify")
    assert verified.returncode == 2 and "but the committed head is at height" in verified.stdout, verified.stdout
    assert "audit chain:      BROKEN" in verified.stdout and verified.stdout.rstrip().endswith("VERIFY FAILED")


def test_stats_with_its_chain_meta_row_deleted_is_a_verdict(tmp_path: Path) -> None:
    home = _init(tmp_path)
    assert _run(home, "remember", "one").returncode == 0
    with sqlite3.connect(_db(home)) as raw:
        raw.execute("DELETE FROM chain_meta")
    for args in (("stats",), ("stats", "--json")):
        stats = _run(home, *args)
        assert stats.returncode == 2 and "Traceback" not in stats.stderr
        assert "no committed chain head" in stats.stderr


def _mcp_call(home: Path, tool: str, arguments: dict[str, Any], **extra: str) -> str:
    """One tool call through the mcp SDK's stdio client against a real serve-mcp; the reply's text."""
    params = StdioServerParameters(command=str(PROGRAM), args=["serve-mcp"], env=palace_env(home, **extra))

    async def main() -> str:
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                result = await session.call_tool(tool, arguments)
                return "".join(part.text for part in result.content)

    return str(anyio.run(main))


def _mcp_status(home: Path, **extra: str) -> dict[str, Any]:
    text = _mcp_call(home, "undercroft_status", {}, **extra)
    parsed: dict[str, Any] = json.loads(text[text.index("{") :])
    return parsed


def test_the_audit_ceiling_is_reported_on_every_stats_surface(tmp_path: Path) -> None:
    home = _init(tmp_path)
    for n in range(3):
        assert _run(home, "remember", f"memory {n}").returncode == 0
    stats = json.loads(_run(home, "stats", "--json", UNDERCROFT_AUDIT_CEILING="2").stdout)
    assert (stats["chain_ceiling"], stats["chain_over_ceiling"]) == (2, True)
    assert isinstance(stats["chain_replays"], int)
    human = _run(home, "stats", UNDERCROFT_AUDIT_CEILING="2").stdout
    assert "audit ceiling:  3 / 2 (OVER; reported, never enforced)" in human and "chain replays:" in human
    off = json.loads(_run(home, "stats", "--json").stdout)
    assert (off["chain_ceiling"], off["chain_over_ceiling"]) == (None, False)
    assert "audit ceiling:  off (3 records)" in _run(home, "stats").stdout
    status = _mcp_status(home, UNDERCROFT_AUDIT_CEILING="100")
    assert (status["chain_ceiling"], status["chain_over_ceiling"]) == (100, False)
    assert isinstance(status["chain_replays"], int)


def test_repair_measures_the_vacuum_with_the_wal_checkpointed(tmp_path: Path) -> None:
    home = _init(tmp_path)
    _fill_two_wings(home)
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        for drawer in store.list_drawers(wing="work"):
            store.delete(drawer.id)
    repaired = _run(home, "repair", "--json")
    assert repaired.returncode == 0, repaired.stderr
    report = json.loads(repaired.stdout)
    wal = _db(home).with_name("vault.db-wal")
    on_disk = _db(home).stat().st_size + (wal.stat().st_size if wal.exists() else 0)
    assert report["bytes_after"] == on_disk  # what the vault occupies once the program has exited
    assert report["bytes_after"] < report["bytes_before"]  # half the drawers were deleted: the file shrank
