"""The handle's change feed (issue 19 item 3): the seqs each kind of change touched, nothing for a rolled-back
write, "unknown" after another connection's commit; and the caches that follow it (embeddings, lexicon,
postings, scope answers) equal a fresh rebuild after every change, including a raw edit behind their back."""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from undercroft_core import Drawer, HashEmbedder
from undercroft_core.vocabulary import QUARANTINE_WING
from undercroft_store import DrawerWrite, Palace, RecordTampered, Screen, VaultStore
from undercroft_store.governance.forgetting import forget
from undercroft_store.integrity.rotation import rotate_context
from undercroft_store.kernel.screening import Bypass, BypassReason
from undercroft_store.search import EmbeddingCache, Searcher, SearchRequest
from undercroft_store.search._internal.change_feed import change_feed

from .conftest import appended_drawer

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

EMBEDDER = HashEmbedder()
SIZE = 400  # above the small-vault floor (256): single changes are patched, not rebuilt
_WORDS = [f"{a}{b}{c}" for a in "bcdfgk" for b in "aeiou" for c in "lmnrst"]
SCOPES = [
    {},
    {"wing": "w"},
    {"wing": "w", "room": "r1"},
    {"room": "r2"},
    {"include_quarantine": True},
    {"wing": QUARANTINE_WING},
]


def _drawer(index: int, text: str, wing: str = "w") -> Drawer:
    room = f"r{index % 5}"
    return appended_drawer(index, text, wing=wing, room=room, filed_at="2024-01-01T00:00:00Z")


@pytest.fixture
def vault(tmp_path: Path) -> Iterator[tuple[Palace, VaultStore]]:
    rng = random.Random(3)
    with Palace(tmp_path) as palace:
        palace.create_vault("v", level="sealed")
        with palace.open_vault("v", EMBEDDER) as store:
            texts = [" ".join(rng.choices(_WORDS, k=10)) for _ in range(SIZE)]
            store.write([DrawerWrite(_drawer(i, text)) for i, text in enumerate(texts)], screening=Screen())
            yield palace, store


def test_the_feed_names_what_each_change_touched(vault: tuple[Palace, VaultStore]) -> None:
    palace, store = vault
    feed = change_feed(store)
    assert feed is not None and change_feed(store) is feed  # one feed per handle
    _, position = feed.since(None)
    seqs = store.scope_seqs().tolist()

    store.write([DrawerWrite(_drawer(SIZE, "a fresh drawer"))], screening=Screen())
    named, position = feed.since(position)
    assert named == {max(store.scope_seqs().tolist())}

    store.write([DrawerWrite(_drawer(3, "updated in place"))], screening=Screen())
    named, position = feed.since(position)
    assert named == {seqs[3]}

    store.delete(_drawer(5, "x").id)
    named, position = feed.since(position)
    assert named == {seqs[5]}

    forget(store, [_drawer(6, "x").id], reason="request")
    named, position = feed.since(position)
    assert named == {seqs[6]}

    connection = store._context.connection
    connection.execute("BEGIN IMMEDIATE")
    connection.execute("DELETE FROM drawers WHERE seq = ?", (seqs[7],))
    connection.execute("ROLLBACK")  # a write that rolled back touched nothing
    named, position = feed.since(position)
    assert named == set()

    rotate_context(store._context, palace._master_key())  # every row re-keyed
    named, position = feed.since(position)
    assert named is not None and set(store.scope_seqs(include_quarantine=True).tolist()) <= named


def test_another_connection_s_commit_makes_the_feed_unknown(vault: tuple[Palace, VaultStore], tmp_path: Path) -> None:
    _, store = vault
    feed = change_feed(store)
    assert feed is not None
    _, position = feed.since(None)
    with sqlite3.connect(tmp_path / "vaults" / "v" / "vault.db", isolation_level=None) as raw:
        raw.execute("UPDATE drawers SET room = room WHERE seq = 1")  # another connection's commit: no trigger
    named, later = feed.since(position)
    assert named is None  # the readers fall back to the full diff
    assert feed.since(later) == (set(), later)  # and from there on follow the feed again


def _assert_equals_a_rebuild(searcher: Searcher, store: VaultStore) -> None:
    searcher.warm()
    fresh = Searcher(store, EMBEDDER)
    fresh.warm()
    seqs, unit = searcher.cache.load(store)
    fresh_seqs, fresh_unit = EmbeddingCache().load(store)
    assert np.array_equal(seqs, fresh_seqs) and unit.tobytes() == fresh_unit.tobytes()
    for scope in SCOPES:
        assert searcher._scopes.scope_seqs(**scope).tolist() == store.scope_seqs(**scope).tolist(), scope
    for query in ("bal cem dir", "fol gun kas", "a fresh drawer", "updated in place"):
        request = SearchRequest(query, limit=10)
        assert repr(searcher.search(request)) == repr(fresh.search(request))


def test_caches_following_the_feed_equal_a_rebuild_after_every_change(vault: tuple[Palace, VaultStore]) -> None:
    palace, store = vault
    searcher = Searcher(store, EMBEDDER)
    searcher.warm()
    for scope in SCOPES:
        searcher._scopes.scope_seqs(**scope)  # every scope answer memoised, so each is patched below
    filled = searcher.lexicon.filled
    changes = [
        lambda: store.write([DrawerWrite(_drawer(SIZE, "a fresh drawer"))], screening=Screen()),
        lambda: store.write([DrawerWrite(_drawer(3, "updated in place"))], screening=Screen()),
        lambda: store.delete(_drawer(5, "x").id),
        lambda: forget(store, [_drawer(6, "x").id], reason="request"),
        lambda: store.write(
            [DrawerWrite(_drawer(SIZE + 1, "held for review", wing=QUARANTINE_WING))],
            screening=Bypass(BypassReason.ALREADY_DIVERTED),
        ),
        lambda: store.write([DrawerWrite(_drawer(i, f"batch {i}")) for i in range(10, 20)], screening=Screen()),
    ]
    for change in changes:
        change()
        _assert_equals_a_rebuild(searcher, store)
    assert searcher.lexicon.resets == 0 and searcher.lexicon.filled < filled + 40  # patched, never refilled
    rotate_context(store._context, palace._master_key())
    _assert_equals_a_rebuild(searcher, store)


def test_a_raw_edit_behind_the_feed_is_still_re_read_verified(vault: tuple[Palace, VaultStore], tmp_path: Path) -> None:
    _, store = vault
    searcher = Searcher(store, EMBEDDER)
    searcher.warm()
    target = _drawer(8, "x").id
    with sqlite3.connect(tmp_path / "vaults" / "v" / "vault.db", isolation_level=None) as raw:
        tag = bytearray(raw.execute("SELECT tag FROM drawers WHERE id = ?", (target,)).fetchone()[0])
        tag[0] ^= 0x01
        raw.execute("UPDATE drawers SET tag = ? WHERE id = ?", (bytes(tag), target))
    with pytest.raises(RecordTampered, match=target):
        searcher.warm()
