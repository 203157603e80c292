"""The temporal knowledge graph: windows, directions, supersede atomicity, sealing, tags, verify legs."""

from __future__ import annotations

import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from undercroft_core import HashEmbedder
from undercroft_store import Palace, ReadOnlyStore, VaultStore
from undercroft_store.memory.kg import graph as graph_module
from undercroft_store.memory.kg.errors import FactNotFound, FactTampered, InvalidFact
from undercroft_store.memory.kg.graph import FactInput, KnowledgeGraph


@pytest.fixture(params=["sealed", "hmac-only"])
def store(request: pytest.FixtureRequest, palace: Palace, embedder: HashEmbedder) -> Iterator[VaultStore]:
    name = "default" if request.param == "sealed" else "plain"
    if request.param != "sealed":
        palace.create_vault(name, level="hmac-only")
    with palace.open_vault(name, embedder) as opened:
        yield opened


def _height(store: VaultStore) -> int:
    return int(store._context.connection.execute("SELECT height FROM chain_meta").fetchone()[0])


def test_as_of_is_half_open_at_both_edges(store: VaultStore) -> None:
    kg = KnowledgeGraph(store)
    fact = kg.add("Max", "works at", "Acme", valid_from="2024-01-01", valid_to="2024-06-01")
    assert [f.id for f in kg.query("max", as_of="2024-01-01")] == [fact.id]
    assert [f.id for f in kg.query("Max", as_of="2024-05-31T23:59:59Z")] == [fact.id]
    assert kg.query("Max", as_of="2024-06-01") == []
    assert kg.query("Max", as_of="2023-12-31T23:59:59Z") == []
    assert [f.id for f in kg.query("Max")] == [fact.id]


def test_directions_and_rel(store: VaultStore) -> None:
    kg = KnowledgeGraph(store)
    a = kg.add("Alice", "manages", "Bob")
    b = kg.add("Bob", "reports to", "Carol")
    assert [f.id for f in kg.query("Bob", direction="incoming")] == [a.id]
    assert [f.id for f in kg.query("Bob", direction="outgoing")] == [b.id]
    assert {f.id for f in kg.query("bob")} == {a.id, b.id}
    assert [f.id for f in kg.rel("REPORTS  TO")] == [b.id]
    assert kg.rel("unknown") == []
    assert kg.get(a.id).object == "Bob"


def test_identical_active_fact_is_not_written_twice(store: VaultStore) -> None:
    kg = KnowledgeGraph(store)
    first = kg.add("Max", "likes", "tea")
    height = _height(store)
    again = kg.add("max", "Likes", "Tea")
    assert again.id == first.id and _height(store) == height
    assert kg.stats().facts == 1


def test_invalidate_closes_and_is_audited(store: VaultStore) -> None:
    kg = KnowledgeGraph(store)
    fact = kg.add("Max", "lives in", "Paris", valid_from="2020-01-01")
    height = _height(store)
    closed = kg.invalidate(fact.id, ended="2023-03-01")
    assert closed.valid_to == "2023-03-01T00:00:00.000000Z" and not closed.active
    assert _height(store) == height + 1
    assert kg.query("Max", as_of="2023-03-01") == []
    assert [f.id for f in kg.query("Max", as_of="2023-02-28")] == [fact.id]
    with pytest.raises(InvalidFact, match=r"is already closed \(valid_to 2023-03-01T00:00:00.000000Z\)"):
        kg.invalidate(fact.id)
    with pytest.raises(FactNotFound, match="no fact 'fact_nope'"):
        kg.invalidate("fact_nope")
    assert store.verify().ok


def test_supersede_closes_and_opens_at_one_instant(store: VaultStore) -> None:
    kg = KnowledgeGraph(store)
    old = kg.add("Max", "works at", "Acme", valid_from="2020-01-01")
    closed, new = kg.supersede(old.id, "Globex", at="2024-02-01")
    assert closed.valid_to == new.valid_from == "2024-02-01T00:00:00.000000Z"
    assert closed.superseded_by == new.id and new.supersedes == old.id
    assert [f.object for f in kg.query("Max", as_of="2024-01-31")] == ["Acme"]
    assert [f.object for f in kg.query("Max", as_of="2024-02-01")] == ["Globex"]
    assert [f.object for f in kg.timeline("Max")] == ["Acme", "Globex"]
    stats = kg.stats()
    assert (stats.facts, stats.active, stats.closed, stats.entities) == (2, 1, 1, 3)
    assert store.verify().ok


def test_supersede_crash_between_close_and_open_leaves_neither(
    store: VaultStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    kg = KnowledgeGraph(store)
    old = kg.add("Max", "works at", "Acme")
    height = _height(store)

    def crash(*_: object) -> None:
        raise RuntimeError("power cut between close and open")

    monkeypatch.setattr(graph_module, "insert_fact", crash)
    with pytest.raises(RuntimeError, match="power cut"):
        kg.supersede(old.id, "Globex")
    monkeypatch.undo()
    assert kg.get(old.id).active
    assert [f.object for f in kg.timeline()] == ["Acme"]
    assert _height(store) == height
    assert store.verify().ok


@pytest.mark.parametrize(
    ("item", "message"),
    [
        (FactInput(" ", "p", "o"), "subject must not be empty"),
        (FactInput("s", "p", "o", valid_from="yesterday"), "valid_from 'yesterday' is not an ISO date"),
        (FactInput("s", "p", "o", "2024-02-01", "2024-01-01"), "valid_to 2024-01-01T00:00:00.000000Z must be later"),
        (FactInput("s", "p", "o", confidence=2), "confidence must be a number between 0 and 1, got 2"),
        (FactInput("s", "p", "o", grounding="maybe"), "unknown grounding 'maybe': expected one of stated"),
        (FactInput("s", "p", "o", source_span=(0, 3)), "a source span needs a source drawer"),
        (FactInput("s", "p\x00", "o"), "contains a control character"),
        (FactInput("s", "p", "o", source_drawer="drawer_" + "0" * 32), "source drawer drawer_0+ does not exist"),
    ],
)
def test_bad_facts_are_refused_precisely(store: VaultStore, item: FactInput, message: str) -> None:
    with pytest.raises(InvalidFact, match=message):
        KnowledgeGraph(store).add_many([item])


def test_bad_query_arguments(store: VaultStore) -> None:
    kg = KnowledgeGraph(store)
    with pytest.raises(InvalidFact, match="unknown direction 'sideways'"):
        kg.query("Max", direction="sideways")  # type: ignore[arg-type]
    with pytest.raises(InvalidFact, match="as_of 'soon' is not an ISO date"):
        kg.rel("p", as_of="soon")
    with pytest.raises(InvalidFact, match="limit must be a positive integer, got 0"):
        kg.entities(limit=0)


def test_entities_are_paged_and_opened(store: VaultStore) -> None:
    kg = KnowledgeGraph(store)
    kg.add("Alice", "knows", "Bob")
    kg.add("Bob", "knows", "Carol")
    assert [e.name for e in kg.entities()] == ["Alice", "Bob", "Carol"]
    assert [e.name for e in kg.entities(limit=1, offset=1)] == ["Bob"]


def _raw(home: Path, vault: str) -> sqlite3.Connection:
    return sqlite3.connect(home / "vaults" / vault / "vault.db")


def test_sealed_vault_bytes_hold_no_entity_predicate_or_object(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        kg = KnowledgeGraph(store)
        fact = kg.add("Zanzibarqux Person", "quuxworks for", "Frobnicorp Ltd", valid_from="2024-01-01")
        kg.supersede(fact.id, "Blorptastic Inc")
    raw = b"".join(p.read_bytes() for p in (home / "vaults" / "default").iterdir() if p.name.startswith("vault.db"))
    for word in (b"Zanzibarqux", b"zanzibarqux", b"quuxworks", b"Frobnicorp", b"Blorptastic"):
        assert word not in raw, word


def test_a_flipped_column_or_blob_fails_reads_and_verify(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        fact = KnowledgeGraph(store).add("Max", "role", "engineer")
    with _raw(home, "default") as raw:
        raw.execute(
            "UPDATE kg_facts SET review_state = 'approved', meta_json = CAST(replace(CAST(meta_json AS TEXT), "
            "'\"unreviewed\"', '\"approved\"') AS BLOB) WHERE id = ?",
            (fact.id,),
        )
    with palace.open_vault("default", HashEmbedder()) as store:
        with pytest.raises(FactTampered, match=f"fact {fact.id} .* fails its HMAC tag"):
            KnowledgeGraph(store).get(fact.id)
        report = store.verify()
        assert not report.ok and report.surfaces is not None
        assert report.surfaces.tampered == [f"fact {fact.id}"]
        assert "VERIFY FAILED" in report.render()


def test_mirror_drift_and_stale_rows_are_verify_findings(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        kg = KnowledgeGraph(store)
        fact = kg.add("Max", "role", "engineer")
        other = kg.add("Max", "city", "Oslo")
        assert store.verify().ok
    with _raw(home, "default") as raw:
        old_row = raw.execute(
            "SELECT valid_to, meta_json, terms, value, tag FROM kg_facts WHERE id = ?", (other.id,)
        ).fetchone()
    with palace.open_vault("default", HashEmbedder()) as store:
        KnowledgeGraph(store).invalidate(other.id)
    with _raw(home, "default") as raw:
        raw.execute(
            "UPDATE kg_facts SET valid_to = ?, meta_json = ?, terms = ?, value = ?, tag = ? WHERE id = ?",
            (*old_row, other.id),
        )
        raw.execute("UPDATE kg_facts SET authority_class = 'golden' WHERE id = ?", (fact.id,))
    with palace.open_vault("default", HashEmbedder()) as store:
        surfaces = store.verify().surfaces
        assert surfaces is not None
        assert surfaces.stale == [f"kg {other.id}"]
        assert surfaces.mirror_drift == [f"fact {fact.id}"]


def test_a_deleted_fact_row_leaves_an_orphan_label(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        fact = KnowledgeGraph(store).add("Max", "role", "engineer")
    with _raw(home, "default") as raw:
        raw.execute("DELETE FROM kg_facts WHERE id = ?", (fact.id,))
    with palace.open_vault("default", HashEmbedder()) as store:
        surfaces = store.verify().surfaces
        assert surfaces is not None and surfaces.orphans == [f"kg {fact.id}"]


_DAYS = st.integers(min_value=1, max_value=28)


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    windows=st.lists(st.tuples(_DAYS, st.one_of(st.none(), _DAYS)), min_size=1, max_size=6),
    probe=_DAYS,
)
def test_as_of_matches_a_brute_force_window_check(
    palace: Palace, windows: list[tuple[int, int | None]], probe: int
) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        kg = KnowledgeGraph(store)
        subject = f"entity {len(kg.entities(limit=1000))}"
        expected = set()
        for index, (start, end) in enumerate(windows):
            if end is not None and end <= start:
                end = None
            fact = kg.add(
                subject,
                "p",
                f"o{index}",
                valid_from=f"2024-02-{start:02d}",
                valid_to=None if end is None else f"2024-02-{end:02d}",
            )
            if start <= probe and (end is None or probe < end):
                expected.add(fact.id)
        assert {f.id for f in kg.query(subject, as_of=f"2024-02-{probe:02d}")} == expected


def test_read_only_store_refuses_graph_writes(palace: Palace) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        KnowledgeGraph(store).add("Max", "role", "engineer")
    with palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        kg = KnowledgeGraph(store)
        assert [f.object for f in kg.query("Max")] == ["engineer"]
        with pytest.raises(ReadOnlyStore, match="open read-only: writes are refused"):
            kg.add("Max", "role", "manager")


@pytest.mark.parametrize("column", ["name", "meta_json"])
def test_a_flipped_entity_row_fails_its_tag_before_its_name_is_opened(palace: Palace, home: Path, column: str) -> None:
    """One XOR'd bit in an entity's sealed name or its meta: the tag refuses it (not the cipher, not nothing)."""
    with palace.open_vault("default", HashEmbedder()) as store:
        KnowledgeGraph(store).add("Max", "role", "engineer")
    with _raw(home, "default") as raw:
        rows = raw.execute(f"SELECT id, {column} FROM kg_entities ORDER BY id").fetchall()
        victim, value = rows[0][0], bytearray(rows[0][1])
        value[len(value) // 2] ^= 0x01
        raw.execute(f"UPDATE kg_entities SET {column} = ? WHERE id = ?", (bytes(value), victim))
    with palace.open_vault("default", HashEmbedder()) as store:
        with pytest.raises(FactTampered, match=f"entity {victim} .* fails its HMAC tag"):
            KnowledgeGraph(store).entities()
