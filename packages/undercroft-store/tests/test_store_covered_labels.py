"""The served-row rule's covered labels, memoised per handle (issue 19): a warm read compares the row's clear
columns with one lookup, and the memo answers only under the keys and blind index it was computed with.

A poisoned memo entry stands in for a label computed under other keys: it must make the read a verdict while it
is in force (the memo is consulted) and be gone after a rotation; a handle whose blind secret changes (an adopted
id key) never serves a label of the old secret; a mirror edited after a warm read is still refused.
"""

from __future__ import annotations

import sqlite3
from dataclasses import replace
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_core.drawer import Drawer
from undercroft_store import DrawerWrite, Palace, RecordTampered, Screen
from undercroft_store.integrity.rotation import rotate_context
from undercroft_store.kernel._internal.meta_at_rest import covered_labels
from undercroft_store.kernel.id_key import adopt_id_key, export_id_key

EMBEDDER = HashEmbedder()


@pytest.mark.parametrize("level", ["sealed", "hmac-only"])
def test_a_rotation_drops_every_covered_label(home: Path, level: str) -> None:
    with Palace(home) as palace:
        palace.init(level=level)
        with palace.open_vault("default", EMBEDDER) as store:
            store.remember("the lighthouse keeper logs every storm", wing="life", room="sea", added_by="t")
            drawer = store.hydrate_many([1])[1]
            context = store._context
            assert context.covered_memo is not None and context.covered_memo[0] is context.keys
            names = (drawer.wing, drawer.room, drawer.kind, drawer.supersedes)
            context.covered_memo[2][names] = (b"stale", *context.covered_memo[2][names][1:])  # a label of other keys
            with pytest.raises(RecordTampered, match="clear wing column"):
                store.hydrate_many([1])  # premise: a warm read is answered from the memo
            rotate_context(context, palace._master_key())
            assert store.hydrate_many([1])[1].content == drawer.content  # recomputed under the new keys
            assert context.covered_memo[0] is context.keys and context.covered_memo[2][names][0] != b"stale"
        assert context.covered_memo is None  # nothing outlives the handle


def test_a_new_blind_secret_never_reuses_a_label_of_the_old_one(home: Path) -> None:
    drawer = Drawer(
        id="drawer_" + "0" * 32, content="Alder saw the ferry leave at dusk.", wing="casefiles", room="witnesses",
        chunk_index=0, id_recipe="append", added_by="t", filed_at="2024-01-01T00:00:00Z",
    )  # fmt: skip
    with Palace(home) as palace:
        palace.init(level="sealed")
        palace.create_vault("donor", level="sealed")
        palace.create_vault("copy", level="sealed")
        with palace.open_vault("donor", EMBEDDER) as donor:
            key = export_id_key(donor)
            theirs = covered_labels(donor._context, drawer)
        with palace.open_vault("copy", EMBEDDER) as copy:
            mine = covered_labels(copy._context, drawer)  # filled under the copy's own secret
            assert mine != theirs  # premise: two vaults blind the same names apart
            adopt_id_key(copy, key)
            assert covered_labels(copy._context, drawer) == theirs
            written = replace(drawer, id=copy.drawer_ids.append("casefiles", "witnesses", 0))
            copy.write([DrawerWrite(written)], screening=Screen())
            assert copy.get(written.id).content == drawer.content
            assert copy.hydrate_many([1])[1].id == written.id


@pytest.mark.parametrize("level", ["sealed", "hmac-only"])
def test_a_mirror_edited_after_a_warm_read_is_refused(home: Path, level: str) -> None:
    with Palace(home) as palace:
        palace.init(level=level)
        with palace.open_vault("default", EMBEDDER) as store:
            store.remember("the ferry leaves at nine", wing="life", room="sea", added_by="t")
            store.remember("the deploy runbook moved", wing="work", room="ops", added_by="t")
            store.hydrate_many([1, 2])
            store.hydrate_many([1, 2])  # warm: both rows' labels are in the memo
            raw = sqlite3.connect(home / "vaults" / "default" / "vault.db", isolation_level=None)
            raw.execute("UPDATE drawers SET wing = (SELECT wing FROM drawers WHERE seq = 2) WHERE seq = 1")
            raw.close()
            with pytest.raises(RecordTampered, match="clear wing column"):
                store.hydrate_many([1, 2])
