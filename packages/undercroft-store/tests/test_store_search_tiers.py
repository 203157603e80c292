"""The PQ/IVF and HNSW candidate tiers (issue 25): sealed at rest, in step with every write path, never trusted.

Every "from scratch" comparison encodes each live drawer's verified embedding with the tier's codebook and
compares it with what the incrementally maintained tier holds in RAM and what a fresh handle loads from disk.
"""

from __future__ import annotations

import random
import sqlite3
from collections.abc import Callable, Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.errors import RecordTampered
from undercroft_store.governance.forgetting import forget
from undercroft_store.governance.retention import set_retention, sweep
from undercroft_store.integrity.repair import repair_vault
from undercroft_store.integrity.rotation import rotate_vault
from undercroft_store.kernel import tier_tables as tables
from undercroft_store.kernel._internal.meta_at_rest import stored_label
from undercroft_store.kernel.screening import Bypass, BypassReason
from undercroft_store.kernel.writes import refresh_embeddings
from undercroft_store.search import InvalidSearch, Searcher, SearchRequest, plan_pool
from undercroft_store.search.tiers import FdeTier, HnswTier, PQTier, TierOptions, pq, scaled_tier
from undercroft_store.search.tiers.exact import open_embeddings

from .conftest import appended_drawer

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

EMBEDDER = HashEmbedder()
SIZE = 700
OPTIONS = TierOptions(ivf_min=500)  # √700 → 27 inverted lists
WINGS = ("alpha", "beta", "gamma")
_WORDS = [f"{a}{b}{c}" for a in "bcdfgk" for b in "aeiou" for c in "lmnrst"]
NEEDLES = {
    650: ("alpha", "r1", "quokka zanzibar lantern protocol"),
    651: ("beta", "r2", "osprey staging cluster codename"),
    652: ("gamma", "r0", "walnut orchard harvest ledger"),
}


@pytest.fixture(autouse=True)
def _small_training(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pq, "TRAIN_MIN", 300)


def _drawer(index: int, text: str, wing: str | None = None, room: str | None = None) -> Drawer:
    wing = wing or WINGS[index % 3]
    room = room or f"r{index % 4}"
    return appended_drawer(index, text, wing=wing, room=room, filed_at="2024-01-01T00:00:00Z")


def _id(index: int) -> str:
    return append_drawer_id(WINGS[index % 3], f"r{index % 4}", index)


def _corpus(start: int, stop: int, seed: int = 11) -> list[DrawerWrite]:
    rng = random.Random(seed + start)
    items = []
    for i in range(start, stop):
        if i in NEEDLES:
            wing, room, text = NEEDLES[i]
            items.append(DrawerWrite(_drawer(i, text, wing, room)))
        else:
            items.append(DrawerWrite(_drawer(i, " ".join(rng.choices(_WORDS, k=12)))))
    return items


def _make(root: Path, level: str) -> None:
    with Palace(root) as palace:
        palace.create_vault("v", level=level)  # type: ignore[arg-type]
        with palace.open_vault("v", EMBEDDER) as store:
            store.write(_corpus(0, SIZE), screening=Screen())


@pytest.fixture
def sealed(tmp_path: Path) -> Iterator[tuple[Path, VaultStore]]:
    _make(tmp_path, "sealed")
    with Palace(tmp_path) as palace, palace.open_vault("v", EMBEDDER) as store:
        yield tmp_path, store


def _raw(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / "vaults" / "v" / "vault.db", isolation_level=None)


def _searcher(store: VaultStore, retrieval: str = "pq") -> Searcher:
    return Searcher(store, EMBEDDER, retrieval=retrieval, tier_options=OPTIONS)


def _pq(searcher: Searcher) -> PQTier:
    assert isinstance(searcher.tier, PQTier)
    return searcher.tier


def _from_scratch(store: VaultStore, tier: PQTier) -> dict[int, bytes]:
    book = tier.codebook
    assert book is not None
    seqs = store.scope_seqs(include_quarantine=True).tolist()
    vectors = open_embeddings(store._context, seqs)
    codes = book.encode(np.stack([vectors[seq] for seq in seqs]))
    return {seq: codes[i].tobytes() for i, seq in enumerate(seqs)}


def _on_disk(root: Path) -> dict[int, bytes]:
    """What a fresh read-only handle's tier loads (and keeps: nothing lags) from the sealed tables."""
    with Palace(root, read_only=True) as palace, palace.open_vault("v", EMBEDDER, read_only=True) as store:
        tier = PQTier(OPTIONS)
        tier.prepare(store)
        assert tier.distrusted == [] and tier.encoded == 0, "the tables lag the drawers"
        return tier.coded()


def _assert_in_step(root: Path, store: VaultStore, searcher: Searcher) -> None:
    searcher.search(SearchRequest("anything at all", limit=5))
    tier = _pq(searcher)
    scratch = _from_scratch(store, tier)
    assert tier.coded() == scratch
    assert _on_disk(root) == scratch


def _needle_ids(store: VaultStore) -> dict[int, str]:
    return {i: append_drawer_id(wing, room, i) for i, (wing, room, _) in NEEDLES.items()}


@pytest.mark.parametrize("level", ["sealed", "hmac-only"])
def test_pq_finds_every_needle_unscoped_and_scoped(tmp_path: Path, level: str) -> None:
    _make(tmp_path, level)
    with Palace(tmp_path) as palace, palace.open_vault("v", EMBEDDER) as store:
        searcher, full = _searcher(store), Searcher(store, EMBEDDER)
        ids = _needle_ids(store)
        for index, (wing, room, text) in NEEDLES.items():
            for scope in ({}, {"wing": wing}, {"room": room}, {"wing": wing, "room": room}):
                hits = searcher.search(SearchRequest(text, limit=5, **scope)).hits
                assert ids[index] in [hit.id for hit in hits[:5]], (text, scope)
                assert hits[0].id == full.search(SearchRequest(text, limit=5, **scope)).hits[0].id
        tier = _pq(searcher)
        assert tier.name == "pq-ivf" and tier.nlist == 27 and tier.generation == 1
        assert store.stats().index_generation == 1
        assert len(tier.coded()) == SIZE and 0 < tier.ram_bytes()
        assert store.verify().ok and store.verify().index_tier == []


def test_sealed_tables_hold_no_plaintext_derived_bytes(sealed: tuple[Path, VaultStore]) -> None:
    root, store = sealed
    searcher = _searcher(store)
    searcher.search(SearchRequest("quokka zanzibar", limit=5))
    tier = _pq(searcher)
    book = tier.codebook
    assert book is not None
    store.close()
    raw = b"".join(p.read_bytes() for p in (root / "vaults" / "v").iterdir() if p.name.startswith("vault.db"))
    with _raw(root) as db:
        assert int(db.execute(f"SELECT count(*) FROM {tables.ROWS_TABLE}").fetchone()[0]) == SIZE
    codes = list(tier.coded().values())
    assert [code for code in codes if code in raw] == []  # no code (list number + PQ code) in clear
    assert book.codebook_bytes()[:64] not in raw and book.centroid_bytes()[:64] not in raw
    assert b"quokka" not in raw and b"zanzibar" not in raw


def test_hmac_only_tables_are_tagged_in_clear(tmp_path: Path) -> None:
    # The leak test above can fail: on an hmac-only vault the very same codes ARE in the file (tagged).
    _make(tmp_path, "hmac-only")
    with Palace(tmp_path) as palace, palace.open_vault("v", EMBEDDER) as store:
        searcher = _searcher(store)
        searcher.search(SearchRequest("quokka", limit=5))
        codes = list(_pq(searcher).coded().values())
    raw = b"".join(p.read_bytes() for p in (tmp_path / "vaults" / "v").iterdir() if p.name.startswith("vault.db"))
    assert all(code in raw for code in codes[:50])


def _update(root: Path, store: VaultStore) -> None:
    store.write([DrawerWrite(_drawer(3, "walnut orchard harvest rewritten"))], screening=Screen())


def _delete(root: Path, store: VaultStore) -> None:
    store.delete(_id(5))


def _forget(root: Path, store: VaultStore) -> None:
    forget(store, [_id(7), _id(8)])


def _retention(root: Path, store: VaultStore) -> None:
    set_retention(store, "beta", "r1", max_age=1)
    assert sweep(store, now=datetime.now(UTC) + timedelta(days=1)).forgotten


def _re_embed(root: Path, store: VaultStore) -> None:
    codes = np.random.default_rng(3).integers(-127, 128, EMBEDDER.dimension, dtype=np.int8)
    packed = np.float32(0.02).astype("<f4").tobytes() + codes.tobytes()
    refresh_embeddings(store._context, [(_id(9), packed)], screening=Bypass(BypassReason.REPAIR))


def _append(root: Path, store: VaultStore) -> None:
    store.write(_corpus(SIZE, SIZE + 40), screening=Screen())


def _other_handle(root: Path, store: VaultStore) -> None:
    with Palace(root) as palace, palace.open_vault("v", EMBEDDER) as other:
        other.delete(_id(11))
        other.write(_corpus(SIZE + 50, SIZE + 55), screening=Screen())


@pytest.mark.parametrize(
    "change",
    [_update, _delete, _forget, _retention, _re_embed, _append, _other_handle],
    ids=["update", "delete", "forget", "retention", "re-embed", "append", "another-handle"],
)
def test_every_write_path_keeps_the_tier_equal_to_a_from_scratch_encode(
    sealed: tuple[Path, VaultStore], change: Callable[[Path, VaultStore], None]
) -> None:
    root, store = sealed
    searcher = _searcher(store)
    _assert_in_step(root, store, searcher)
    before = dict(_pq(searcher).coded())
    change(root, store)
    _assert_in_step(root, store, searcher)
    assert _pq(searcher).coded() != before and _pq(searcher).trainings == 1  # coded again, never retrained


def test_rotation_drops_the_tier_and_the_next_search_rebuilds_under_new_keys(tmp_path: Path) -> None:
    _make(tmp_path, "sealed")
    with Palace(tmp_path) as palace:
        with palace.open_vault("v", EMBEDDER) as store:
            _searcher(store).search(SearchRequest("quokka", limit=5))
            assert store.stats().index_generation == 1
        rotate_vault(palace, "v", EMBEDDER)
        with palace.open_vault("v", EMBEDDER) as store:
            assert store.verify().ok  # the old rows are gone, not failing under the new keys
            assert store.stats().index_generation == 1  # emptied, the counter kept
            searcher = _searcher(store)
            _assert_in_step(tmp_path, store, searcher)
            assert _pq(searcher).generation == 2 and store.stats().index_generation == 2


def test_growth_retrains_a_new_generation(sealed: tuple[Path, VaultStore]) -> None:
    root, store = sealed
    searcher = _searcher(store)
    searcher.search(SearchRequest("quokka", limit=5))
    assert _pq(searcher).trained_on == SIZE
    store.write(_corpus(SIZE, 2 * SIZE), screening=Screen())
    _assert_in_step(root, store, searcher)
    assert _pq(searcher).generation == 2 and _pq(searcher).trained_on == 2 * SIZE
    assert store.stats().index_generation == 2


def test_training_sample_is_capped_per_wing_and_keyed(sealed: tuple[Path, VaultStore]) -> None:
    _, store = sealed
    store.write(
        [DrawerWrite(_drawer(i, f"flood {i}", "delta", "r0")) for i in range(SIZE, SIZE + 900)], screening=Screen()
    )
    live = pq.live_marks(store._context)
    sample = pq.training_sample(store._context, live, 4, 400)
    wing_of = dict(zip(live.seqs.tolist(), live.wings, strict=True))
    delta = stored_label(store._context, "wing", "delta")  # the wing column holds blind values when sealed
    assert len(sample) == 400 and sum(wing_of[s] == delta for s in sample.tolist()) == 100
    uncapped = pq.training_sample(store._context, live, None, 400)
    assert sum(wing_of[s] == delta for s in uncapped.tolist()) > 150
    assert np.array_equal(sample, pq.training_sample(store._context, live, 4, 400))  # same corpus, same draw


def _flip_blob(root: Path, table: str, where: str) -> None:
    column = "seq" if table == tables.ROWS_TABLE else "name"
    with _raw(root) as db:
        key, blob = db.execute(f"SELECT {column}, blob FROM {table} WHERE {where}").fetchone()
        flipped = bytearray(blob)
        flipped[len(flipped) // 2] ^= 0x20
        db.execute(f"UPDATE {table} SET blob = ? WHERE {column} = ?", (bytes(flipped), key))


@pytest.mark.parametrize(
    ("table", "where", "named"),
    [
        (tables.ROWS_TABLE, "seq = 100", "code row of seq 100 fails its seal"),
        (tables.META_TABLE, "name = 'codebook'", "codebook of generation 1 fails its seal"),
        (tables.META_TABLE, "name = 'centroids'", "centroids of generation 1 fails its seal"),
    ],
    ids=["code-row", "codebook", "centroids"],
)
def test_a_tampered_artifact_is_named_never_trusted_and_rebuilt_by_repair(
    tmp_path: Path, table: str, where: str, named: str
) -> None:
    _make(tmp_path, "sealed")
    request = SearchRequest("osprey staging cluster", limit=5)
    with Palace(tmp_path) as palace, palace.open_vault("v", EMBEDDER) as store:
        expected = _searcher(store).search(request)
    _flip_blob(tmp_path, table, where)
    with Palace(tmp_path) as palace:
        with palace.open_vault("v", EMBEDDER) as store:
            report = store.verify()
            assert not report.ok and any(named in line for line in report.index_tier), report.index_tier
            assert "TIER: " in report.render()
            searcher = _searcher(store)
            assert searcher.search(request) == expected  # the failed artifact is not used
            assert _pq(searcher).distrusted
            assert not store.verify().ok  # and the evidence is not overwritten by the search
        repaired = repair_vault(palace, "v", EMBEDDER)
        assert repaired.ok and repaired.index_tier is not None and "rebuilt" in repaired.index_tier
        with palace.open_vault("v", EMBEDDER) as store:
            assert store.verify().ok and store.stats().index_generation == 2
            searcher = _searcher(store)
            _assert_in_step(tmp_path, store, searcher)
            assert searcher.search(request).hits[0].id == expected.hits[0].id


def test_a_code_row_moved_to_another_seq_fails_to_open(sealed: tuple[Path, VaultStore]) -> None:
    root, store = sealed
    _searcher(store).search(SearchRequest("quokka", limit=5))
    with _raw(root) as db:
        blob = db.execute(f"SELECT blob FROM {tables.ROWS_TABLE} WHERE seq = 10").fetchone()[0]
        db.execute(f"UPDATE {tables.ROWS_TABLE} SET blob = ? WHERE seq = 11", (blob,))
    assert any("seq 11 fails" in line for line in store.verify().index_tier)


def test_a_read_only_handle_builds_in_ram_and_writes_nothing(tmp_path: Path) -> None:
    _make(tmp_path, "sealed")
    with Palace(tmp_path, read_only=True) as palace, palace.open_vault("v", EMBEDDER, read_only=True) as store:
        searcher = _searcher(store)
        hits = searcher.search(SearchRequest("quokka zanzibar", limit=5)).hits
        assert hits[0].id == _needle_ids(store)[650] and _pq(searcher).generation == 1
    with _raw(tmp_path) as db:
        assert not tables.tables_exist(db)


def test_below_the_training_size_the_tier_ranks_exactly(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(pq, "TRAIN_MIN", 10_000)
    _make(tmp_path, "sealed")
    with Palace(tmp_path) as palace, palace.open_vault("v", EMBEDDER) as store:
        searcher, full = _searcher(store), Searcher(store, EMBEDDER)
        for _, _, text in NEEDLES.values():
            request = SearchRequest(text, limit=10)
            assert searcher.search(request) == full.search(request)
        assert _pq(searcher).name == "pq-exact" and store.stats().index_generation is None


def test_hnsw_lives_in_ram_only(sealed: tuple[Path, VaultStore]) -> None:
    root, store = sealed
    searcher = _searcher(store, "hnsw")
    ids = _needle_ids(store)
    for index, (wing, _, text) in NEEDLES.items():
        assert searcher.search(SearchRequest(text, limit=5)).hits[0].id == ids[index]
        assert searcher.search(SearchRequest(text, limit=5, wing=wing)).hits[0].id == ids[index]
    assert isinstance(searcher.tier, HnswTier) and searcher.tier.builds == 1
    store.delete(ids[650])
    assert ids[650] not in [hit.id for hit in searcher.search(SearchRequest(NEEDLES[650][2], limit=5)).hits]
    assert searcher.tier.builds == 2
    with _raw(root) as db:
        assert not tables.tables_exist(db)


def test_declarations() -> None:
    assert scaled_tier(None) is None
    assert isinstance(scaled_tier("pq"), PQTier) and isinstance(scaled_tier("hnsw"), HnswTier)
    assert isinstance(scaled_tier("fde"), FdeTier)  # the searcher refuses it without a late encoder
    with pytest.raises(InvalidSearch, match="must be pq, hnsw or fde"):
        scaled_tier("annoy")


def test_from_settings_wires_the_tier(sealed: tuple[Path, VaultStore]) -> None:
    _, store = sealed
    env = {"UNDERCROFT_RETRIEVAL": "pq", "UNDERCROFT_IVF_MIN": "500", "UNDERCROFT_IVF_NPROBE": "3"}
    searcher = Searcher.from_settings(store, EMBEDDER, env=env, trust_assignments={})
    tier = _pq(searcher)
    assert tier.options == TierOptions(ivf_min=500, nprobe=3, train_source_cap=4)
    assert searcher.search(SearchRequest("quokka zanzibar", limit=5)).hits[0].id == _needle_ids(store)[650]


def test_pinned_pages_tile_one_ranking_under_pq(tmp_path: Path) -> None:
    # A vault larger than the pinned pool (100 · 32 = 3,200): the pq draw is a strict subset of the scope.
    drawers = 4_000
    rng = random.Random(7)
    common = ["lantern", "harbour", "ledger"]
    with Palace(tmp_path) as palace:
        palace.create_vault("v")
        with palace.open_vault("v", EMBEDDER) as store:
            items = [
                DrawerWrite(_drawer(i, " ".join(rng.choices(_WORDS + common, k=rng.randint(6, 14)))))
                for i in range(drawers)
            ]
            store.write(items, screening=Screen())
            searcher = _searcher(store)
            pinned = datetime(2024, 2, 1, tzinfo=UTC)
            deep = searcher.search(SearchRequest("lantern harbour ledger", limit=100, ranked_at=pinned))
            assert _pq(searcher).name == "pq-ivf" and 3_200 <= deep.pool < deep.searched == drawers
            pages = []
            for number in range(10):
                request = SearchRequest("lantern harbour ledger", limit=10, offset=10 * number, ranked_at=pinned)
                pages.extend(searcher.search(request).hits)
            assert [hit.to_dict() for hit in pages] == [hit.to_dict() for hit in deep.hits]
            assert [hit.rank for hit in pages] == list(range(100))


def test_a_scoped_draw_is_never_starved_by_the_probed_lists(sealed: tuple[Path, VaultStore]) -> None:
    # One probed list of 42 cannot hold a 256-candidate pool of one wing: the draw probes every list instead,
    # so the pool is full, holds only members, and the wing's needle is drawn by cosine alone.
    _, store = sealed
    rng = random.Random(3)
    texts = [" ".join(rng.choices(_WORDS, k=12)) for _ in range(1000)] + ["heron estuary tidal survey"]
    store.write(
        [DrawerWrite(_drawer(SIZE + i, text, "delta", f"r{i % 2}")) for i, text in enumerate(texts)], screening=Screen()
    )
    tier = PQTier(TierOptions(ivf_min=500, nprobe=1))
    tier.prepare(store)
    assert tier.nlist == 42
    needle = append_drawer_id("delta", "r0", SIZE + 1000)
    vector = EMBEDDER.embed(["heron estuary tidal survey"])[0]
    query = (vector / np.linalg.norm(vector)).astype(np.float32)
    scopes = {
        "wing": store.scope_seqs(wing="delta"),
        "wing+room": store.scope_seqs(wing="delta", room="r0"),
        "room across wings": store.scope_seqs(room="r0"),  # a room is resolved into the draw too, not a WHERE
    }
    for name, scope in scopes.items():
        plan = plan_pool(len(scope), len(scope), 1, 64)
        assert not plan.exact, name
        drawn = tier.candidates(query, scope, plan)
        assert drawn.stage_one == plan.stage_one and set(drawn.seqs.tolist()) <= set(scope.tolist()), name
        assert needle in [drawer.id for drawer in store.hydrate(drawn.seqs[:5].tolist())], name
    # Through the searcher, with a single probed list: every scoped shape still finds the wing's needle first.
    searcher = Searcher(store, EMBEDDER, retrieval="pq", tier_options=TierOptions(ivf_min=500, nprobe=1))
    for wing, room in (("delta", None), ("delta", "r0"), (None, "r0")):
        request = SearchRequest("heron estuary tidal survey", limit=5, wing=wing, room=room)
        assert searcher.search(request).hits[0].id == needle, (wing, room)


def test_every_failing_code_row_of_a_batch_is_named_and_the_rest_still_load(sealed: tuple[Path, VaultStore]) -> None:
    # The rows open in batches (`Sealer.open_many`): a failure in the middle must not hide the rows after it.
    root, store = sealed
    request = SearchRequest("walnut orchard harvest", limit=5)
    expected = _searcher(store).search(request)
    for seq in (3, 250, 251, 699):
        _flip_blob(root, tables.ROWS_TABLE, f"seq = {seq}")
    failing = sorted(line for line in store.verify().index_tier if "fails its seal" in line)
    assert failing == sorted(f"{tables.ROWS_TABLE} code row of seq {seq} fails its seal" for seq in (3, 250, 251, 699))
    tier = PQTier(OPTIONS)
    tier.prepare(store)
    assert sorted(tier.distrusted) == sorted(f"code row {seq}" for seq in (3, 250, 251, 699))
    assert tier.encoded == 4  # only the four distrusted rows were encoded again from their verified embeddings
    assert tier.coded() == _from_scratch(store, tier)
    assert _searcher(store).search(request) == expected


def test_a_flipped_embedding_among_the_drawn_candidates_is_record_tampered(sealed: tuple[Path, VaultStore]) -> None:
    # The second stage opens its candidates in one batch: the altered blob is named, the batch is not trusted.
    root, store = sealed
    searcher = _searcher(store)
    searcher.search(SearchRequest("anything", limit=5))
    seqs = store.scope_seqs()
    with _raw(root) as db:
        drawer_id, blob = db.execute("SELECT id, embedding FROM drawers WHERE seq = ?", (int(seqs[400]),)).fetchone()
        flipped = bytearray(blob)
        flipped[len(flipped) // 2] ^= 0x01
        db.execute("UPDATE drawers SET embedding = ? WHERE id = ?", (bytes(flipped), drawer_id))
    with pytest.raises(RecordTampered, match=drawer_id):
        open_embeddings(store._context, seqs[390:410].tolist())
    assert set(open_embeddings(store._context, seqs[401:420].tolist())) == set(seqs[401:420].tolist())
