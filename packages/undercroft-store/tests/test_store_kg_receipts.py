"""Fact receipts (four verdicts, built by editing real rows), grounding filter, and the authority tier."""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.memory.kg.authority import canonical, declare_authority
from undercroft_store.memory.kg.errors import FactTampered, InvalidFact
from undercroft_store.memory.kg.graph import KnowledgeGraph
from undercroft_store.memory.kg.receipts import IntegrityVerdict, ReceiptReport, Support, fact_receipts, support_of


def _open(palace: Palace) -> VaultStore:
    return palace.open_vault("default", HashEmbedder())


def _report(store: VaultStore) -> ReceiptReport:
    report = fact_receipts(store)
    assert isinstance(report, ReceiptReport)
    return report


def test_each_of_the_four_verdicts(palace: Palace, home: Path) -> None:
    with _open(palace) as store:
        ids = [
            store.remember(text, wing="w", room="r", added_by="t")[0].id
            for text in ("Max joined Acme in 2020.", "Ana leads Ops.", "Bo likes tea.", "Cy uses vim.")
        ]
        kg = KnowledgeGraph(store)
        facts = [
            kg.add("Max", "joined", "Acme", source_drawer=ids[0], source_span=(0, 14), grounding="stated"),
            kg.add("Ana", "leads", "Ops", source_drawer=ids[1], grounding="stated"),
            kg.add("Bo", "likes", "tea", source_drawer=ids[2], grounding="background"),
            kg.add("Cy", "uses", "vim", source_drawer=ids[3]),
            kg.add("Di", "owns", "cat"),
        ]
        assert {r.verdict for r in _report(store).receipts} == {"verified"}
        edited = replace(store.get(ids[1]), content="Ana left Ops.")
        store.write([DrawerWrite(edited)], screening=Screen())
        store.delete(ids[2])
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as raw:
        # The grounding is sealed inside the terms on a sealed vault: the forger flips a byte of that blob
        # (to upgrade "unevaluated"), and the row is tampered, never read as a stated receipt.
        [terms] = raw.execute("SELECT terms FROM kg_facts WHERE id = ?", (facts[3].id,)).fetchone()
        flipped = bytes(terms[:-1]) + bytes([terms[-1] ^ 0x01])
        raw.execute("UPDATE kg_facts SET terms = ? WHERE id = ?", (flipped, facts[3].id))
    with _open(palace) as store:
        report = _report(store)
        verdicts = {r.fact_id: r.verdict for r in report.receipts}
        assert verdicts == {
            facts[0].id: "verified",
            facts[1].id: "source_changed",
            facts[2].id: "dangling",
            facts[3].id: "tampered",
        }
        assert report.uncited == 1 and not report.ok
        assert report.counts == {"verified": 1, "source_changed": 1, "dangling": 1, "tampered": 1}
        fast = fact_receipts(store, integrity_only=True)
        assert fast == IntegrityVerdict(ok=False, checked=5)
        verify = store.verify()
        assert verify.surfaces is not None and verify.surfaces.receipts["tampered"] == 1 and not verify.ok


# Multibyte before and inside the span: two-byte (é, ö), three-byte (日本, —) and four-byte (🦉) characters.
NOTE = "Réunion 🦉 — 日本: Zoë Müller leads Ångström Labs. Later text."
CITED = "Zoë Müller leads Ångström Labs."


@pytest.mark.parametrize("sealed", [False, True])
def test_support_spans_are_utf8_byte_offsets_into_the_verbatim_drawer(palace: Palace, home: Path, sealed: bool) -> None:
    vault = "sealed" if sealed else "default"
    if sealed:
        palace.create_vault(vault, level="sealed")
    with palace.open_vault(vault, HashEmbedder()) as store:
        [saved] = store.remember(NOTE, wing="w", room="r", added_by="t")
        [other] = store.remember("Bo likes tea.", wing="w", room="r", added_by="t")
        start = NOTE.index(CITED)
        chars = (start, start + len(CITED))
        kg = KnowledgeGraph(store)
        fact = kg.add("Zoë Müller", "leads", "Ångström Labs", source_drawer=saved.id, source_span=chars,
                      grounding="stated")  # fmt: skip
        whole = kg.add("Bo", "likes", "tea", source_drawer=other.id, grounding="background")
        uncited = kg.add("Di", "owns", "cat")
        support = support_of(store, [fact, whole, uncited])
        assert set(support) == {fact.id, whole.id}  # an uncited fact has no support
        [(b0, b1)] = support[fact.id].spans
        raw = NOTE.encode("utf-8")
        assert raw[b0:b1].decode("utf-8") == CITED  # the bytes are the cited words exactly
        assert (b0, b1) != chars and b1 - b0 == len(CITED.encode("utf-8"))  # not the character offsets
        assert support[fact.id] == Support(saved.id, "verified", ((b0, b1),))
        assert support[whole.id] == Support(other.id, "verified", ())  # no span cited: no byte range
        assert support[fact.id].to_dict() == {"drawer": saved.id, "receipt": "verified", "spans": [[b0, b1]]}
        store.delete(other.id)
        assert support_of(store, [whole])[whole.id] == Support(other.id, "dangling", ())
        edited = replace(store.get(saved.id), content=NOTE.replace("leads", "left"))
        store.write([DrawerWrite(edited)], screening=Screen())  # the cited words changed: no byte range
        assert support_of(store, [fact])[fact.id] == Support(saved.id, "source_changed", ())
    with sqlite3.connect(home / "vaults" / vault / "vault.db") as db:
        db.execute("UPDATE drawers SET tag = zeroblob(32) WHERE id = ?", (saved.id,))
    with palace.open_vault(vault, HashEmbedder()) as store:
        assert support_of(store, [fact])[fact.id] == Support(saved.id, "tampered", ())  # no span from a bad row


def test_receipt_survives_an_edit_outside_its_span(palace: Palace) -> None:
    with _open(palace) as store:
        [saved] = store.remember("Max joined Acme. Other words.", wing="w", room="r", added_by="t")
        fact = KnowledgeGraph(store).add("Max", "joined", "Acme", source_drawer=saved.id, source_span=(0, 16))
        edited = replace(store.get(saved.id), content="Max joined Acme. Changed tail.")
        store.write([DrawerWrite(edited)], screening=Screen())
        assert [r.verdict for r in _report(store).receipts if r.fact_id == fact.id] == ["verified"]
        with pytest.raises(InvalidFact, match=r"source span \(0, 99\) runs past the drawer's 30 characters"):
            KnowledgeGraph(store).add("Max", "joined", "Acme Corp", source_drawer=saved.id, source_span=(0, 99))


def test_grounding_filter_is_opt_in(palace: Palace) -> None:
    with _open(palace) as store:
        kg = KnowledgeGraph(store)
        kg.add("Max", "joined", "Acme", grounding="stated")
        kg.add("Max", "likes", "tea")
        assert len(kg.query("Max")) == 2
        assert [f.predicate for f in kg.query("Max", grounding="stated")] == ["joined"]
        assert [f.grounding for f in kg.rel("likes")] == ["unevaluated"]


def test_canonical_answers_one_approved_active_fact_and_promotion_displaces(palace: Palace) -> None:
    with _open(palace) as store:
        kg = KnowledgeGraph(store)
        first = kg.add("prod db", "host", "db-1", extractor="gpt-x")
        second = kg.add("prod db", "host", "db-2")
        assert canonical(store, "prod-db-host") is None
        declare_authority(store, first.id, canonical_key="prod-db-host", review_state="pending")
        assert canonical(store, "prod-db-host") is None
        change = declare_authority(store, first.id, authority_class="golden", review_state="approved")
        assert change.displaced is None
        holder = canonical(store, "prod-db-host")
        assert holder is not None and holder.id == first.id and holder.extractor == "gpt-x"
        change = declare_authority(
            store, second.id, canonical_key="prod-db-host", review_state="approved", authority_class="golden"
        )
        assert change.displaced is not None and change.displaced.id == first.id
        holder = canonical(store, "prod-db-host")
        assert holder is not None and holder.id == second.id
        assert not kg.get(first.id).active and kg.get(first.id).superseded_by == second.id
        assert store.verify().ok
        with pytest.raises(InvalidFact, match="unknown authority class 'gold'"):
            declare_authority(store, second.id, authority_class="gold")
        with pytest.raises(InvalidFact, match="unknown review state 'ok'"):
            declare_authority(store, second.id, review_state="ok")
        with pytest.raises(InvalidFact, match="is closed"):
            declare_authority(store, first.id, review_state="approved")


def test_a_flipped_review_state_cannot_approve_itself(palace: Palace, home: Path) -> None:
    with _open(palace) as store:
        fact = KnowledgeGraph(store).add("prod db", "host", "db-1")
        declare_authority(store, fact.id, canonical_key="k1", review_state="pending")
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as raw:
        raw.execute("UPDATE kg_facts SET review_state = 'approved' WHERE id = ?", (fact.id,))
    with _open(palace) as store:
        surfaces = store.verify().surfaces
        assert surfaces is not None and surfaces.mirror_drift == [f"fact {fact.id}"]
        with pytest.raises(FactTampered, match="a clear index column disagrees with its HMAC-covered meta"):
            canonical(store, "k1")
