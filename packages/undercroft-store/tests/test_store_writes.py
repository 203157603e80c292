"""The write choke point: validation with precise messages, screening, dedup, chain in the same transaction."""

from __future__ import annotations

import re
import sqlite3
import warnings
from pathlib import Path

import numpy as np
import pytest
import undercroft_obs as obs
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_obs import names
from undercroft_store import (
    MAX_CONTENT_BYTES,
    Bypass,
    BypassReason,
    DrawerNotFound,
    DrawerWrite,
    EmbedderMismatch,
    EmbeddingRefused,
    InvalidDrawer,
    Palace,
    Screen,
)

from .conftest import appended_drawer

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

STORE_SRC = Path(__file__).resolve().parents[1] / "src" / "undercroft_store"


def _drawer(
    index: int, content: str = "a verbatim memory", *, wing: str = "life", room: str = "car", **extra: object
) -> Drawer:
    return appended_drawer(index, content, wing=wing, room=room, filed_at="2026-05-01T09:00:00Z", **extra)


def test_only_writes_module_touches_the_drawer_table() -> None:
    pattern = re.compile(r"\b(INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM)\s+drawers\b", re.IGNORECASE)
    offenders = []
    for path in STORE_SRC.rglob("*.py"):
        if path.name == "writes.py" and path.parent == STORE_SRC / "kernel":
            continue
        if pattern.search(path.read_text(encoding="utf-8")):
            offenders.append(str(path.relative_to(STORE_SRC)))
    assert offenders == []
    assert pattern.search((STORE_SRC / "kernel" / "writes.py").read_text(encoding="utf-8"))


def test_the_grep_would_catch_a_planted_write() -> None:
    pattern = re.compile(r"\b(INSERT\s+(OR\s+\w+\s+)?INTO|UPDATE|DELETE\s+FROM)\s+drawers\b", re.IGNORECASE)
    assert pattern.search('conn.execute("UPDATE drawers SET tag = ?")')
    assert pattern.search("INSERT OR REPLACE INTO drawers (id) VALUES (?)")
    assert not pattern.search("SELECT * FROM drawers")


def test_screening_is_required(palace: Palace, embedder: HashEmbedder) -> None:
    with palace.open_vault("default", embedder) as store:
        with pytest.raises(TypeError):
            store.write([DrawerWrite(_drawer(0))])  # type: ignore[call-arg]
        with pytest.raises(InvalidDrawer, match="screening must be Screen"):
            store.write([DrawerWrite(_drawer(0))], screening="yes")  # type: ignore[arg-type]
        with pytest.raises(InvalidDrawer, match="needs a BypassReason"):
            Bypass("restore")  # type: ignore[arg-type]


def test_write_read_and_chain_advance_together(palace: Palace, embedder: HashEmbedder) -> None:
    with palace.open_vault("default", embedder) as store:
        results = store.write([DrawerWrite(_drawer(i, f"memory number {i}")) for i in range(5)], screening=Screen())
        assert [r.outcome for r in results] == ["created"] * 5
        assert [r.seq for r in results] == [1, 2, 3, 4, 5]
        db = store._context.connection
        assert db.execute("SELECT height FROM chain_meta").fetchone()[0] == 5
        assert db.execute("SELECT count(*) FROM audit").fetchone()[0] == 5
        assert store.get(results[2].id).content == "memory number 2"
        assert store._context.manifest.anchor.count == 5


def test_dedup_and_update(palace: Palace, embedder: HashEmbedder) -> None:
    with palace.open_vault("default", embedder) as store, obs.sink_installed(obs.RecordingSink()) as sink:
        first = store.write([DrawerWrite(_drawer(0, "same words"))], screening=Screen())[0]
        again = store.write([DrawerWrite(_drawer(0, "same words"))], screening=Screen())[0]
        assert again.outcome == "deduped" and again.seq == first.seq
        changed = store.write([DrawerWrite(_drawer(0, "new words"))], screening=Screen())[0]
        assert changed.outcome == "updated" and changed.seq == first.seq
        assert store.get(first.id).content == "new words"
        assert store._context.connection.execute("SELECT height FROM chain_meta").fetchone()[0] == 2
        assert sink.counter_total(names.DRAWER_WRITES_TOTAL, outcome="deduped") == 1
        assert sink.counter_total(names.DRAWER_WRITES_TOTAL, outcome="created") == 2
        assert sink.counter_total(names.CHAIN_COMMITS_TOTAL) == 2


def test_validation_messages(palace: Palace, embedder: HashEmbedder) -> None:
    good = _drawer(0)
    with palace.open_vault("default", embedder) as store:
        with pytest.raises(InvalidDrawer, match="expected a Drawer, got str"):
            store.write([DrawerWrite("x")], screening=Screen())  # type: ignore[arg-type]
        with pytest.raises(InvalidDrawer, match="expected a DrawerWrite"):
            store.write([good], screening=Screen())  # type: ignore[list-item]
        with pytest.raises(InvalidDrawer, match="appears twice in one batch"):
            store.write([DrawerWrite(good), DrawerWrite(good)], screening=Screen())
        wrong = Drawer(**{**_fields(good), "id": append_drawer_id("life", "car", 7)})
        with pytest.raises(InvalidDrawer, match="does not match its 'append' recipe"):
            store.write([DrawerWrite(wrong)], screening=Screen())
        huge = _drawer(1, "x" * (MAX_CONTENT_BYTES + 1))
        with pytest.raises(InvalidDrawer, match=f"the bound is {MAX_CONTENT_BYTES}"):
            store.write([DrawerWrite(huge)], screening=Screen())
        with pytest.raises(EmbeddingRefused, match="dimension 3, the vault's embedder has 384"):
            store.write([DrawerWrite(good, vector=[1.0, 2.0, 3.0])], screening=Screen())
        bad = np.zeros(384)
        bad[5] = np.nan
        with pytest.raises(EmbeddingRefused, match="non-finite"):
            store.write([DrawerWrite(good, vector=bad)], screening=Screen())
        with pytest.raises(EmbeddingRefused, match="one-dimensional"):
            store.write([DrawerWrite(good, vector=np.zeros((2, 384)))], screening=Screen())
        quarantined = _drawer(2, wing="quarantine-pending", intended_wing="life", intended_room="car")
        with pytest.raises(InvalidDrawer, match="wing is reserved"):
            store.write([DrawerWrite(quarantined)], screening=Screen())
        result = store.write([DrawerWrite(quarantined)], screening=Bypass(BypassReason.ALREADY_DIVERTED))
        assert result[0].outcome == "quarantined"
        assert store.count() == 1 and store.list_drawers() == []
        assert len(store.list_drawers(wing="quarantine-pending")) == 1
        with pytest.raises(InvalidDrawer, match="rule on it with admission"):
            store.delete(result[0].id)
        assert store._context.connection.execute("SELECT height FROM chain_meta").fetchone()[0] == 1


def _fields(drawer: Drawer) -> dict[str, object]:
    return {name: getattr(drawer, name) for name in Drawer.__dataclass_fields__}


def test_failed_transaction_leaves_nothing(palace: Palace, embedder: HashEmbedder) -> None:
    with palace.open_vault("default", embedder) as store:
        store.write([DrawerWrite(_drawer(0))], screening=Screen())
        db = store._context.connection
        db.execute("CREATE TRIGGER boom BEFORE INSERT ON audit BEGIN SELECT RAISE(ABORT, 'boom'); END")
        with pytest.raises(sqlite3.IntegrityError, match="boom"):
            store.write([DrawerWrite(_drawer(1, "other"))], screening=Screen())
        db.execute("DROP TRIGGER boom")
        assert store.count() == 1
        assert db.execute("SELECT height FROM chain_meta").fetchone()[0] == 1


def test_delete_leaves_tombstone_and_audit(palace: Palace, embedder: HashEmbedder) -> None:
    with palace.open_vault("default", embedder) as store:
        drawer_id = store.write([DrawerWrite(_drawer(0))], screening=Screen())[0].id
        store.delete(drawer_id)
        with pytest.raises(DrawerNotFound, match=drawer_id):
            store.get(drawer_id)
        with pytest.raises(DrawerNotFound):
            store.delete(drawer_id)
        db = store._context.connection
        labels = [r[0] for r in db.execute("SELECT record_id FROM audit ORDER BY seq")]
        assert labels == [f"drawer/{drawer_id}", f"delete/{drawer_id}"]
        assert db.execute("SELECT count(*) FROM tombstones").fetchone()[0] == 1


def test_embedder_identity_recorded_and_mismatch_refused(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder(384)) as store:
        store.remember("some text", wing="w", room="r", added_by="cli")
    with pytest.raises(EmbedderMismatch, match="undercroft-hash-v3@384"):
        with Palace(home) as other:
            other.open_vault("default", _OtherEmbedder())
    with Palace(home, force_embedder=True) as forced, forced.open_vault("default", _OtherEmbedder()) as store:
        assert any("forced" in line for line in store.unhealed)


def test_hash_upgrade_migrates_on_writable_open(palace: Palace, home: Path) -> None:
    with palace.open_vault("default", HashEmbedder(384)) as store:
        store.remember("the quick brown fox", wing="w", room="r", added_by="cli")
    with Palace(home, read_only=True) as reader, warnings.catch_warnings():
        warnings.simplefilter("error")  # an unhealed line, never a raw Python warning
        with reader.open_vault("default", HashEmbedder(128)) as store:
            assert any("pending" in line for line in store.unhealed)
            assert store.iter_embeddings().scales.tolist() == [0.0]
    with Palace(home) as writer, writer.open_vault("default", HashEmbedder(128)) as store:
        assert any("re-embedded 1 drawer" in line for line in store.unhealed)
        assert store.iter_embeddings().codes.shape == (1, 128)
    with Palace(home) as writer, writer.open_vault("default", HashEmbedder(128)) as store:
        assert store.unhealed == ()


class _OtherEmbedder(HashEmbedder):
    @property
    def identity(self):  # type: ignore[no-untyped-def]
        from undercroft_core import EmbedderIdentity

        return EmbedderIdentity("other-model", 384)


def test_generation_moves_on_own_and_foreign_commits(palace: Palace, embedder: HashEmbedder, home: Path) -> None:
    with palace.open_vault("default", embedder) as store:
        start = store.generation
        store.remember("one", wing="w", room="r", added_by="cli")
        assert store.generation == start + 1
        assert store.generation == start + 1
        with Palace(home) as other, other.open_vault("default", embedder) as second:
            second.remember("two", wing="w", room="r", added_by="cli")
        assert store.generation == start + 2
