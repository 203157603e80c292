"""The surfaces' rotation hooks: every row re-sealed and re-tagged under new keys; a bad row refuses."""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace
from undercroft_store.kernel._internal.surface_tables import SURFACE_TAGGED_TABLES
from undercroft_store.memory.kg.errors import FactTampered
from undercroft_store.memory.kg.facts import at_rest_payload
from undercroft_store.memory.kg.graph import KnowledgeGraph
from undercroft_store.memory.kg.rotation import (
    RESEAL_HOOKS,
    reseal_entities,
    reseal_facts,
    reseal_supersessions,
    reseal_tunnels,
)
from undercroft_store.memory.supersession import supersede_drawer
from undercroft_store.memory.tunnels import create_tunnel
from undercroft_vault import Domain, Sealer, SecretBytes, VaultKeys, compute_tag, derive_vault_keys, new_vault_salt


@dataclass(frozen=True)
class Rekey:
    connection: sqlite3.Connection
    sealed: bool
    old_keys: VaultKeys
    new_keys: VaultKeys
    old_sealer: Sealer
    new_sealer: Sealer
    metadata_sealed: bool = False


def test_every_surface_table_has_a_hook() -> None:
    assert set(RESEAL_HOOKS) == set(SURFACE_TAGGED_TABLES)


def test_hooks_reseal_and_retag_every_row(palace: Palace) -> None:
    new_keys = derive_vault_keys(SecretBytes(b"\x07" * 32), "default", new_vault_salt())
    with palace.open_vault("default", HashEmbedder()) as store:
        fact = KnowledgeGraph(store).add("Max", "works at", "Acme")
        create_tunnel(store, "a", "b", "label")
        [saved] = store.remember("old words", wing="a", room="r", added_by="t")
        supersede_drawer(store, saved.id, "new words", added_by="t")
        context = store._context
        rekey = Rekey(context.connection, True, context.keys, new_keys, context.sealer, Sealer(new_keys))
        context.connection.execute("BEGIN IMMEDIATE")
        try:
            records = [*reseal_facts(rekey), *reseal_entities(rekey), *reseal_tunnels(rekey)]
            records += reseal_supersessions(rekey)
            assert len(records) == 1 + 2 + 1 + 1
            meta, terms, value, tag = context.connection.execute(
                "SELECT meta_json, terms, value, tag FROM kg_facts WHERE id = ?", (fact.id,)
            ).fetchone()
            assert compute_tag(new_keys, f"kg/{fact.id}", meta, at_rest_payload(terms, value)) == tag
            assert (f"kg/{fact.id}", tag) in records
            assert Sealer(new_keys).open(Domain.kg_object(fact.id), value) == b"Acme"
            context.connection.execute("UPDATE kg_facts SET tag = zeroblob(32)")
            with pytest.raises(FactTampered, match=f"kg/{fact.id} fails its HMAC tag under the current keys"):
                reseal_facts(Rekey(context.connection, True, new_keys, new_keys, Sealer(new_keys), Sealer(new_keys)))
        finally:
            context.connection.execute("ROLLBACK")
        assert store.verify().ok


def test_a_real_rotation_keeps_every_surface_readable_and_verified(palace: Palace) -> None:
    from undercroft_store.integrity.rotation import rotate_vault
    from undercroft_store.memory.kg.receipts import ReceiptReport, fact_receipts
    from undercroft_store.memory.supersession import supersessions
    from undercroft_store.memory.tunnels import list_tunnels

    with palace.open_vault("default", HashEmbedder()) as store:
        [saved] = store.remember("Max joined Acme in 2020.", wing="people", room="max", added_by="t")
        fact = KnowledgeGraph(store).add("Max", "works at", "Acme", source_drawer=saved.id, source_span=(0, 15))
        create_tunnel(store, "people", "work", "employment")
        supersede_drawer(store, saved.id, "Max joined Acme in 2021.", added_by="t")
    rotate_vault(palace, "default", HashEmbedder())
    with palace.open_vault("default", HashEmbedder()) as store:
        assert store.verify().ok
        assert KnowledgeGraph(store).get(fact.id).object == "Acme"
        assert [t.label for t in list_tunnels(store)] == ["employment"]
        assert [s.verdict for s in supersessions(store)] == ["verified"]
        report = fact_receipts(store)
        assert isinstance(report, ReceiptReport) and report.counts["verified"] == 1
