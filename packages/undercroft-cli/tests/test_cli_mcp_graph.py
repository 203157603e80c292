"""Knowledge-graph, tunnel and erasure-receipt tools over a real vault, with the authority fence."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from undercroft_cli.mcp import McpDispatcher, ToolReply, ToolSession
from undercroft_core import HashEmbedder
from undercroft_store import Palace, VaultStore
from undercroft_store.governance.forgetting import forget
from undercroft_store.memory.kg.authority import declare_authority


@pytest.fixture
def store(tmp_path: Path) -> Iterator[VaultStore]:
    with Palace.from_env({"UNDERCROFT_HOME": str(tmp_path / "palace")}) as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as opened:
            yield opened


@pytest.fixture
def mcp(store: VaultStore) -> McpDispatcher:
    return McpDispatcher(ToolSession(store, HashEmbedder()))


def _ok(reply: ToolReply) -> str:
    assert not reply.is_error, reply.text
    return reply.text


def test_facts_are_added_superseded_and_replayed(mcp: McpDispatcher) -> None:
    added = _ok(mcp.call("undercroft_kg_add", {"subject": "alice", "predicate": "works_at", "object": "acme",
                                               "valid_from": "2024-01-01"}))  # fmt: skip
    assert added.startswith("fact: ") and "(alice works_at acme)" in added
    superseded = _ok(mcp.call("undercroft_kg_supersede", {"subject": "alice", "predicate": "works_at",
                                                          "new_object": "globex", "at": "2024-06-01"}))  # fmt: skip
    assert superseded.startswith("superseded: ")
    then = json.loads(_ok(mcp.call("undercroft_kg_query", {"entity": "alice", "as_of": "2024-03-01"})))["facts"]
    assert [f["object"] for f in then] == ["acme"]
    now = json.loads(_ok(mcp.call("undercroft_kg_query", {"entity": "alice", "direction": "outgoing"})))["facts"]
    assert {f["object"] for f in now} == {"acme", "globex"}
    assert len(json.loads(_ok(mcp.call("undercroft_kg_timeline", {"entity": "alice"})))["facts"]) == 2
    assert len(json.loads(_ok(mcp.call("undercroft_kg_rel", {"predicate": "works_at"})))["facts"]) == 2
    assert json.loads(_ok(mcp.call("undercroft_kg_stats", {})))
    closed = _ok(mcp.call("undercroft_kg_invalidate", {"subject": "alice", "predicate": "works_at"}))
    assert closed.startswith("closed: ")
    nothing = mcp.call("undercroft_kg_invalidate", {"subject": "alice", "predicate": "works_at"})
    assert nothing.is_error and "no open fact (alice, works_at)" in nothing.text
    assert json.loads(_ok(mcp.call("undercroft_kg_receipts", {"problems_only": True})))["receipts"] == []
    bad = mcp.call("undercroft_kg_query", {"entity": "alice", "direction": "sideways"})
    assert bad.is_error and "argument 'direction' must be one of outgoing, incoming, both" in bad.text


def test_an_agent_cannot_close_the_window_of_an_approved_canonical_fact(mcp: McpDispatcher, store: VaultStore) -> None:
    added = _ok(mcp.call("undercroft_kg_add", {"subject": "vat", "predicate": "rate", "object": "20%"}))
    fact_id = added.split()[1]
    assert "no canonical fact holds this key" in _ok(mcp.call("undercroft_lookup_canonical", {"key": "vat-rate"}))
    declare_authority(store, fact_id, authority_class="golden", review_state="approved", canonical_key="vat-rate")
    assert '"object": "20%"' in _ok(mcp.call("undercroft_lookup_canonical", {"key": "vat-rate"}))
    for name, extra in (("undercroft_kg_invalidate", {}), ("undercroft_kg_supersede", {"new_object": "0%"})):
        reply = mcp.call(name, {"subject": "vat", "predicate": "rate", **extra})
        assert reply.is_error and "approved canonical fact" in reply.text, name


def test_tunnels_are_created_followed_traversed_and_deleted(mcp: McpDispatcher) -> None:
    _ok(mcp.call("undercroft_save", {"content": "Invoices go out on the 1st.", "wing": "billing", "room": "ops"}))
    created = _ok(mcp.call("undercroft_create_tunnel", {"source_wing": "work", "target_wing": "billing",
                                                        "label": "money"}))  # fmt: skip
    tunnel_id = created.split()[1]
    assert tunnel_id in _ok(mcp.call("undercroft_list_tunnels", {"wing": "work"}))
    followed = _ok(mcp.call("undercroft_follow_tunnels", {"wing": "work"}))
    assert "Invoices go out on the 1st." in followed and 'wing="billing"' in followed
    reached = json.loads(_ok(mcp.call("undercroft_traverse", {"start_wing": "work", "max_hops": 1})))["reached"]
    assert reached == [{"wing": "billing", "hops": 1, "via": tunnel_id}]
    assert _ok(mcp.call("undercroft_delete_tunnel", {"tunnel_id": tunnel_id})) == f"deleted: {tunnel_id}"
    assert json.loads(_ok(mcp.call("undercroft_list_tunnels", {})))["tunnels"] == []
    same = mcp.call("undercroft_create_tunnel", {"source_wing": "work", "target_wing": "work"})
    assert same.is_error and "a tunnel joins two different places" in same.text


def test_an_erasure_receipt_is_checked_and_a_forged_one_refused(mcp: McpDispatcher, store: VaultStore) -> None:
    saved = _ok(mcp.call("undercroft_save", {"content": "Delete me on request."}))
    receipt = forget(store, [saved.split()[1]], reason="subject request")
    checked = _ok(mcp.call("undercroft_check_erasure_receipt", {"attestation": receipt.to_json()}))
    assert checked.startswith("verdict: verified")
    garbage = mcp.call("undercroft_check_erasure_receipt", {"attestation": "{not json"})
    assert garbage.is_error and garbage.text.startswith("error: ")


def test_the_entities_tool_pages_the_names_facts_use(mcp: McpDispatcher, store: VaultStore) -> None:
    assert mcp.call("undercroft_kg_entities", {}).structured == {"entities": [], "offset": 0}
    for subject, obj in (("alice", "acme"), ("bob", "globex"), ("alice", "initech")):
        _ok(mcp.call("undercroft_kg_add", {"subject": subject, "predicate": "works_at", "object": obj}))
    reply = mcp.call("undercroft_kg_entities", {})
    assert not reply.is_error and reply.structured is not None
    names = [e["name"] for e in reply.structured["entities"]]
    assert names == ["alice", "acme", "bob", "globex", "initech"]  # first-named order, each once
    assert all(set(e) == {"id", "name", "created_at"} and e["id"] != e["name"] for e in reply.structured["entities"])
    page = mcp.call("undercroft_kg_entities", {"limit": 2, "offset": 2}).structured
    assert page == {"entities": reply.structured["entities"][2:4], "offset": 2}
    assert mcp.call("undercroft_kg_entities", {"offset": 5}).structured == {"entities": [], "offset": 5}
    reader = McpDispatcher(ToolSession(store, HashEmbedder(), read_only=True))
    assert reader.call("undercroft_kg_entities", {}).structured == reply.structured  # a read: served read-only


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({"limit": 0}, "argument 'limit'"),
        ({"limit": 1001}, "argument 'limit'"),
        ({"offset": -1}, "argument 'offset'"),
        ({"limit": "ten"}, "argument 'limit'"),
        ({"entity": "alice"}, "entity"),
    ],
)
def test_a_bad_entities_page_is_refused_by_name(mcp: McpDispatcher, arguments: dict[str, object], message: str) -> None:
    reply = mcp.call("undercroft_kg_entities", arguments)
    assert reply.is_error and message in reply.text, reply.text
