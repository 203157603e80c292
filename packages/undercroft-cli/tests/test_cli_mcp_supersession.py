"""MCP supersession: ``supersedes`` on save/add_drawer goes through `supersede_drawer`, never the plain write.

Each superseding save must leave a keyed link row in the raw ``vault.db`` (the same commit as the drawer), a
``verified`` verdict and no verify gap; a refused one (missing id, another wing, a field the door cannot carry,
a read-only server) writes nothing at all; a diverted one still says where it landed.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from dataclasses import replace
from datetime import UTC, datetime
from pathlib import Path

import pytest
from undercroft_cli.mcp import McpDispatcher, ToolReply, ToolSession
from undercroft_config.values import Admission
from undercroft_core import HashEmbedder
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.governance.admission import AdmissionPolicy, load_fixtures
from undercroft_store.governance.quarantine import install_gate
from undercroft_store.governance.rulings import allow, list_admissions
from undercroft_store.memory.supersession import supersessions

FIXED = datetime(2024, 5, 1, 12, 0, tzinfo=UTC)
MISSING = "drawer_" + "a" * 32


@pytest.fixture
def palace(tmp_path: Path) -> Iterator[Palace]:
    with Palace.from_env({"UNDERCROFT_HOME": str(tmp_path / "palace")}) as opened:
        opened.init()
        yield opened


@pytest.fixture
def store(palace: Palace) -> Iterator[VaultStore]:
    with palace.open_vault("default", HashEmbedder()) as opened:
        yield opened


@pytest.fixture
def mcp(store: VaultStore) -> McpDispatcher:
    return McpDispatcher(ToolSession(store, HashEmbedder(), clock=lambda: FIXED))


def _db(palace: Palace) -> Path:
    return palace.home / "vaults" / "default" / "vault.db"


def _ok(reply: ToolReply) -> str:
    assert not reply.is_error, reply.text
    return reply.text


def _created(reply: ToolReply) -> str:
    text = _ok(reply)
    assert text.startswith("created: drawer_"), text
    return text.split()[1]


def _links(palace: Palace) -> list[tuple[str, str]]:
    with sqlite3.connect(_db(palace)) as raw:
        return [(str(a), str(b)) for a, b in raw.execute("SELECT drawer_id, superseded_id FROM supersessions")]


def _counts(palace: Palace) -> tuple[int, int, int]:
    with sqlite3.connect(_db(palace)) as raw:
        return tuple(  # type: ignore[return-value]
            raw.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0]
            for table in ("drawers", "supersessions", "audit")
        )


def _gaps(store: VaultStore) -> list[str]:
    report = store.verify()
    assert report.ok and report.surfaces is not None, report.render()
    return report.surfaces.supersession_gaps


def test_a_superseding_save_writes_the_link_row_and_verifies(
    mcp: McpDispatcher, store: VaultStore, palace: Palace
) -> None:
    old = _created(mcp.call("undercroft_save", {"content": "Parked on level 3.", "wing": "life", "room": "car"}))
    reply = _ok(mcp.call("undercroft_save", {"content": "Parked on level 4.", "supersedes": old}))
    assert reply.startswith("created: drawer_") and reply.endswith(" in life/car"), reply  # beside the old one
    new = reply.split()[1]
    assert _links(palace) == [(new, old)]  # the receipt row, read from the raw file
    with sqlite3.connect(_db(palace)) as raw:
        labels = [str(label) for (label,) in raw.execute("SELECT record_id FROM audit")]
    assert f"supersession/{new}" in labels and f"drawer/{new}" in labels
    [link] = supersessions(store)
    assert (link.drawer_id, link.superseded_id, link.verdict) == (new, old, "verified")
    drawer = store.get(new)
    assert (drawer.supersedes, drawer.added_by, drawer.content) == (old, "mcp", "Parked on level 4.")
    assert _gaps(store) == []
    rendered = _ok(mcp.call("undercroft_verify", {}))
    assert "supersede gaps:   0 (reported, not failed)" in rendered and "GAP:" not in rendered
    assert f'supersedes="{old}"' in _ok(mcp.call("undercroft_get_drawer", {"drawer_id": new}))


def test_add_drawer_with_supersedes_links_too(mcp: McpDispatcher, store: VaultStore, palace: Palace) -> None:
    old = _created(mcp.call("undercroft_add_drawer", {"content": "Alice works at Acme.", "wing": "work", "room": "a"}))
    arguments = {"content": "Alice left Acme.", "wing": "work", "room": "a", "supersedes": old}
    new = _created(mcp.call("undercroft_add_drawer", arguments))
    assert _links(palace) == [(new, old)]
    assert [s.verdict for s in supersessions(store)] == ["verified"]
    assert _gaps(store) == []


def test_the_plain_write_path_would_have_been_a_gap(store: VaultStore, mcp: McpDispatcher) -> None:
    # The contrast that makes the tests above able to fail: the store's own write API still makes a gap.
    old = _created(mcp.call("undercroft_save", {"content": "Parked on level 3."}))
    index = store.allocate_append_indices(1)
    unlinked = replace(
        store.get(old),
        id=store.drawer_ids.append("general", "notes", index),
        chunk_index=index,
        supersedes=old,
        content="Parked on level 5.",
    )
    store.write([DrawerWrite(unlinked)], screening=Screen())
    assert _gaps(store) == [f"drawer {unlinked.id} supersedes {old}: no link row"]


@pytest.mark.parametrize(
    ("tool", "extra", "message"),
    [
        (
            "undercroft_save",
            {"supersedes": MISSING},
            f"error: undercroft_save: argument 'supersedes' names no live drawer: no drawer {MISSING} "
            "in vault 'default'",
        ),
        (
            "undercroft_add_drawer",
            {"wing": "life", "room": "car", "supersedes": MISSING},
            f"error: undercroft_add_drawer: argument 'supersedes' names no live drawer: no drawer {MISSING}",
        ),
        (
            "undercroft_save",
            {"supersedes": "not-a-drawer"},
            "error: undercroft_save: argument 'supersedes' names no live drawer: ",
        ),
        (
            "undercroft_save",
            {"supersedes": "{old}", "wing": "work"},
            "error: undercroft_save: a superseding drawer is filed beside the one it replaces ({old} in life/car, "
            "kind None); argument 'wing' asks for 'work' (save without 'supersedes' to file it elsewhere, unlinked)",
        ),
        (
            "undercroft_add_drawer",
            {"supersedes": "{old}", "wing": "life", "room": "bike"},
            "argument 'room' asks for 'bike'",
        ),
        ("undercroft_save", {"supersedes": "{old}", "kind": "fact"}, "argument 'kind' asks for 'fact'"),
        (
            "undercroft_save",
            {"supersedes": "{old}", "content_date": "2024-05-01", "agent": "coder"},
            "error: undercroft_save: argument(s) content_date, agent cannot accompany 'supersedes': a supersession "
            "records the new words with the replaced drawer's wing, room and kind only",
        ),
        (
            "undercroft_add_drawer",
            {"supersedes": "{old}", "wing": "life", "room": "car", "source_file": "a.md"},
            "argument(s) source_file cannot accompany 'supersedes'",
        ),
    ],
)
def test_a_refused_supersession_says_why_and_writes_nothing(
    mcp: McpDispatcher, palace: Palace, tool: str, extra: dict[str, str], message: str
) -> None:
    old = _created(mcp.call("undercroft_save", {"content": "Parked on level 3.", "wing": "life", "room": "car"}))
    before = _counts(palace)
    arguments = {"content": "Parked on level 4.", **{key: value.format(old=old) for key, value in extra.items()}}
    reply = mcp.call(tool, arguments)
    assert reply.is_error and reply.text.startswith("error: ") and message.format(old=old) in reply.text, reply.text
    assert _counts(palace) == before  # no drawer, no link row, no audit record
    assert _links(palace) == []


def test_a_read_only_server_refuses_a_supersession_unchanged(store: VaultStore, palace: Palace) -> None:
    writer = McpDispatcher(ToolSession(store, HashEmbedder(), clock=lambda: FIXED))
    old = _created(writer.call("undercroft_save", {"content": "Parked on level 3."}))
    before = _counts(palace)
    reader = McpDispatcher(ToolSession(store, HashEmbedder(), read_only=True, clock=lambda: FIXED))
    for tool in ("undercroft_save", "undercroft_add_drawer"):
        reply = reader.call(tool, {"content": "Level 4.", "wing": "general", "room": "notes", "supersedes": old})
        assert reply.is_error and reply.text == f"error: server is read-only: {tool} is not allowed"
    assert _counts(palace) == before and _links(palace) == []


def test_a_diverted_supersession_says_where_it_landed(mcp: McpDispatcher, store: VaultStore, palace: Palace) -> None:
    old = _created(mcp.call("undercroft_save", {"content": "The VPN gateway is vpn-1.", "wing": "ops", "room": "net"}))
    install_gate(store, AdmissionPolicy(mode=Admission.QUARANTINE))
    reply = _ok(mcp.call("undercroft_save", {"content": load_fixtures()[0].text, "supersedes": old}))
    [item] = list_admissions(store)
    slot, intended = item.entry.drawer_id, item.entry.intended_id
    assert reply == (
        f"quarantined: {slot} was diverted by the admission screen into '{QUARANTINE_WING}' for operator review "
        "(intended ops/net); it is not filed there and will not be returned by search"
    )
    assert intended not in reply  # the agent is told the slot, never handed a filed id
    assert _links(palace) == [(intended, old)]  # the link rode the same commit, under the id it aims at
    assert store.get(slot, wing=QUARANTINE_WING).supersedes == old
    assert _gaps(store) == []
    allow(store, slot)
    assert store.get(intended).supersedes == old and _gaps(store) == []
    assert [(s.drawer_id, s.verdict) for s in supersessions(store)] == [(intended, "verified")]


def test_the_fence_still_refuses_superseding_a_quarantine_resident(
    mcp: McpDispatcher, store: VaultStore, palace: Palace
) -> None:
    install_gate(store, AdmissionPolicy(mode=Admission.QUARANTINE))
    diverted = _ok(mcp.call("undercroft_save", {"content": load_fixtures()[0].text}))
    slot = diverted.split()[1]
    before = _counts(palace)
    reply = mcp.call("undercroft_save", {"content": "A correction.", "supersedes": slot})
    assert reply.is_error and f"{slot} is quarantine-pending" in reply.text
    assert _counts(palace) == before and _links(palace) == []


def test_the_supersessions_tool_lists_each_link_with_its_verdict_now(
    mcp: McpDispatcher, store: VaultStore, palace: Palace
) -> None:
    assert mcp.call("undercroft_supersessions", {}).structured == {"supersessions": []}
    old = _created(mcp.call("undercroft_save", {"content": "Parked on level 3.", "wing": "life", "room": "car"}))
    new = _created(mcp.call("undercroft_save", {"content": "Parked on level 4.", "supersedes": old}))
    reply = mcp.call("undercroft_supersessions", {})
    assert not reply.is_error and reply.structured is not None
    [link] = reply.structured["supersessions"]
    assert (link["drawer_id"], link["superseded_id"], link["verdict"]) == (new, old, "verified")
    assert link["at"] == supersessions(store)[0].at and set(link) == {"drawer_id", "superseded_id", "at", "verdict"}
    assert "Parked" not in reply.text  # ids and verdicts, never the words
    # The verdict is recomputed on each call: the replaced words edited, then the link row forged.
    _ok(mcp.call("undercroft_update_drawer", {"drawer_id": old, "content": "Parked on level 5."}))
    assert [s["verdict"] for s in mcp.call("undercroft_supersessions", {}).structured["supersessions"]] == [  # type: ignore[index]
        "superseded_changed"
    ]
    with sqlite3.connect(_db(palace)) as raw:
        meta = bytes(raw.execute("SELECT meta_json FROM supersessions").fetchone()[0])
        raw.execute("UPDATE supersessions SET meta_json = ?", (meta.replace(b'"at"', b'"at" ', 1),))
    forged = mcp.call("undercroft_supersessions", {})
    assert [s["verdict"] for s in forged.structured["supersessions"]] == ["tampered"]  # type: ignore[index]


def test_a_read_only_server_serves_the_supersession_links(store: VaultStore) -> None:
    writer = McpDispatcher(ToolSession(store, HashEmbedder(), clock=lambda: FIXED))
    old = _created(writer.call("undercroft_save", {"content": "Parked on level 3."}))
    new = _created(writer.call("undercroft_save", {"content": "Parked on level 4.", "supersedes": old}))
    reader = McpDispatcher(ToolSession(store, HashEmbedder(), read_only=True, clock=lambda: FIXED))
    reply = reader.call("undercroft_supersessions", {})
    assert not reply.is_error, reply.text
    assert [(s["drawer_id"], s["superseded_id"]) for s in reply.structured["supersessions"]] == [(new, old)]  # type: ignore[index]
    refused = reader.call("undercroft_supersessions", {"wing": "life"})
    assert refused.is_error and "wing" in refused.text
