"""verify's single chain fold and chunked row scan: same verdicts as the two-replay form, every leg still run."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.integrity.verify import _FETCH, _replay_and_place
from undercroft_vault import (
    GENESIS,
    Anchor,
    AnchorPosition,
    AuditRow,
    SecretBytes,
    derive_vault_keys,
    locate_anchor,
    replay,
)

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

_KEYS = derive_vault_keys(SecretBytes(bytes(range(32))), "verify-perf", bytes(32))


def _rows(n: int) -> list[AuditRow]:
    return [AuditRow(f"drawer/{i}", bytes([i % 256]) * 32, f"2026-05-01T09:00:{i % 60:02d}.000000Z") for i in range(n)]


@settings(max_examples=150, deadline=None)
@given(n=st.integers(0, 12), offset=st.integers(-1, 14), forged=st.booleans())
def test_one_fold_places_the_anchor_exactly_as_locate_anchor(n: int, offset: int, forged: bool) -> None:
    rows = _rows(n)
    count = max(0, offset)
    head_there = replay(_KEYS, rows[:count]) if count <= n else bytes(32)
    anchor = Anchor(bytes(32 * [7]) if forged else head_there, count)
    head, position = _replay_and_place(_KEYS, rows, anchor)
    assert head == replay(_KEYS, rows)
    assert position is locate_anchor(_KEYS, rows, anchor)


def test_the_fold_names_each_position() -> None:
    rows = _rows(5)
    assert _replay_and_place(_KEYS, rows, Anchor(replay(_KEYS, rows), 5))[1] is AnchorPosition.EQUAL
    assert _replay_and_place(_KEYS, rows, Anchor(replay(_KEYS, rows[:2]), 2))[1] is AnchorPosition.BEHIND
    assert _replay_and_place(_KEYS, rows, Anchor(GENESIS, 0))[1] is AnchorPosition.BEHIND
    assert _replay_and_place(_KEYS, rows, Anchor(replay(_KEYS, rows[:2]), 3))[1] is AnchorPosition.ABSENT
    assert _replay_and_place(_KEYS, rows, Anchor(replay(_KEYS, rows), 6))[1] is AnchorPosition.ABSENT
    assert _replay_and_place(_KEYS, [], Anchor(GENESIS, 0)) == (GENESIS, AnchorPosition.EQUAL)


def _drawer(index: int) -> Drawer:
    return Drawer(
        id=append_drawer_id("life", "car", index),
        content=f"verbatim memory number {index}",
        wing="life",
        room="car",
        chunk_index=index,
        id_recipe="append",
        added_by="test",
        filed_at="2026-05-01T09:00:00Z",
    )


def test_every_leg_still_fires_across_fetch_chunks(palace: Palace, embedder: HashEmbedder, home: Path) -> None:
    n = _FETCH + 7  # the tampered rows sit in the second fetch
    with palace.open_vault("default", embedder) as store:
        results = store.write([DrawerWrite(_drawer(i)) for i in range(n)], screening=Screen())
        clean = store.verify()
        assert clean.ok and clean.records_checked == n
    ids = [r.id for r in results]
    raw = sqlite3.connect(home / "vaults" / "default" / "vault.db", isolation_level=None)
    content = bytearray(raw.execute("SELECT content FROM drawers WHERE id = ?", (ids[-1],)).fetchone()[0])
    content[-1] ^= 1
    raw.execute("UPDATE drawers SET content = ? WHERE id = ?", (bytes(content), ids[-1]))
    embedding = bytearray(raw.execute("SELECT embedding FROM drawers WHERE id = ?", (ids[-2],)).fetchone()[0])
    embedding[-1] ^= 1
    raw.execute("UPDATE drawers SET embedding = ? WHERE id = ?", (bytes(embedding), ids[-2]))
    raw.execute("UPDATE drawers SET room = 'boat' WHERE id = ?", (ids[-3],))
    raw.execute("UPDATE audit SET tag = ? WHERE seq = 3", (bytes(32),))
    raw.close()
    with palace.open_vault("default", embedder, read_only=True) as store:
        report = store.verify()
    assert report.records_checked == n
    assert report.tampered == [ids[-1]]
    assert report.embedding_failures == [ids[-2]]
    assert report.mirror_drift == [ids[-3]]
    assert not report.audit_chain_ok and "do not reproduce the committed head" in report.chain_detail
    assert report.stale_records == [ids[2]] and not report.ok
