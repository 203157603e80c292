"""The sealed search snapshot (issue 19 item 4): a fast open that changes nothing a search returns.

Each test works on a copy of one sealed vault of 1,100 drawers (above `MIN_DRAWERS`, so its first search stores
a snapshot). The attacks are made on the raw rows with sqlite3: a flipped byte, a dropped or swapped part, an
older snapshot restored over a newer state, another vault's snapshot, a drawer edited beneath a valid snapshot.
"""

from __future__ import annotations

import random
import shutil
import sqlite3
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.errors import RecordTampered
from undercroft_store.governance.forgetting import forget
from undercroft_store.integrity.repair import repair_vault
from undercroft_store.integrity.rotation import rotate_vault
from undercroft_store.kernel import snapshot_table
from undercroft_store.kernel.tier_tables import Envelope
from undercroft_store.search import Searcher, SearchRequest
from undercroft_store.search._internal import snapshot as snapshot_module
from undercroft_store.store import VaultStore

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

DRAWERS = 1100
WORDS = [f"{a}{b}" for a in ("vel", "mor", "tas", "quin", "dor", "lum", "sar") for b in ("ak", "en", "ith", "o", "ur")]
#: A drawer whose words no other drawer holds: what a forget must take out of the snapshot.
SECRET = "obsidianharbour quaylantern fogledger"
QUERIES = [
    "velak moren tasith",
    "the quino and the dorur",
    "lumak sarith velo",
    "Kinder spielen im Garten",
    "obsidianharbour",
    "quinen lumur",
]


def _texts(count: int) -> list[str]:
    rng = random.Random(19)
    found = []
    for index in range(count):
        words = rng.choices(WORDS, k=rng.randrange(6, 18))
        if index % 7 == 0:
            found.append("Die Kinder spielen im Garten und " + " ".join(words))
        elif index % 3 == 0:
            found.append("the " + " and the ".join(words) + " on 3 March 2023")
        else:
            found.append(" ".join(words))
    found[DRAWERS // 2] = SECRET
    return found


def _writes(texts: list[str]) -> list[DrawerWrite]:
    return [
        DrawerWrite(
            Drawer(
                id=append_drawer_id("w" if index % 2 else "x", f"room-{index % 9}", index),
                content=text,
                wing="w" if index % 2 else "x",
                room=f"room-{index % 9}",
                chunk_index=index,
                id_recipe="append",
                added_by="test",
                filed_at="2024-01-01T00:00:00Z",
            )
        )
        for index, text in enumerate(texts)
    ]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    home = tmp_path_factory.mktemp("snapshot-home")
    with Palace(home) as palace:
        palace.create_vault("v", level="sealed")
        with palace.open_vault("v", HashEmbedder()) as store:
            store.write(_writes(_texts(DRAWERS)), screening=Screen())
    return home


@pytest.fixture
def home(built: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "home"
    shutil.copytree(built, copy)
    return copy


@contextmanager
def _opened(home: Path) -> Iterator[tuple[VaultStore, Searcher]]:
    with Palace(home) as palace, palace.open_vault("v", HashEmbedder()) as store:
        yield store, Searcher(store, HashEmbedder())


def _requests() -> list[SearchRequest]:
    found = [SearchRequest(query, limit=10) for query in QUERIES]
    found += [SearchRequest(QUERIES[0], limit=5, offset=5), SearchRequest(QUERIES[1], wing="w", limit=10)]
    found += [SearchRequest(QUERIES[2], room="room-3", limit=10), SearchRequest(QUERIES[1], when="2023", limit=10)]
    return found


def _hits(searcher: Searcher) -> list[str]:
    return [repr(searcher.search(request).hits) for request in _requests()]


def _from_scratch(home: Path) -> list[str]:
    """The hits of a read-only searcher (it stores nothing) over the vault with its snapshot removed first."""
    with sqlite3.connect(_db(home)) as connection:
        snapshot_table.drop_rows(connection)
    with Palace(home) as palace, palace.open_vault("v", HashEmbedder(), read_only=True) as store:
        searcher = Searcher(store, HashEmbedder())
        found = _hits(searcher)
        assert searcher.snapshot.loaded == 0 and searcher.snapshot.stored == 0
    return found


def _db(home: Path) -> Path:
    return home / "vaults" / "v" / "vault.db"


def _sql(home: Path, statement: str, *args: object) -> None:
    with sqlite3.connect(_db(home)) as connection:
        connection.execute(statement, args)


def _parts(home: Path) -> list[tuple[int, bytes]]:
    with sqlite3.connect(_db(home)) as connection:
        return snapshot_table.read_parts(connection)


def _store_one(home: Path) -> list[str]:
    """Open, search (the full fill stores a snapshot), close: the hits that search returned."""
    with _opened(home) as (_, searcher):
        found = _hits(searcher)
        assert searcher.snapshot.stored == 1 and searcher.snapshot.loaded == 0
    assert _parts(home)
    return found


def test_a_snapshot_open_returns_byte_identical_hits_and_opens_no_drawer_to_fill(home: Path) -> None:
    fresh = _store_one(home)
    with _opened(home) as (_, searcher):
        taken = _hits(searcher)
        assert searcher.snapshot.loaded == 1 and not searcher.snapshot.refusals
        assert searcher.lexicon.filled == 0, "the lexicon was filled from the snapshot, not from drawers"
        assert searcher.cache.reopened == 0
        # ... and the caches follow a write from there exactly as a full fill's would.
        searcher._store.remember("velak moren tasith fresh words", wing="w", room="room-1", added_by="test")
        after = _hits(searcher)
    assert taken == fresh
    with _opened(home) as (_, searcher):  # the snapshot is now stale: refused, rebuilt from the drawers
        assert _hits(searcher) == after
        assert searcher.snapshot.refusals == {"stale": 1} and searcher.snapshot.stored == 1


def test_a_flipped_byte_is_detected_counted_and_rebuilt(home: Path) -> None:
    fresh = _store_one(home)
    (part, blob), *_ = _parts(home)
    flipped = bytearray(blob)
    flipped[len(blob) // 2] ^= 0x01
    _sql(home, f"UPDATE {snapshot_table.SNAPSHOT_TABLE} SET blob = ? WHERE part = ?", bytes(flipped), part)
    with _opened(home) as (_, searcher):
        assert _hits(searcher) == fresh
        assert searcher.snapshot.refusals == {"seal": 1} and searcher.snapshot.loaded == 0
        assert searcher.snapshot.stored == 1, "the rebuild stores a good snapshot again"
    with _opened(home) as (_, searcher):
        assert _hits(searcher) == fresh and searcher.snapshot.loaded == 1


def test_a_dropped_swapped_or_foreign_part_is_refused(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot_module, "PART_BYTES", 64 << 10)  # several parts
    fresh = _store_one(home)
    parts = _parts(home)
    assert len(parts) >= 3
    table = snapshot_table.SNAPSHOT_TABLE
    attacks = [
        [f"DELETE FROM {table} WHERE part = {len(parts) - 1}"],  # the last part gone: the count in each AAD moved
        [  # two parts swapped
            f"UPDATE {table} SET part = -1 WHERE part = 1",
            f"UPDATE {table} SET part = 1 WHERE part = 2",
            f"UPDATE {table} SET part = 2 WHERE part = -1",
        ],
    ]
    for statements in attacks:
        with sqlite3.connect(_db(home)) as connection:
            connection.execute(f"DELETE FROM {table}")
            connection.executemany(f"INSERT INTO {table} (part, blob) VALUES (?, ?)", parts)
            for statement in statements:
                connection.execute(statement)
        with _opened(home) as (_, searcher):
            assert _hits(searcher) == fresh
            assert searcher.snapshot.refusals == {"seal": 1}, statements
            assert searcher.snapshot.stored == 1


def test_two_snapshots_parts_never_combine(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(snapshot_module, "PART_BYTES", 64 << 10)
    _store_one(home)
    older = _parts(home)
    with _opened(home) as (store, searcher):
        store.remember("lumak sarith velo", wing="w", room="room-2", added_by="test")
    with _opened(home) as (_, searcher):
        newer = _hits(searcher)
        assert searcher.snapshot.stored == 1
    current = _parts(home)
    assert len(current) == len(older)
    # Part 0 of the older snapshot with the rest of the newer one: every part opens, the payload digest fails.
    _sql(home, f"UPDATE {snapshot_table.SNAPSHOT_TABLE} SET blob = ? WHERE part = 0", older[0][1])
    with _opened(home) as (_, searcher):
        assert _hits(searcher) == newer and searcher.snapshot.refusals == {"torn": 1}


def test_an_older_snapshot_restored_over_a_newer_state_is_refused(home: Path) -> None:
    _store_one(home)
    older = _parts(home)
    with _opened(home) as (store, searcher):
        store.remember("quinen lumur in a later drawer", wing="x", room="room-4", added_by="test")
    table = snapshot_table.SNAPSHOT_TABLE
    with sqlite3.connect(_db(home)) as connection:
        connection.execute(f"DELETE FROM {table}")
        connection.executemany(f"INSERT INTO {table} (part, blob) VALUES (?, ?)", older)
    fresh = _from_scratch(home)
    with sqlite3.connect(_db(home)) as connection:
        connection.executemany(f"INSERT INTO {table} (part, blob) VALUES (?, ?)", older)
    with _opened(home) as (_, searcher):
        assert _hits(searcher) == fresh
        assert searcher.snapshot.refusals == {"stale": 1} and searcher.snapshot.loaded == 0


def test_another_vaults_snapshot_is_refused(home: Path) -> None:
    # Vault "u" holds the same drawers, so only the vault binding (the AAD's vault id) tells its snapshot apart.
    with Palace(home) as palace:
        palace.create_vault("u", level="sealed")
        with palace.open_vault("u", HashEmbedder()) as store:
            store.write(_writes(_texts(DRAWERS)), screening=Screen())
            Searcher(store, HashEmbedder()).search(SearchRequest(QUERIES[0]))
    with sqlite3.connect(home / "vaults" / "u" / "vault.db") as connection:
        foreign = list(connection.execute(f"SELECT part, blob FROM {snapshot_table.SNAPSHOT_TABLE}"))
    assert foreign
    fresh = _from_scratch(home)
    with sqlite3.connect(_db(home)) as connection:
        snapshot_table.create_table(connection)
        connection.executemany(f"INSERT INTO {snapshot_table.SNAPSHOT_TABLE} VALUES (?, ?)", foreign)
    with _opened(home) as (_, searcher):
        assert _hits(searcher) == fresh and searcher.snapshot.refusals == {"seal": 1}


def test_a_drawer_edited_beneath_a_valid_snapshot_is_still_refused_when_returned(home: Path) -> None:
    _store_one(home)
    # The content bytes of the SECRET drawer are replaced by another drawer's (tag and embedding untouched, so
    # the snapshot still matches every mark): it may draw the row, and the verified read refuses to return it.
    with sqlite3.connect(_db(home)) as connection:
        seq = DRAWERS // 2 + 1
        other = connection.execute("SELECT content FROM drawers WHERE seq = 1").fetchone()[0]
        connection.execute("UPDATE drawers SET content = ? WHERE seq = ?", (other, seq))
    with _opened(home) as (_, searcher):
        with pytest.raises(RecordTampered):
            searcher.search(SearchRequest("obsidianharbour quaylantern", limit=5))
        assert searcher.snapshot.loaded == 1


def _snapshot_plaintext(home: Path) -> bytes:
    """The stored snapshot opened with the vault's own keys (what an attacker without them cannot do)."""
    with _opened(home) as (store, _):
        envelope = Envelope(store._context)
        parts = _parts(home)
        opened = [envelope.open(snapshot_table.part_domain(i, len(parts)), blob) for i, blob in parts]
    assert all(plain is not None for plain in opened)
    return b"".join(plain for plain in opened if plain is not None)


def test_forget_empties_the_snapshot_and_the_next_one_holds_none_of_the_forgotten_terms(home: Path) -> None:
    _store_one(home)
    assert b"quaylantern" in _snapshot_plaintext(home)  # the check below can fail: the term was in it
    with _opened(home) as (store, searcher):
        searcher.search(SearchRequest(QUERIES[0]))
        assert searcher.snapshot.loaded == 1
        secret = next(d for d in store.hydrate([DRAWERS // 2 + 1]))
        assert secret.content == SECRET
        forget(store, [secret.id], reason="test")
        assert _parts(home) == [], "the delete's own transaction emptied the snapshot"
        # This handle's lexicon still interned the terms; an export carries only the terms held drawers hold.
        searcher.search(SearchRequest(QUERIES[1]))
        seqs, _ = searcher.cache.load(store)
        image = searcher.lexicon.export(seqs.tolist())
        assert image is not None and "quaylantern" in searcher.lexicon.terms
        assert not {"obsidianharbour", "quaylantern", "fogledger"} & set(image.terms)
    with _opened(home) as (_, searcher):
        searcher.search(SearchRequest(QUERIES[0]))
        assert searcher.snapshot.stored == 1
    plain = _snapshot_plaintext(home)
    assert not any(word.encode() in plain for word in SECRET.split())
    raw = b"".join(blob for _, blob in _parts(home))
    assert not any(word.encode() in raw for word in SECRET.split())


def test_no_content_word_is_in_clear_in_the_stored_snapshot(home: Path) -> None:
    _store_one(home)
    raw = b"".join(blob for _, blob in _parts(home))
    plain = _snapshot_plaintext(home)
    # Words of five letters or more: a shorter one could turn up in ciphertext by chance.
    words = {word for word in (*WORDS, *SECRET.split(), "Kinder", "Garten", "room-3") if len(word) >= 5}
    assert all(word.lower().encode() in plain for word in words if word != "room-3")  # the grep can fail
    assert b"room-3" in plain
    assert not any(word.encode() in raw for word in words)
    assert not any(word.encode() in _db(home).read_bytes() for word in SECRET.split())


def test_rotation_drops_the_snapshot_and_the_old_keys_snapshot_is_refused(home: Path) -> None:
    fresh = _store_one(home)
    old = _parts(home)
    with Palace(home) as palace:
        rotate_vault(palace, "v", HashEmbedder())
    assert _parts(home) == [], "rotation's transaction emptied the snapshot"
    with sqlite3.connect(_db(home)) as connection:
        connection.executemany(f"INSERT INTO {snapshot_table.SNAPSHOT_TABLE} VALUES (?, ?)", old)
    with _opened(home) as (_, searcher):
        assert _hits(searcher) == fresh
        assert searcher.snapshot.refusals == {"seal": 1} and searcher.snapshot.stored == 1
    with _opened(home) as (_, searcher):
        assert _hits(searcher) == fresh and searcher.snapshot.loaded == 1


def test_a_read_only_handle_takes_a_snapshot_and_never_stores_one(home: Path) -> None:
    fresh = _from_scratch(home)
    with Palace(home) as palace, palace.open_vault("v", HashEmbedder(), read_only=True) as store:
        searcher = Searcher(store, HashEmbedder())
        assert _hits(searcher) == fresh and searcher.snapshot.stored == 0
    assert _parts(home) == []
    _store_one(home)
    with Palace(home) as palace, palace.open_vault("v", HashEmbedder(), read_only=True) as store:
        searcher = Searcher(store, HashEmbedder())
        assert _hits(searcher) == fresh and searcher.snapshot.loaded == 1


def test_a_snapshot_of_another_language_layer_is_refused_unparsed(home: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Another build's tokenizer or language vote may read the same words differently: its term bags are not reused.
    fresh = _store_one(home)
    monkeypatch.setattr(snapshot_module.undercroft_core, "__version__", "0.0.0-other")
    with _opened(home) as (_, searcher):
        assert _hits(searcher) == fresh
        assert searcher.snapshot.refusals == {"bound": 1} and searcher.snapshot.stored == 1


def _verify(home: Path) -> list[str]:
    with Palace(home) as palace, palace.open_vault("v", HashEmbedder(), read_only=True) as store:
        report = store.verify()
    assert report.ok == (not report.search_snapshot)
    return report.search_snapshot


def test_verify_names_a_snapshot_that_fails_at_rest_and_repair_deletes_it(
    home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(snapshot_module, "PART_BYTES", 64 << 10)  # several parts, so they can be renumbered
    _store_one(home)
    assert _verify(home) == []
    parts = _parts(home)
    table = snapshot_table.SNAPSHOT_TABLE
    flipped = bytearray(parts[1][1])
    flipped[7] ^= 0x40
    attacks = {
        "seal": [(f"UPDATE {table} SET blob = ? WHERE part = 1", (bytes(flipped),))],
        "renumbered": [(f"UPDATE {table} SET part = 99 WHERE part = {len(parts) - 1}", ())],
    }
    for name, statements in attacks.items():
        with sqlite3.connect(_db(home)) as connection:
            connection.execute(f"DELETE FROM {table}")
            connection.executemany(f"INSERT INTO {table} (part, blob) VALUES (?, ?)", parts)
            for statement, args in statements:
                connection.execute(statement, args)
        findings = _verify(home)
        assert len(findings) == 1 and "fails its seal" in findings[0], name
    # Two snapshots' parts: each opens, the payload digest does not.
    with sqlite3.connect(_db(home)) as connection:
        connection.execute(f"DELETE FROM {table}")
        connection.executemany(f"INSERT INTO {table} (part, blob) VALUES (?, ?)", parts)
    with _opened(home) as (store, searcher):
        store.remember("lumak sarith velo again", wing="w", room="room-2", added_by="test")
    with _opened(home) as (_, searcher):
        _hits(searcher)
        assert searcher.snapshot.stored == 1
    older_head = parts[0][1]
    _sql(home, f"UPDATE {table} SET blob = ? WHERE part = 0", older_head)
    findings = _verify(home)
    assert len(findings) == 1 and "torn" in findings[0]
    # Repair deletes it (the closing verify passes); the next open rebuilds a fresh one.
    with Palace(home) as palace:
        report = repair_vault(palace, "v", HashEmbedder())
    assert report.search_snapshot is not None and "deleted" in report.search_snapshot
    assert report.ok and _parts(home) == []
    _store_one(home)
    assert _verify(home) == []


def test_a_stale_snapshot_is_no_verify_finding_and_repair_keeps_a_sound_one(home: Path) -> None:
    _store_one(home)
    older = _parts(home)
    with _opened(home) as (store, _):
        store.remember("quinen lumur in a later drawer", wing="x", room="room-4", added_by="test")
    table = snapshot_table.SNAPSHOT_TABLE
    with sqlite3.connect(_db(home)) as connection:
        connection.execute(f"DELETE FROM {table}")
        connection.executemany(f"INSERT INTO {table} (part, blob) VALUES (?, ?)", older)
    assert _verify(home) == []  # it lags the rows: derived, refused at load, replaced; not tamper
    with Palace(home) as palace:
        report = repair_vault(palace, "v", HashEmbedder())
    assert report.search_snapshot is None and report.ok
    assert _parts(home) == older


def _pq_hits(home: Path, *, read_only: bool = False) -> tuple[list[str], Searcher]:
    with Palace(home) as palace, palace.open_vault("v", HashEmbedder(), read_only=read_only) as store:
        searcher = Searcher(store, HashEmbedder(), retrieval="pq")
        return _hits(searcher), searcher


def test_a_pq_searcher_takes_the_postings_and_never_the_matrix(home: Path) -> None:
    # A bounded-RAM tier's first search no longer opens every drawer to build the lexical postings: it takes
    # them from the snapshot, leaves the embedding matrix out of RAM, and returns what a from-scratch pq
    # search returns, byte for byte.
    _store_one(home)
    taken, searcher = _pq_hits(home)
    assert searcher.snapshot.loaded == 1 and not searcher.snapshot.refusals
    assert searcher.lexicon.filled == 0, "the lexicon was filled from the snapshot, not from drawers"
    assert searcher.cache._snapshot is None and searcher.cache.rebuilds == 0, "the matrix stayed out of RAM"
    assert searcher.cache.keep_codes is False
    with sqlite3.connect(_db(home)) as connection:
        snapshot_table.drop_rows(connection)
    scratch, cold = _pq_hits(home, read_only=True)
    assert cold.snapshot.loaded == 0 and cold.lexicon.filled == DRAWERS
    assert taken == scratch


def test_a_pq_searcher_refuses_a_stale_snapshot_and_returns_what_the_drawers_say(home: Path) -> None:
    _store_one(home)
    with _opened(home) as (store, _):
        store.remember("velak moren tasith fresh words", wing="w", room="room-1", added_by="test")
    after, searcher = _pq_hits(home, read_only=True)
    assert searcher.snapshot.refusals == {"stale": 1} and searcher.snapshot.loaded == 0
    with sqlite3.connect(_db(home)) as connection:
        snapshot_table.drop_rows(connection)
    assert _pq_hits(home, read_only=True)[0] == after
