"""The FDE candidate tier (issue 25 item 4): MUVERA rows over the stored token matrices, sealed at rest, in step
with every write path, never trusted — a stale or forged row changes what is drawn, never what is returned.

Every "from scratch" comparison encodes each live drawer's stored token matrix with the tier's persisted
parameters and compares it with what the maintained tier holds in RAM and what a fresh handle loads from disk.
"""

from __future__ import annotations

import hashlib
import random
import shutil
import sqlite3
from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from undercroft_config import check
from undercroft_config.capabilities import Build, Capability
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_core.fde import FdeEncoder
from undercroft_core.model_roles import DegradingLateEncoder
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.governance.forgetting import forget
from undercroft_store.integrity.repair import repair_vault
from undercroft_store.integrity.rotation import rotate_vault
from undercroft_store.kernel import fde_tables as tables
from undercroft_store.search import InvalidSearch, Searcher, SearchRequest, plan_pool
from undercroft_store.search.candidates import PoolPlan
from undercroft_store.search.tiers import FdeOptions, FdeTier

from .conftest import appended_drawer

pytestmark = pytest.mark.legacy_ids  # drawers are built with core's public-recipe (sha256-v1) ids

EMBEDDER = HashEmbedder()
SIZE = 600  # above the hydration size (256): stage 1 really draws
OPTIONS = FdeOptions(repetitions=4, bits=2, projection=4, seed=7, pq_min=None)  # 64-wide float FDEs: cheap
WINGS = ("alpha", "beta", "gamma")
_WORDS = [f"{a}{b}{c}" for a in "bcdfgk" for b in "aeiou" for c in "lmnrst"]
NEEDLES = {
    550: ("alpha", "r1", "quokka zanzibar lantern protocol"),
    551: ("beta", "r2", "osprey staging cluster codename"),
    552: ("gamma", "r0", "walnut orchard harvest ledger"),
}


class WordTokens(DegradingLateEncoder):
    """A deterministic late encoder: one random 8-wide vector per word."""

    def __init__(self) -> None:
        super().__init__("word-tokens", 8)

    def _encode_batch(self, texts: list[str], *, query: bool) -> list[NDArray[np.floating]]:
        return [np.stack([_word(word) for word in text.split()]) for text in texts]


def _word(word: str) -> NDArray[np.float32]:
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).normal(size=8).astype(np.float32)


def _drawer(index: int, text: str, wing: str | None = None, room: str | None = None) -> Drawer:
    wing, room = wing or WINGS[index % 3], room or f"r{index % 4}"
    return appended_drawer(index, text, wing=wing, room=room, filed_at="2024-01-01T00:00:00Z")


def _id(index: int) -> str:
    wing, room = (NEEDLES[index][0], NEEDLES[index][1]) if index in NEEDLES else (WINGS[index % 3], f"r{index % 4}")
    return append_drawer_id(wing, room, index)


def _corpus(start: int, stop: int) -> list[DrawerWrite]:
    rng = random.Random(5 + start)
    items = []
    for i in range(start, stop):
        if i in NEEDLES:
            wing, room, text = NEEDLES[i]
            items.append(DrawerWrite(_drawer(i, text, wing, room)))
        else:
            items.append(DrawerWrite(_drawer(i, " ".join(rng.choices(_WORDS, k=10)))))
    return items


def _open(palace: Palace, *, read_only: bool = False) -> VaultStore:
    store = palace.open_vault("v", EMBEDDER, read_only=read_only)
    store.attach_late_encoder(WordTokens())
    return store


_TEMPLATES: dict[str, Path] = {}


@pytest.fixture(autouse=True, scope="module")
def _templates(tmp_path_factory: pytest.TempPathFactory) -> None:
    """One palace per level, written once per module; each test copies it (the write is the slow part)."""
    for level in ("sealed", "hmac-only"):
        root = tmp_path_factory.mktemp(f"fde-{level}")
        with Palace(root) as palace:
            palace.create_vault("v", level=level)  # type: ignore[arg-type]
            with _open(palace) as store:
                store.write(_corpus(0, SIZE), screening=Screen())
        _TEMPLATES[level] = root


def _make(root: Path, level: str = "sealed") -> None:
    shutil.copytree(_TEMPLATES[level], root, dirs_exist_ok=True)


@pytest.fixture
def sealed(tmp_path: Path) -> Iterator[tuple[Path, VaultStore]]:
    _make(tmp_path)
    with Palace(tmp_path) as palace, _open(palace) as store:
        yield tmp_path, store


def _raw(root: Path) -> sqlite3.Connection:
    return sqlite3.connect(root / "vaults" / "v" / "vault.db", isolation_level=None)


def _searcher(store: VaultStore) -> Searcher:
    return Searcher(store, EMBEDDER, retrieval="fde", fde_options=OPTIONS)


def _fde(searcher: Searcher) -> FdeTier:
    assert isinstance(searcher.tier, FdeTier)
    return searcher.tier


def _from_scratch(store: VaultStore, tier: FdeTier) -> dict[int, bytes]:
    parameters = tier.parameters
    assert parameters is not None
    encoder = FdeEncoder.from_seed(parameters)
    seqs = store.scope_seqs(include_quarantine=True).tolist()
    matrices = store.token_matrices(seqs)
    held = [seq for seq in seqs if matrices.get(seq) is not None]
    encoded = encoder.encode_documents([matrices[seq].tokens for seq in held])  # type: ignore[union-attr]
    return {seq: encoded[i].tobytes() for i, seq in enumerate(held)}


def _bytes(rows: dict[int, NDArray[np.float32]]) -> dict[int, bytes]:
    return {seq: row.tobytes() for seq, row in rows.items()}


def _on_disk(root: Path) -> dict[int, bytes]:
    """What a fresh read-only handle's tier loads (and keeps: nothing lags) from the sealed tables."""
    with Palace(root, read_only=True) as palace, _open(palace, read_only=True) as store:
        tier = FdeTier(OPTIONS)
        tier.prepare(store)
        assert tier.distrusted == [] and tier.encoded == 0, "the tables lag the drawers"
        return _bytes(tier.rows())


def _assert_in_step(root: Path, store: VaultStore, searcher: Searcher) -> None:
    searcher.search(SearchRequest("anything at all", limit=5))
    tier = _fde(searcher)
    scratch = _from_scratch(store, tier)
    assert _bytes(tier.rows()) == scratch
    assert _on_disk(root) == scratch


@pytest.mark.parametrize("level", ["sealed", "hmac-only"])
def test_fde_returns_what_the_full_scan_returns_for_needles(tmp_path: Path, level: str) -> None:
    _make(tmp_path, level)
    with Palace(tmp_path) as palace, _open(palace) as store:
        searcher, full = _searcher(store), Searcher(store, EMBEDDER)
        for index, (wing, _, text) in NEEDLES.items():
            for scope in ({}, {"wing": wing}):
                hits = [hit.id for hit in searcher.search(SearchRequest(text, limit=5, **scope)).hits]
                assert hits[0] == _id(index), (text, scope)
                assert hits == [hit.id for hit in full.search(SearchRequest(text, limit=5, **scope)).hits]
        tier = _fde(searcher)
        assert tier.generation == 1 and len(tier.rows()) == SIZE and tier.bare == frozenset()
        assert tier.parameters is not None and tier.parameters.output_dimension == 64
        assert store.verify().ok and store.verify().index_tier == []
        stats = store.stats()
        assert stats.fde_generation == 1 and "fde tier:       parameter generation 1" in stats.render()


def test_sealed_tables_hold_no_plaintext_derived_bytes(sealed: tuple[Path, VaultStore]) -> None:
    root, store = sealed
    searcher = _searcher(store)
    searcher.search(SearchRequest("quokka zanzibar", limit=5))
    rows = _fde(searcher).rows()
    store.close()
    raw = b"".join(p.read_bytes() for p in (root / "vaults" / "v").iterdir() if p.name.startswith("vault.db"))
    with _raw(root) as db:
        assert int(db.execute(f"SELECT count(*) FROM {tables.ROWS_TABLE}").fetchone()[0]) == SIZE
    assert [seq for seq, row in rows.items() if row.tobytes()[:32] in raw] == []  # no FDE floats in clear
    assert b"quokka" not in raw and b"zanzibar" not in raw and b"UCFDE1" not in raw  # nor the parameters


def test_hmac_only_rows_are_tagged_in_clear(tmp_path: Path) -> None:
    # The leak test above can fail: on an hmac-only vault the very same floats ARE in the file (tagged).
    _make(tmp_path, "hmac-only")
    with Palace(tmp_path) as palace, _open(palace) as store:
        searcher = _searcher(store)
        searcher.search(SearchRequest("quokka", limit=5))
        rows = list(_fde(searcher).rows().values())
    raw = b"".join(p.read_bytes() for p in (tmp_path / "vaults" / "v").iterdir() if p.name.startswith("vault.db"))
    assert all(row.tobytes()[:32] in raw for row in rows[:50])


def _update(store: VaultStore) -> None:
    store.write([DrawerWrite(_drawer(3, "walnut orchard harvest rewritten"))], screening=Screen())


def _delete(store: VaultStore) -> None:
    store.delete(_id(5))


def _forget(store: VaultStore) -> None:
    forget(store, [_id(7), _id(8)])


def _append(store: VaultStore) -> None:
    store.write(_corpus(SIZE, SIZE + 30), screening=Screen())


@pytest.mark.parametrize("change", [_update, _delete, _forget, _append], ids=["update", "delete", "forget", "append"])
def test_every_write_path_keeps_the_tier_equal_to_a_from_scratch_build(
    sealed: tuple[Path, VaultStore], change: Callable[[VaultStore], None]
) -> None:
    root, store = sealed
    searcher = _searcher(store)
    _assert_in_step(root, store, searcher)
    before = _bytes(_fde(searcher).rows())
    encoded = _fde(searcher).encoded
    change(store)
    if change is not _append:  # the rewritten or deleted drawer's row went in the write's own transaction
        with _raw(root) as db:
            seqs = {int(row[0]) for row in db.execute(f"SELECT seq FROM {tables.ROWS_TABLE}")}
        assert len(seqs) < SIZE
    _assert_in_step(root, store, searcher)
    assert _bytes(_fde(searcher).rows()) != before
    assert _fde(searcher).encoded - encoded <= 30  # only the diff was encoded again


def test_a_drawer_without_a_matrix_is_always_drawn(sealed: tuple[Path, VaultStore]) -> None:
    root, store = sealed
    with Palace(root) as palace, palace.open_vault("v", EMBEDDER) as bare_writer:  # no late encoder: no matrix
        bare_writer.write([DrawerWrite(_drawer(SIZE, "pangolin meridian cobalt"))], screening=Screen())
    searcher = _searcher(store)
    hits = searcher.search(SearchRequest("pangolin meridian cobalt", limit=5)).hits
    tier = _fde(searcher)
    assert len(tier.bare) == 1 and len(tier.rows()) == SIZE
    assert hits[0].id == _id(SIZE)
    assert store.verify().ok  # a missing matrix is not a finding of the tier
    # Drawn by stage 1 itself, not only rescued by its rare words: the cosine draw alone holds it.
    (bare,) = tier.bare
    scope = store.scope_seqs(include_quarantine=True)
    query = EMBEDDER.embed(["pangolin meridian cobalt"])[0]
    drawn = tier.for_query("quokka zanzibar").candidates(query, scope, plan_pool(len(scope), len(scope), 5, 64))
    assert bare in drawn.seqs.tolist() and drawn.stage_one == 256 + 1


def _flip(root: Path, table: str, where: str) -> None:
    column = "seq" if table == tables.ROWS_TABLE else "name"
    with _raw(root) as db:
        key, blob = db.execute(f"SELECT {column}, blob FROM {table} WHERE {where}").fetchone()
        flipped = bytearray(blob)
        flipped[len(flipped) // 2] ^= 0x20
        db.execute(f"UPDATE {table} SET blob = ? WHERE {column} = ?", (bytes(flipped), key))


@pytest.mark.parametrize(
    ("table", "where", "named"),
    [
        (tables.ROWS_TABLE, "seq = 100", "row of seq 100 fails its seal"),
        (tables.META_TABLE, "name = 'params'", "params of generation 1 fails its seal"),
    ],
    ids=["row", "params"],
)
def test_a_flipped_byte_is_named_never_trusted_and_rebuilt_by_repair(
    tmp_path: Path, table: str, where: str, named: str
) -> None:
    _make(tmp_path)
    request = SearchRequest("osprey staging cluster", limit=5)
    with Palace(tmp_path) as palace, _open(palace) as store:
        expected = _searcher(store).search(request)
    _flip(tmp_path, table, where)
    with Palace(tmp_path) as palace:
        with _open(palace) as store:
            report = store.verify()
            assert not report.ok and any(named in line for line in report.index_tier), report.index_tier
            searcher = _searcher(store)
            assert searcher.search(request) == expected  # the failed blob is not used: same results
            assert _fde(searcher).distrusted
            assert not store.verify().ok  # and the evidence is not overwritten by the search
        repaired = repair_vault(palace, "v", EMBEDDER, prepare=lambda s: s.attach_late_encoder(WordTokens()))
        assert repaired.ok and repaired.index_tier is not None and "FDE tier rebuilt" in repaired.index_tier
        with _open(palace) as store:
            assert store.verify().ok
            searcher = _searcher(store)
            _assert_in_step(tmp_path, store, searcher)
            assert searcher.search(request).hits == expected.hits


def test_a_row_moved_to_another_seq_fails_to_open(sealed: tuple[Path, VaultStore]) -> None:
    root, store = sealed
    _searcher(store).search(SearchRequest("quokka", limit=5))
    with _raw(root) as db:
        blob = db.execute(f"SELECT blob FROM {tables.ROWS_TABLE} WHERE seq = 10").fetchone()[0]
        db.execute(f"UPDATE {tables.ROWS_TABLE} SET blob = ? WHERE seq = 11", (blob,))
    assert any("seq 11 fails" in line for line in store.verify().index_tier)


def test_rotation_drops_the_tier_and_the_next_search_rebuilds_under_new_keys(tmp_path: Path) -> None:
    _make(tmp_path)
    with Palace(tmp_path) as palace:
        with _open(palace) as store:
            _searcher(store).search(SearchRequest("quokka", limit=5))
        rotate_vault(palace, "v", EMBEDDER)
        with _open(palace) as store:
            assert store.verify().ok  # the old blobs are gone, not failing under the new keys
            searcher = _searcher(store)
            _assert_in_step(tmp_path, store, searcher)
            assert _fde(searcher).generation == 2


def test_without_a_colbert_encoder_the_tier_refuses_naming_the_variable(tmp_path: Path) -> None:
    _make(tmp_path)
    with Palace(tmp_path) as palace, palace.open_vault("v", EMBEDDER) as store:
        with pytest.raises(InvalidSearch, match="UNDERCROFT_RERANKER=colbert"):
            Searcher(store, EMBEDDER, retrieval="fde")
    build = Build.of([Capability.RETRIEVAL_FDE, Capability.EMBEDDER_HASH])
    report = check({"UNDERCROFT_RETRIEVAL": "fde"}, build=build)
    assert report.refuses
    (entry,) = report.entries
    assert entry.message is not None and "no ColBERT encoder is configured" in entry.message
    assert "declare UNDERCROFT_RERANKER=colbert" in entry.message


class _QueryFails(WordTokens):
    def _encode_batch(self, texts: list[str], *, query: bool) -> list[NDArray[np.floating]]:
        if query:
            raise RuntimeError("the query side is down")
        return super()._encode_batch(texts, query=query)


def test_a_failed_query_encoding_ranks_the_scope_exactly(sealed: tuple[Path, VaultStore]) -> None:
    _, store = sealed
    store.attach_late_encoder(_QueryFails())
    searcher, full = _searcher(store), Searcher(store, EMBEDDER)
    request = SearchRequest("walnut orchard harvest ledger", limit=5)
    assert [hit.id for hit in searcher.search(request).hits] == [hit.id for hit in full.search(request).hits]
    assert _fde(searcher).exact_fallbacks == 1 and store.late_encoder is not None
    assert store.late_encoder.late_failures == 1  # counted by the role, never raised into the search


# --- compression in RAM: PQ codes above UNDERCROFT_FDE_PQ_MIN, IVF above UNDERCROFT_FDE_IVF_MIN ---------------


def _compressed(ivf_min: int | None = None, nprobe: int | None = None) -> FdeOptions:
    return FdeOptions(repetitions=4, bits=2, projection=4, seed=7, pq_min=256, ivf_min=ivf_min, nprobe=nprobe)


def _codes_of_scratch(store: VaultStore, tier: FdeTier) -> dict[int, bytes]:
    """The tier's own codebook applied to a from-scratch encoding of every live drawer's matrix."""
    book = tier.codebook
    assert book is not None
    scratch = _from_scratch(store, tier)
    order = sorted(scratch)
    floats = np.stack([np.frombuffer(scratch[seq], dtype=np.float32) for seq in order])
    return {seq: code.tobytes() for seq, code in zip(order, book.encode(floats), strict=True)}


@pytest.mark.parametrize("ivf_min", [None, 100], ids=["pq", "ivf"])
def test_the_compressed_tier_keeps_codes_only_and_still_finds_every_needle(
    sealed: tuple[Path, VaultStore], ivf_min: int | None
) -> None:
    _, store = sealed
    searcher = Searcher(store, EMBEDDER, retrieval="fde", fde_options=_compressed(ivf_min))
    floats = Searcher(store, EMBEDDER, retrieval="fde", fde_options=OPTIONS)
    full = Searcher(store, EMBEDDER)
    for index, (wing, room, text) in NEEDLES.items():
        for scope in ({}, {"wing": wing}, {"wing": wing, "room": room}):
            hits = [hit.id for hit in searcher.search(SearchRequest(text, limit=5, **scope)).hits]
            assert hits[0] == _id(index) == full.search(SearchRequest(text, limit=5, **scope)).hits[0].id
    floats.search(SearchRequest("anything", limit=5))
    tier = _fde(searcher)
    assert tier.rows() == {} and len(tier.codes()) == SIZE and tier.trainings == 1
    assert tier.codebook is not None and tier.codebook.nlist == (1 if ivf_min is None else 25)  # ⌈√600⌉
    book_bytes = tier.codebook.centroids.nbytes + tier.codebook.codebook.nbytes
    assert tier.ram_bytes() - book_bytes < _fde(floats).ram_bytes() / 2  # 32 B of code + 8 of id against 256 B
    assert tier.codes() == _codes_of_scratch(store, tier)


@pytest.mark.parametrize("change", [_update, _delete, _forget, _append], ids=["update", "delete", "forget", "append"])
def test_every_write_path_keeps_the_codes_equal_to_a_from_scratch_build(
    sealed: tuple[Path, VaultStore], change: Callable[[VaultStore], None]
) -> None:
    root, store = sealed
    searcher = Searcher(store, EMBEDDER, retrieval="fde", fde_options=_compressed(ivf_min=100))
    searcher.search(SearchRequest("anything at all", limit=5))
    before = _fde(searcher).codes()
    change(store)
    searcher.search(SearchRequest("anything at all", limit=5))
    tier = _fde(searcher)
    assert tier.codes() != before and tier.trainings == 1  # coded with the codebook in hand, not retrained
    assert tier.codes() == _codes_of_scratch(store, tier)  # no code left of a deleted or rewritten drawer
    assert _on_disk(root) == _from_scratch(store, tier)  # the floats at rest are still the whole truth


def test_the_codebook_is_trained_again_once_the_coded_population_doubles(tmp_path: Path) -> None:
    with Palace(tmp_path) as palace:
        palace.create_vault("v", level="sealed")
        with _open(palace) as store:
            store.write(_corpus(0, 300), screening=Screen())
            searcher = Searcher(store, EMBEDDER, retrieval="fde", fde_options=_compressed())
            searcher.search(SearchRequest("quokka", limit=5))
            tier = _fde(searcher)
            assert tier.trainings == 1 and len(tier.codes()) == 300
            store.write(_corpus(300, 599), screening=Screen())
            searcher.search(SearchRequest("quokka", limit=5))
            assert tier.trainings == 1 and len(tier.codes()) == 599  # 599 < 2 × 300: added with the old codebook
            store.write(_corpus(599, 600), screening=Screen())
            hits = searcher.search(SearchRequest("walnut orchard harvest ledger", limit=5)).hits
            assert tier.trainings == 2 and len(tier.codes()) == 600 and tier.rows() == {}
            assert tier.codes() == _codes_of_scratch(store, tier) and hits[0].id == _id(552)


def test_a_scoped_draw_probing_one_list_is_never_starved(sealed: tuple[Path, VaultStore]) -> None:
    # One probed list of 25 holds ~24 codes, a third of them in the wing: far short of a 100-wide stage 1, so
    # every list is probed again and the draw is as wide as planned, the wing's needle in it wherever its list is.
    _, store = sealed
    searcher = Searcher(store, EMBEDDER, retrieval="fde", fde_options=_compressed(ivf_min=100, nprobe=1))
    searcher.search(SearchRequest("anything", limit=5))
    tier = _fde(searcher)
    assert tier.codebook is not None and tier.codebook.nlist == 25
    plan = PoolPlan(stage_one=100, hydrate=20, exact=False)
    for index, (wing, _, text) in NEEDLES.items():
        scope = store.scope_seqs(wing=wing)
        drawn = tier.for_query(text).candidates(EMBEDDER.embed([text])[0], scope, plan)
        assert drawn.stage_one == 100 and np.isin(drawn.seqs, scope).all()
        assert _id(index) in [drawer.id for drawer in store.hydrate_many(drawn.seqs.tolist()).values()], wing


def test_the_declared_compression_reaches_the_tier(sealed: tuple[Path, VaultStore]) -> None:
    _, store = sealed
    env = {"UNDERCROFT_RETRIEVAL": "fde", "UNDERCROFT_FDE_PQ_MIN": "300", "UNDERCROFT_FDE_IVF_MIN": "100"}
    searcher = Searcher.from_settings(store, EMBEDDER, env={**env, "UNDERCROFT_FDE_NPROBE": "3"})
    assert (_fde(searcher).options.pq_min, _fde(searcher).options.ivf_min, _fde(searcher).options.nprobe) == (
        300,
        100,
        3,
    )
    default = _fde(Searcher.from_settings(store, EMBEDDER, env={"UNDERCROFT_RETRIEVAL": "fde"})).options
    assert (default.pq_min, default.ivf_min, default.nprobe) == (256, None, None)
