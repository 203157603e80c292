"""The search caches follow writes by diffing tags: after each kind of change they equal a fresh rebuild."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_store import DrawerWrite, Palace, RecordTampered, Screen, VaultStore
from undercroft_store.kernel.screening import Bypass, BypassReason
from undercroft_store.kernel.writes import refresh_embeddings
from undercroft_store.search import EmbeddingCache, Searcher, SearchRequest

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

EMBEDDER = HashEmbedder()
SIZE = 600  # above the small-vault floor (256), so a single change is patched, not rebuilt
_WORDS = [f"{a}{b}{c}" for a in "bcdfgk" for b in "aeiou" for c in "lmnrst"]
QUERIES = ["bal cem dir", "fol gun kas", "zqxv lantern", "walnut orchard harvest", "dal fem gir kol"]


def _drawer(index: int, text: str) -> Drawer:
    return Drawer(
        id=append_drawer_id("w", f"r{index % 7}", index),
        content=text,
        wing="w",
        room=f"r{index % 7}",
        chunk_index=index,
        id_recipe="append",
        added_by="test",
        filed_at="2024-01-01T00:00:00Z",
    )


def _id(index: int) -> str:
    return append_drawer_id("w", f"r{index % 7}", index)


def _text(rng: random.Random, words: int = 12) -> str:
    return " ".join(rng.choices(_WORDS, k=words))


@pytest.fixture
def home(tmp_path: Path) -> Iterator[tuple[Path, VaultStore]]:
    rng = random.Random(11)
    with Palace(tmp_path) as palace:
        palace.create_vault("v")
        with palace.open_vault("v", EMBEDDER) as store:
            store.write([DrawerWrite(_drawer(i, _text(rng))) for i in range(SIZE)], screening=Screen())
            yield tmp_path, store


def _bags(searcher: Searcher, store: VaultStore) -> dict[int, tuple[dict[str, int], int, frozenset[str], str]]:
    seqs = store.scope_seqs(include_quarantine=True).tolist()
    entries, _ = searcher.lexicon.entries(store, seqs)
    bags = {}
    for seq, entry in zip(seqs, entries, strict=True):
        assert entry is not None
        cells = np.frombuffer(entry.cells, dtype=np.int64)
        counts = {searcher.lexicon.terms[int(c >> 32)]: int(c & 0xFFFFFFFF) for c in cells.tolist()}
        bags[seq] = (counts, entry.length, entry.scripts, entry.room)
    return bags


def _postings(searcher: Searcher) -> dict[str, list[int]]:
    index = searcher.postings
    assert index is not None
    held = {term: index.holders(term_id).tolist() for term_id, term in enumerate(searcher.lexicon.terms)}
    for seqs in held.values():
        assert seqs == sorted(set(seqs))
    return {term: seqs for term, seqs in held.items() if seqs}


def _assert_equals_a_rebuild(searcher: Searcher, store: VaultStore) -> None:
    searcher.warm()
    fresh = Searcher(store, EMBEDDER)
    fresh.warm()
    assert _bags(searcher, store) == _bags(fresh, store)
    assert _postings(searcher) == _postings(fresh)
    seqs, unit = searcher.cache.load(store)
    fresh_seqs, fresh_unit = EmbeddingCache().load(store)
    assert np.array_equal(seqs, fresh_seqs) and unit.tobytes() == fresh_unit.tobytes()
    for query in QUERIES:
        request = SearchRequest(query, limit=10)
        mine, theirs = searcher.search(request), fresh.search(request)
        assert repr(mine) == repr(theirs) and mine == theirs


def _append(store: VaultStore) -> None:
    store.write([DrawerWrite(_drawer(SIZE, "zqxv lantern walnut orchard harvest"))], screening=Screen())


def _update(store: VaultStore) -> None:
    seqs = store.scope_seqs().tolist()
    store.write([DrawerWrite(_drawer(3, "walnut orchard harvest zqxv"))], screening=Screen())
    assert store.get(_id(3)).content == "walnut orchard harvest zqxv" and store.scope_seqs().tolist() == seqs


def _delete(store: VaultStore) -> None:
    store.delete(_id(5))


def _re_embed(store: VaultStore) -> None:
    rng = np.random.default_rng(3)
    codes = rng.integers(-127, 128, EMBEDDER.dimension, dtype=np.int8)
    packed = np.float32(0.02).astype("<f4").tobytes() + codes.tobytes()
    refresh_embeddings(store._context, [(_id(7), packed)], screening=Bypass(BypassReason.REPAIR))


@pytest.mark.parametrize(
    ("change", "reopened", "patched"),
    [(_append, 1, 1), (_update, 1, 1), (_delete, 0, 1), (_re_embed, 1, 0)],
    ids=["write", "update-in-place", "delete", "repair-re-embed"],
)
def test_each_change_is_patched_and_equals_a_rebuild(
    home: tuple[Path, VaultStore], change: Callable[[VaultStore], None], reopened: int, patched: int
) -> None:
    _, store = home
    searcher = Searcher(store, EMBEDDER)
    assert searcher.warm() == SIZE
    filled = searcher.lexicon.filled
    change(store)
    searcher.search(SearchRequest("walnut orchard", limit=10))
    assert searcher.lexicon.resets == 0 and searcher.lexicon.filled == filled + (1 if patched and reopened else 0)
    assert searcher.cache.reopened == reopened
    assert searcher.postings is not None and searcher.postings.patched == patched
    _assert_equals_a_rebuild(searcher, store)


def test_a_run_of_changes_stays_equal_to_a_rebuild(home: tuple[Path, VaultStore]) -> None:
    _, store = home
    searcher = Searcher(store, EMBEDDER)
    searcher.warm()
    rng = random.Random(4)
    for step in range(12):
        target = 20 + step
        kind = step % 3
        if kind == 0:
            store.write([DrawerWrite(_drawer(target, "walnut " + _text(rng)))], screening=Screen())
        elif kind == 1:
            store.delete(_id(target))
        else:
            codes = np.random.default_rng(step).integers(-127, 128, EMBEDDER.dimension, dtype=np.int8)
            packed = np.float32(0.01).astype("<f4").tobytes() + codes.tobytes()
            refresh_embeddings(store._context, [(_id(target), packed)], screening=Bypass(BypassReason.REPAIR))
        store.write([DrawerWrite(_drawer(SIZE + 10 + step, _text(rng)))], screening=Screen())
        searcher.search(SearchRequest(QUERIES[step % len(QUERIES)], limit=10))
    assert searcher.lexicon.resets == 0
    _assert_equals_a_rebuild(searcher, store)


def test_a_large_change_rebuilds_whole(home: tuple[Path, VaultStore]) -> None:
    _, store = home
    searcher = Searcher(store, EMBEDDER)
    searcher.warm()
    rng = random.Random(9)
    store.write([DrawerWrite(_drawer(i, _text(rng))) for i in range(0, SIZE, 3)], screening=Screen())  # a third
    searcher.search(SearchRequest("walnut orchard", limit=10))
    assert searcher.lexicon.resets == 1 and searcher.cache.reopened == 0
    _assert_equals_a_rebuild(searcher, store)


def _raw(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / "vaults" / "v" / "vault.db", isolation_level=None)


def test_content_tampered_after_the_fill_is_refused_when_returned(home: tuple[Path, VaultStore]) -> None:
    root, store = home
    store.write([DrawerWrite(_drawer(SIZE, "zqxv lantern keeper"))], screening=Screen())
    searcher = Searcher(store, EMBEDDER)
    searcher.warm()
    assert searcher.search(SearchRequest("zqxv lantern keeper", limit=3)).hits[0].content == "zqxv lantern keeper"
    with _raw(root) as raw:  # the tag is untouched: the diff keeps the cached bag
        blob = bytearray(raw.execute("SELECT content FROM drawers WHERE id = ?", (_id(SIZE),)).fetchone()[0])
        blob[-1] ^= 0x01
        raw.execute("UPDATE drawers SET content = ? WHERE id = ?", (bytes(blob), _id(SIZE)))
    with pytest.raises(RecordTampered):
        searcher.search(SearchRequest("zqxv lantern keeper", limit=3))
    assert searcher.lexicon.resets == 0


def test_a_row_whose_tag_changed_is_re_read_verified_and_refused(home: tuple[Path, VaultStore]) -> None:
    root, store = home
    searcher = Searcher(store, EMBEDDER)
    searcher.warm()
    target = _id(8)
    with _raw(root) as raw:
        tag = bytearray(raw.execute("SELECT tag FROM drawers WHERE id = ?", (target,)).fetchone()[0])
        tag[0] ^= 0x01
        raw.execute("UPDATE drawers SET tag = ? WHERE id = ?", (bytes(tag), target))
    with pytest.raises(RecordTampered, match=target):
        searcher.warm()  # the diff re-reads the changed row through the verified path
    with pytest.raises(RecordTampered):
        searcher.search(SearchRequest("walnut orchard", limit=10))
