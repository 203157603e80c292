"""The batched write path: sliced exact embeddings, one validation pass, chunked lookups, batch counters.

Each test pins behaviour the speed work could break: the embedding bytes, the refusals, the outcomes and
seqs of a mixed batch, the FTS rows of an hmac-only vault, the rollback of a refused batch, the totals.
"""

from __future__ import annotations

import numpy as np
import pytest
import undercroft_obs as obs
from numpy.typing import NDArray
from undercroft_core import Drawer, HashEmbedder
from undercroft_core.embedder import EmbedderIdentity
from undercroft_core.quantisation import QuantisedVectors
from undercroft_obs import names
from undercroft_store import Bypass, BypassReason, DrawerWrite, InvalidDrawer, Palace, Screen
from undercroft_store.kernel._internal.vectors import EXACT_SLICE_CHARS, _slices, embed_quantised, pack_rows

from .conftest import appended_drawer

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids


def _drawer(index: int, content: str, *, wing: str = "life", room: str = "car", **extra: object) -> Drawer:
    return appended_drawer(index, content, wing=wing, room=room, filed_at="2026-05-01T09:00:00Z", **extra)


def _texts() -> list[str]:
    # ~3.5 slices of ordinary texts, one text longer than a whole slice, and short ones after it.
    ordinary = [f"memory {i}: the drawer keeps the words about project {i % 7} verbatim " * 9 for i in range(90)]
    return [*ordinary[:60], "long " * (EXACT_SLICE_CHARS // 4), *ordinary[60:], "tail", "end"]


def test_sliced_exact_embedding_is_byte_identical_to_one_call(embedder: HashEmbedder) -> None:
    texts = _texts()
    assert sum(len(t) for t in texts) > 3 * EXACT_SLICE_CHARS
    whole = embedder.embed_int8(texts)
    sliced = embed_quantised(embedder, texts)
    assert sliced.codes.dtype == np.int8 and sliced.scales.dtype == np.float32
    assert sliced.codes.tobytes() == whole.codes.tobytes()
    assert sliced.scales.tobytes() == whole.scales.tobytes()
    assert pack_rows(sliced) == pack_rows(whole)


def test_empty_batch_embeds_to_no_rows(embedder: HashEmbedder) -> None:
    empty = embed_quantised(embedder, [])
    assert empty.codes.shape == (0, 384) and empty.scales.shape == (0,)


class _DecliningEmbedder(HashEmbedder):
    """Offers `embed_int8` but returns something else: the float path must be taken instead."""

    def embed_int8(self, texts: list[str]) -> QuantisedVectors:
        return None  # type: ignore[return-value]


class _CountingEmbedder(HashEmbedder):
    def __init__(self) -> None:
        super().__init__()
        self.calls: list[int] = []

    def embed_int8(self, texts: list[str]) -> QuantisedVectors:
        self.calls.append(len(texts))
        return super().embed_int8(texts)


def test_a_declining_exact_form_falls_back_to_the_float_embedding() -> None:
    texts = ["alpha beta gamma", "delta epsilon"]
    declining = _DecliningEmbedder()
    got = embed_quantised(declining, texts)
    matrix: NDArray[np.float32] = HashEmbedder().embed(texts)
    assert got.codes.shape == (2, 384)
    assert np.allclose(got.codes.astype(np.float32) * got.scales[:, None], matrix, atol=0.01)
    assert declining.identity == EmbedderIdentity("undercroft-hash-v3", 384)


def test_slices_hold_the_budget_and_keep_order() -> None:
    texts = _texts()
    runs = _slices(texts, EXACT_SLICE_CHARS)
    assert [text for run in runs for text in run] == texts
    for run in runs[:-1]:  # each run closes on the text that reaches the budget, not before
        assert sum(map(len, run)) >= EXACT_SLICE_CHARS > sum(map(len, run[:-1]))
    counting = _CountingEmbedder()
    embed_quantised(counting, texts)
    assert counting.calls == [len(run) for run in runs] and len(runs) >= 4


def test_a_forged_name_is_still_refused_once_validation_is_single_pass(palace: Palace, embedder: HashEmbedder) -> None:
    forged = _drawer(0, "words")
    object.__setattr__(forged, "wing", "../etc")  # bypass the frozen dataclass's own check
    forged_room = _drawer(1, "words")
    object.__setattr__(forged_room, "room", "a\u200broom")
    with palace.open_vault("default", embedder) as store:
        with pytest.raises(InvalidDrawer, match=r"write 0: invalid wing name '\.\./etc'"):
            store.write([DrawerWrite(forged)], screening=Screen())
        with pytest.raises(InvalidDrawer, match=r"write 1: invalid room name .*U\+200B"):
            store.write([DrawerWrite(_drawer(2, "fine")), DrawerWrite(forged_room)], screening=Screen())
        forged_kind = _drawer(3, "words")
        object.__setattr__(forged_kind, "kind", "NOT A KIND")
        with pytest.raises(InvalidDrawer, match="write 0: unknown kind 'NOT A KIND'"):
            store.write([DrawerWrite(forged_kind)], screening=Screen())
        assert store.count() == 0


@pytest.mark.parametrize("level", ["sealed", "hmac-only"])
def test_mixed_batch_outcomes_seqs_and_fts(palace: Palace, embedder: HashEmbedder, level: str) -> None:
    palace.create_vault("mixed", level=level)  # type: ignore[arg-type]
    with palace.open_vault("mixed", embedder) as store:
        first = store.write([DrawerWrite(_drawer(i, f"first words {i}")) for i in range(4)], screening=Screen())
        assert [r.seq for r in first] == [1, 2, 3, 4]
        batch = [
            DrawerWrite(_drawer(4, "a new drawer")),
            DrawerWrite(_drawer(1, "first words 1")),  # same words: deduped
            DrawerWrite(_drawer(2, "changed words")),  # updated in place
            DrawerWrite(_drawer(5, "another new drawer")),
        ]
        results = store.write(batch, screening=Screen())
        # An upsert that turns into an update still draws an AUTOINCREMENT value (as the row-at-a-time path did).
        assert [(r.outcome, r.seq) for r in results] == [("created", 5), ("deduped", 2), ("updated", 3), ("created", 7)]
        assert [r.id for r in results] == [item.drawer.id for item in batch]
        assert store.get(results[2].id).content == "changed words"
        db = store._context.connection
        assert db.execute("SELECT height FROM chain_meta").fetchone()[0] == 7  # 4 + 3 written, the dedup is not
        if level == "hmac-only":
            fts = dict(db.execute("SELECT rowid, content FROM drawers_fts").fetchall())
            rows = {seq: bytes(content).decode() for seq, content in db.execute("SELECT seq, content FROM drawers")}
            assert fts == rows and fts[3] == "changed words"
        assert store.verify().ok


def test_a_batch_wider_than_one_lookup_chunk(palace: Palace, embedder: HashEmbedder) -> None:
    drawers = [_drawer(i, f"note {i}") for i in range(1_203)]
    with palace.open_vault("default", embedder) as store, obs.sink_installed(obs.RecordingSink()) as sink:
        created = store.write([DrawerWrite(d) for d in drawers], screening=Screen())
        assert [r.seq for r in created] == list(range(1, 1_204))
        again = store.write([DrawerWrite(d) for d in drawers], screening=Screen())
        assert {r.outcome for r in again} == {"deduped"}
        assert [r.seq for r in again] == [r.seq for r in created]
        assert sink.counter_total(names.DRAWER_WRITES_TOTAL, outcome="created") == 1_203
        assert sink.counter_total(names.DRAWER_WRITES_TOTAL, outcome="deduped") == 1_203
        saved = sink.events(names.EVENT_DRAWER_SAVED)
        assert len(saved) == 2 * 1_203 and sum(1 for event in saved if event["deduped"]) == 1_203
        assert store._context.connection.execute("SELECT height FROM chain_meta").fetchone()[0] == 1_203


def test_a_refused_row_mid_batch_rolls_the_whole_batch_back(palace: Palace, embedder: HashEmbedder) -> None:
    resident = _drawer(0, "held words", wing="quarantine-pending", intended_wing="life", intended_room="car")
    with palace.open_vault("default", embedder) as store:
        store.write([DrawerWrite(resident)], screening=Bypass(BypassReason.ALREADY_DIVERTED))
        replaced = _drawer(0, "other words", wing="quarantine-pending", intended_wing="life", intended_room="car")
        batch = [DrawerWrite(_drawer(1, "fine one")), DrawerWrite(replaced), DrawerWrite(_drawer(2, "fine two"))]
        with pytest.raises(InvalidDrawer, match="cannot be edited or replaced"):
            store.write(batch, screening=Bypass(BypassReason.ALREADY_DIVERTED))
        db = store._context.connection
        assert db.execute("SELECT count(*) FROM drawers").fetchone()[0] == 1
        assert db.execute("SELECT height FROM chain_meta").fetchone()[0] == 1
        # The resident was planted without its queue row (that leg fails by design); the rest is clean.
        report = store.verify()
        assert report.audit_chain_ok and report.anchor == "equal", report.render()
        assert not (report.tampered or report.stale_records or report.unlabelled_records or report.orphan_labels)
