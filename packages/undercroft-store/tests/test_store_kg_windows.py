"""Sealed knowledge-graph windows and details (issue 29): each fact's validity window sealed under
``kgwindow/{id}``, its extractor, confidence, grounding and span offsets inside its sealed terms.

Pinned: a new sealed vault stores no window date and no extractor name anywhere in its files (a byte grep), and
no detail field in a fact's clear meta, yet as-of queries, timelines, invalidation and stats answer as before and
survive rotation; a flipped byte in a stored window, a swapped window, a forged ``closed`` column or a detail
forged back into the clear meta is an integrity verdict; an older vault's clear windows (and a ``sealed-v1``
vault's clear details) are migrated on a writable open — batched, resumable after a crash between batches (every
fact migrated exactly once), verified (a forged row stops the migration and is named), chain-audited — and a
read-only open only says it is pending.
"""

from __future__ import annotations

import json
import sqlite3
from collections import Counter
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace
from undercroft_store.integrity.rotation import rotate_vault
from undercroft_store.kernel import seams
from undercroft_store.memory.kg import window_migration
from undercroft_store.memory.kg.errors import FactTampered
from undercroft_store.memory.kg.graph import FactInput, KnowledgeGraph

FACTS = [
    ("alder", "works_at", "quayside", "1991-04-07", "1996-08-19"),
    ("alder", "lives_in", "harrowgate", "1993-02-11", None),
    ("birch", "works_at", "quayside", None, "1998-12-30"),
    ("birch", "owns", "lantern", None, None),
    ("cedar", "works_at", "millrace", "1989-10-03", None),
]
DATES = [d for f in FACTS for d in f[3:] if d is not None]
#: A distinct extractor name per fact (a raw grep must not find one in a sealed vault's files).
EXTRACTORS = [f"windowtest-extractor-{name}" for name in ("ash", "bay", "cob", "dun", "elm")]
#: The source drawer the spans point into (the offsets need one that exists).
SOURCE_TEXT = "The harbour ledger lists who worked where, and from when until when, in an old hand."
DETAIL_KEYS = {"confidence", "extractor", "grounding", "span"}


def _db(palace: Palace, vault: str = "default") -> Path:
    return palace.home / "vaults" / vault / "vault.db"


def _raw(palace: Palace, vault: str = "default") -> bytes:
    directory = palace.home / "vaults" / vault
    return b"".join(p.read_bytes() for p in directory.iterdir() if p.is_file())


def _add_all(palace: Palace, vault: str = "default") -> list[str]:
    with palace.open_vault(vault, HashEmbedder()) as store:
        source = store.remember(SOURCE_TEXT, wing="ledger", room="harbour", added_by="t")[0].id
        facts = KnowledgeGraph(store).add_many(
            [
                FactInput(
                    s,
                    p,
                    o,
                    valid_from=start,
                    valid_to=end,
                    confidence=0.25 + n / 10,
                    source_drawer=source,
                    source_span=(3 + n, 40 + n),
                    extractor=EXTRACTORS[n],
                    grounding=("stated", "background")[n % 2],
                )
                for n, (s, p, o, start, end) in enumerate(FACTS)
            ]
        )
    return [f.id for f in facts]


def _answers(palace: Palace, vault: str = "default") -> dict[str, object]:
    with palace.open_vault(vault, HashEmbedder(), read_only=True) as store:
        graph = KnowledgeGraph(store)
        return {
            "1994": sorted((f.subject, f.object) for f in graph.rel("works_at", as_of="1994-06-01")),
            "1997": sorted((f.subject, f.object) for f in graph.rel("works_at", as_of="1997-06-01")),
            "alder 1995": sorted(f.object for f in graph.query("alder", as_of="1995-01-01")),
            "timeline": [(f.subject, f.predicate, f.valid_from, f.valid_to) for f in graph.timeline()],
            "details": sorted(  # by extractor name: the order the facts were written in
                (f.extractor, f.confidence, f.grounding, f.source_span, f.source_drawer is not None)
                for f in graph.timeline()
            ),
            "stated": sorted(f.subject for f in graph.query("alder", grounding="stated")),
            "stats": graph.stats().to_dict(),
        }


EXPECTED_1994 = [("alder", "quayside"), ("birch", "quayside"), ("cedar", "millrace")]
EXPECTED_1997 = [("birch", "quayside"), ("cedar", "millrace")]


def _legacy_vault(palace: Palace) -> list[str]:
    """A sealed vault as a build before sealed windows left it: no ``kg_windows`` marker, clear windows
    (written with the migration unwired, as that build had none)."""
    with sqlite3.connect(_db(palace)) as connection:
        connection.execute("DELETE FROM meta WHERE key = 'kg_windows'")
    with pytest.MonkeyPatch.context() as patch:
        patch.setitem(seams._open_migrations, "kg_windows", lambda context: None)
        ids = _add_all(palace)
    assert all(d.encode() in _raw(palace) for d in DATES)  # the premise: an older vault's windows are clear
    with sqlite3.connect(_db(palace)) as connection:
        assert connection.execute("SELECT value FROM meta WHERE key = 'kg_windows'").fetchone() is None
    return ids


def _details_in_clear(palace: Palace) -> list[bool]:
    with sqlite3.connect(_db(palace)) as connection:
        metas = [json.loads(m) for (m,) in connection.execute("SELECT meta_json FROM kg_facts ORDER BY seq")]
    return [bool(DETAIL_KEYS & set(document)) for document in metas]


def _v1_vault(palace: Palace) -> list[str]:
    """A sealed vault as the build with sealed windows but clear details left it (``kg_windows = sealed-v1``):
    each fact written in that shape — window sealed, details in the tagged meta, terms without them."""
    from undercroft_store.memory.kg import facts as kg_facts

    real = kg_facts._details

    def v1_encode(context, blind, fact):  # type: ignore[no-untyped-def]
        with pytest.MonkeyPatch.context() as inner:
            inner.setattr(kg_facts, "_details", lambda fact: {})  # the terms of a sealed-v1 row
            row = real_encode(context, blind, fact)
        meta = json.loads(row.meta_json) | real(fact)  # the details where sealed-v1 kept them: the clear meta
        stored = json.dumps(meta, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
        tag = kg_facts.fact_tag(context, fact.id, stored, row.terms, row.value)
        return kg_facts.replace(row, meta_json=stored, tag=tag)

    real_encode = kg_facts.encode_fact
    from undercroft_store.memory.kg._internal import rows as kg_rows

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(kg_rows, "encode_fact", v1_encode)
        ids = _add_all(palace)
    with sqlite3.connect(_db(palace)) as connection:
        connection.execute("UPDATE meta SET value = CAST('sealed-v1' AS BLOB) WHERE key = 'kg_windows'")
    assert _details_in_clear(palace) == [True] * 5  # the premise: a sealed-v1 vault's details are clear
    assert all(e.encode() in _raw(palace) for e in EXTRACTORS)
    assert [d for d in DATES if d.encode() in _raw(palace)] == []  # and its windows sealed
    return ids


def test_a_new_sealed_vault_stores_no_window_date_and_answers_as_of_queries(palace: Palace) -> None:
    _add_all(palace)
    raw = _raw(palace)
    assert [d for d in DATES if d.encode() in raw] == []
    assert [e for e in EXTRACTORS if e.encode() in raw] == []
    assert _details_in_clear(palace) == [False] * 5  # no extractor, confidence, grounding or span in the clear
    answers = _answers(palace)
    assert answers["details"] == [
        (EXTRACTORS[n], 0.25 + n / 10, ("stated", "background")[n % 2], (3 + n, 40 + n), True) for n in range(5)
    ]
    assert answers["stated"] == ["alder"]  # the grounding filter runs on the opened details
    assert answers["1994"] == EXPECTED_1994 and answers["1997"] == EXPECTED_1997
    assert answers["alder 1995"] == ["harrowgate", "quayside"]
    assert answers["stats"] == {"entities": 7, "facts": 5, "active": 3, "closed": 2, "predicates": 3}
    with sqlite3.connect(_db(palace)) as connection:
        columns = connection.execute("SELECT valid_from, valid_to FROM kg_facts ORDER BY seq").fetchall()
        sizes = {len(json.loads(m)["window"]) for (m,) in connection.execute("SELECT meta_json FROM kg_facts")}
    assert columns == [(None, "closed"), (None, None), (None, "closed"), (None, None), (None, None)]
    assert len(sizes) == 1  # padded: an open window, a start only and a full window read the same size


def test_invalidate_and_rotation_keep_the_sealed_windows(palace: Palace) -> None:
    ids = _add_all(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        closed = KnowledgeGraph(store).invalidate(ids[1], ended="1999-01-01")
    assert closed.valid_to == "1999-01-01T00:00:00.000000Z"
    rotate_vault(palace, "default", HashEmbedder())
    with palace.open_vault("default", HashEmbedder()) as store:
        graph = KnowledgeGraph(store)
        assert graph.get(ids[1]).valid_to == closed.valid_to
        assert graph.get(ids[0]).valid_from == "1991-04-07T00:00:00.000000Z"
        assert store.verify().ok
        assert graph.get(ids[2]).extractor == EXTRACTORS[2]  # the details moved with the terms
    assert b"1999-01-01" not in _raw(palace)
    assert [e for e in EXTRACTORS if e.encode() in _raw(palace)] == []


def _checkpointed(palace: Palace) -> bytes:
    with sqlite3.connect(_db(palace)) as connection:
        connection.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    return _db(palace).read_bytes()


def test_a_flipped_byte_in_a_stored_window_is_an_integrity_verdict(palace: Palace) -> None:
    ids = _add_all(palace)
    raw = _checkpointed(palace)
    with sqlite3.connect(_db(palace)) as connection:
        [meta] = connection.execute("SELECT meta_json FROM kg_facts WHERE id = ?", (ids[0],)).fetchone()
    window = json.loads(meta)["window"].encode("ascii")
    at = raw.index(window) + len(window) // 2
    flipped = raw[:at] + (b"A" if raw[at : at + 1] != b"A" else b"B") + raw[at + 1 :]
    _db(palace).write_bytes(flipped)
    with palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        report = store.verify()
    assert not report.ok and report.surfaces.tampered == [f"fact {ids[0]}"]


def test_a_swapped_window_or_a_forged_closed_column_is_refused(palace: Palace) -> None:
    ids = _add_all(palace)
    with sqlite3.connect(_db(palace)) as connection:
        # An open fact made to read closed (the column a query trusts) and a window moved between two facts.
        connection.execute("UPDATE kg_facts SET valid_to = 'closed' WHERE id = ?", (ids[3],))
        [(a,), (b,)] = connection.execute(
            "SELECT meta_json FROM kg_facts WHERE id IN (?, ?) ORDER BY seq", (ids[0], ids[4])
        ).fetchall()
        document = json.loads(b)
        document["window"] = json.loads(a)["window"]
        moved = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
        connection.execute("UPDATE kg_facts SET meta_json = ? WHERE id = ?", (moved, ids[4]))
    with palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        report = store.verify()
    assert not report.ok
    assert report.surfaces.tampered == [f"fact {ids[4]}"]  # its tag covers the meta: the window cannot move
    assert report.surfaces.mirror_drift == [f"fact {ids[3]}"]  # the column disagrees with the covered flag
    with palace.open_vault("default", HashEmbedder(), read_only=True) as store, pytest.raises(FactTampered):
        KnowledgeGraph(store).query("birch")  # a read through the forged column is refused, not answered


def test_an_older_vault_is_migrated_once_on_a_writable_open(palace: Palace) -> None:
    ids = _legacy_vault(palace)
    before = _answers(palace)
    with palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        assert any("window migration pending" in line for line in store.unhealed)
    assert all(d.encode() in _raw(palace) for d in DATES)  # the read-only open changed nothing
    with palace.open_vault("default", HashEmbedder()) as store:
        assert any("sealed the validity windows and details of 5" in line for line in store.healed)
        assert store.verify().ok
    assert [d for d in DATES if d.encode() in _raw(palace)] == []
    assert [e for e in EXTRACTORS if e.encode() in _raw(palace)] == []
    assert _details_in_clear(palace) == [False] * 5
    assert _answers(palace) == before
    with sqlite3.connect(_db(palace)) as connection:
        labels = Counter(str(r) for (r,) in connection.execute("SELECT record_id FROM audit"))
        marker = connection.execute("SELECT value FROM meta WHERE key = 'kg_windows'").fetchone()
    assert all(labels[f"kg/{i}"] == 2 for i in ids)  # the write, then exactly one migration record
    assert labels[window_migration.MIGRATION_LABEL] == 1 and bytes(marker[0]) == b"sealed-v2"
    with palace.open_vault("default", HashEmbedder()) as store:
        assert not any("validity windows" in line for line in store.healed)  # never twice


class _Crash(Exception):
    pass


def test_a_crash_between_batches_resumes_and_migrates_every_fact_exactly_once(
    palace: Palace, monkeypatch: pytest.MonkeyPatch
) -> None:
    ids = _legacy_vault(palace)
    before = _answers(palace)
    monkeypatch.setattr(window_migration, "MIGRATION_BATCH", 2)
    real = window_migration.encode_fact
    calls = {"n": 0}

    def crashing(*args, **kwargs):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 4:  # inside the second batch: the first batch is committed, the second is not
            raise _Crash
        return real(*args, **kwargs)

    monkeypatch.setattr(window_migration, "encode_fact", crashing)
    with pytest.raises(_Crash):
        palace.open_vault("default", HashEmbedder())
    with sqlite3.connect(_db(palace)) as connection:
        shapes = ["window" in json.loads(m) for (m,) in connection.execute("SELECT meta_json FROM kg_facts")]
    assert shapes == [True, True, False, False, False]
    assert _answers(palace) == before  # both shapes read correctly in between
    monkeypatch.setattr(window_migration, "encode_fact", real)
    with palace.open_vault("default", HashEmbedder()) as store:
        assert any("sealed the validity windows and details of 3" in line for line in store.healed)
        assert store.verify().ok
    with sqlite3.connect(_db(palace)) as connection:
        labels = Counter(str(r) for (r,) in connection.execute("SELECT record_id FROM audit"))
    assert all(labels[f"kg/{i}"] == 2 for i in ids)
    assert _answers(palace) == before


def test_a_forged_row_stops_the_migration_and_is_named(palace: Palace) -> None:
    ids = _legacy_vault(palace)
    with sqlite3.connect(_db(palace)) as connection:
        connection.execute("UPDATE kg_facts SET valid_from = '1900-01-01T00:00:00.000000Z' WHERE id = ?", (ids[0],))
    with palace.open_vault("default", HashEmbedder()) as store:
        assert any("window migration stopped after 0 fact(s)" in line and ids[0] in line for line in store.unhealed)
    with sqlite3.connect(_db(palace)) as connection:
        assert connection.execute("SELECT value FROM meta WHERE key = 'kg_windows'").fetchone() is None
        shapes = ["window" in json.loads(m) for (m,) in connection.execute("SELECT meta_json FROM kg_facts")]
    assert shapes == [False] * 5  # nothing laundered, nothing of the batch written


def test_a_closed_flag_that_disagrees_with_its_window_is_refused_even_under_a_valid_tag(palace: Palace) -> None:
    """Defence in depth: a row re-tagged with the vault's own key (a buggy writer, or one holding the key) whose
    covered ``closed`` flag and mirror column say open while its sealed window is closed is refused on read."""
    from undercroft_store.memory.kg.facts import fact_tag

    ids = _add_all(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        context = store._context
        row = context.connection.execute(
            "SELECT meta_json, terms, value FROM kg_facts WHERE id = ?", (ids[0],)
        ).fetchone()
        document = json.loads(bytes(row[0]))
        assert document["closed"] is True
        document["closed"] = False
        meta = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
        tag = fact_tag(context, ids[0], meta, bytes(row[1]), bytes(row[2]))
        context.connection.execute(
            "UPDATE kg_facts SET meta_json = ?, valid_to = NULL, tag = ? WHERE id = ?", (meta, tag, ids[0])
        )
        with pytest.raises(FactTampered, match="does not open"):
            KnowledgeGraph(store).get(ids[0])


def test_opened_windows_are_reused_per_tag_and_a_changed_fact_is_opened_again(palace: Palace) -> None:
    ids = _add_all(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        graph = KnowledgeGraph(store)
        assert "harrowgate" in [f.object for f in graph.query("alder", as_of="2000-01-01")]
        assert ids[1] in store._context.kg_window_cache  # opened once, kept under the row's tag
        graph.invalidate(ids[1], ended="1999-01-01")  # the row's tag changes with its window
        assert "harrowgate" not in [f.object for f in graph.query("alder", as_of="2000-01-01")]
        assert "harrowgate" in [f.object for f in graph.query("alder", as_of="1998-01-01")]
    with palace.open_vault("default", HashEmbedder()) as store:
        assert store._context.kg_window_cache == {}  # per handle: nothing survives a close


def test_a_sealed_v1_vault_has_its_details_sealed_once_on_a_writable_open(palace: Palace) -> None:
    ids = _v1_vault(palace)
    before = _answers(palace)
    assert before["details"][1] == (EXTRACTORS[1], 0.35, "background", (4, 41), True)  # v1 rows decode
    with palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        assert any("window migration pending" in line for line in store.unhealed)
    assert _details_in_clear(palace) == [True] * 5  # the read-only open changed nothing
    with palace.open_vault("default", HashEmbedder()) as store:
        assert any("sealed the validity windows and details of 5" in line for line in store.healed)
        assert store.verify().ok
    assert _details_in_clear(palace) == [False] * 5
    assert [e for e in EXTRACTORS if e.encode() in _raw(palace)] == []  # VACUUM: the old pages left the file
    assert _answers(palace) == before
    with sqlite3.connect(_db(palace)) as connection:
        labels = Counter(str(r) for (r,) in connection.execute("SELECT record_id FROM audit"))
        marker = connection.execute("SELECT value FROM meta WHERE key = 'kg_windows'").fetchone()
    assert all(labels[f"kg/{i}"] == 2 for i in ids) and bytes(marker[0]) == b"sealed-v2"


def test_a_detail_forged_back_into_a_sealed_v2_meta_is_an_integrity_verdict(palace: Palace) -> None:
    """A row edit that adds a clear ``grounding`` to a fully sealed fact's meta (to override the sealed one in the
    reader) breaks the tag: the fact is tampered, never read with the forged verdict."""
    ids = _add_all(palace)
    with sqlite3.connect(_db(palace)) as connection:
        [meta] = connection.execute("SELECT meta_json FROM kg_facts WHERE id = ?", (ids[1],)).fetchone()
        forged = json.loads(meta) | {"confidence": 1.0, "extractor": "x", "grounding": "stated", "span": None}
        connection.execute(
            "UPDATE kg_facts SET meta_json = ? WHERE id = ?",
            (json.dumps(forged, sort_keys=True, separators=(",", ":")).encode(), ids[1]),
        )
    with palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        report = store.verify()
        assert not report.ok and report.surfaces.tampered == [f"fact {ids[1]}"]
        with pytest.raises(FactTampered):
            KnowledgeGraph(store).query("alder", grounding="stated")
