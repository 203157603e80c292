"""The token codebook (issue 24): past ``UNDERCROFT_TOK_PQ_MIN`` stored matrices a write trains a sealed PQ
codebook and every matrix is re-coded to one byte per sub-quantiser a token; the late stage decodes them;
verify names a flipped codebook byte or an edited generation; repair drops and rebuilds; rotation re-seals;
an export carries the decoded int8 form, so another vault stores it by copy."""

from __future__ import annotations

import hashlib
import sqlite3
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from undercroft_core import HashEmbedder
from undercroft_core.model_roles import DegradingLateEncoder
from undercroft_index.token_pq import token_subquantizers
from undercroft_store import Palace, VaultStore
from undercroft_store.integrity.repair import repair_vault
from undercroft_store.integrity.rotation import rotate_vault
from undercroft_store.kernel.tier_tables import Envelope
from undercroft_store.kernel.token_codebook import CODEBOOK_TABLE
from undercroft_store.kernel.token_table import TOKEN_TABLE
from undercroft_store.search import Searcher, SearchRequest
from undercroft_store.search.late import LateRescore
from undercroft_vault import Domain

DIMENSION = 32
DRAWERS = 48
PQ_MIN = 40
WORDS = (
    "lighthouse keeper storm harbour night boats reef gull lantern tide fog rope anchor mast sail wave "
    "shore cliff beacon signal logbook compass chart current"
).split()


def _word(word: str) -> NDArray[np.float32]:
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).normal(size=DIMENSION).astype(np.float32)


class Words(DegradingLateEncoder):
    """One hashed vector per word; counts document forwards."""

    def __init__(self) -> None:
        super().__init__("word-tokens", DIMENSION)
        self.documents = 0

    def _encode_batch(self, texts: list[str], *, query: bool) -> list[NDArray[np.floating]]:
        if not query:
            self.documents += len(texts)
        return [np.stack([_word(word) for word in text.split()]) for text in texts]


def _text(i: int) -> str:
    rng = np.random.default_rng(i)
    return " ".join(WORDS[j] for j in rng.choice(len(WORDS), size=9, replace=False)) + f" entry{i}"


@pytest.fixture(autouse=True)
def pq_min(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("UNDERCROFT_TOK_PQ_MIN", str(PQ_MIN))


def _fill(palace: Palace, count: int = DRAWERS, vault: str = "default") -> list[str]:
    with palace.open_vault(vault, HashEmbedder()) as store:
        store.attach_late_encoder(Words())
        return [store.remember(_text(i), wing="sea", room="log", added_by="t")[0].id for i in range(count)]


def _plains(store: VaultStore) -> dict[str, bytes]:
    context = store._live()
    query = f"SELECT d.id, t.blob FROM {TOKEN_TABLE} t JOIN drawers d ON d.seq = t.seq"
    envelope = Envelope(context)
    found = {}
    for drawer_id, blob in context.connection.execute(query):
        plain = envelope.open(Domain.tokens(drawer_id), bytes(blob))
        assert plain is not None
        found[str(drawer_id)] = plain
    return found


def _database(home: Path, vault: str = "default") -> Path:
    return home / "vaults" / vault / "vault.db"


def test_below_the_threshold_matrices_stay_int8(palace: Palace) -> None:
    _fill(palace, PQ_MIN - 1)
    with palace.open_vault("default", HashEmbedder()) as store:
        assert store.stats().token_codebook_generation is None
        assert {plain[:4] for plain in _plains(store).values()} == {b"UCT1"}


def test_past_the_threshold_every_matrix_is_pq_coded_at_one_byte_a_subquantiser(palace: Palace) -> None:
    _fill(palace)
    m = token_subquantizers(DIMENSION)
    with palace.open_vault("default", HashEmbedder()) as store:
        assert store.stats().token_codebook_generation == 1
        plains = _plains(store)
    assert len(plains) == DRAWERS and {plain[:4] for plain in plains.values()} == {b"UCT2"}
    for plain in plains.values():
        header = 4 + 1 + len("word-tokens") + 16 + 4 + 6
        tokens = 10  # nine words and the entry number
        assert len(plain) == header + tokens * m  # m bytes a token (16 at 384 wide), against 2 + d for int8
    raw = b"".join(path.read_bytes() for path in _database(palace.home).parent.glob("vault.db*"))
    assert b"UCB1" not in raw and b"word-tokens" not in raw  # the codebook and the codes are sealed


def test_the_late_stage_scores_from_the_pq_codes_without_encoding_a_candidate(palace: Palace) -> None:
    _fill(palace)
    with palace.open_vault("default", HashEmbedder()) as store:
        encoder = Words()
        store.attach_late_encoder(encoder)
        searcher = Searcher.from_settings(store, HashEmbedder(), env={})
        stage = searcher.rescore
        assert isinstance(stage, LateRescore)
        hits = searcher.search(SearchRequest("keeper storm lantern", limit=10)).hits
        assert hits and stage.scored_from_store > 0 and stage.encoded_at_query == 0
        assert encoder.documents == 0
        # Writes after training are coded against the same codebook.
        [result] = store.remember(_text(999), wing="sea", room="log", added_by="t")
        assert _plains(store)[result.id][:4] == b"UCT2"
        tokens = store.verify().tokens
    assert tokens is not None and tokens.ok and not tokens.stale and not tokens.missing


def _codebook_blob(home: Path) -> bytes:
    with sqlite3.connect(_database(home)) as raw:
        row = raw.execute(f"SELECT blob FROM {CODEBOOK_TABLE} WHERE name = 'codebook'").fetchone()
    return bytes(row[0])


def _flip_in_file(home: Path, needle: bytes) -> None:
    database = _database(home)
    with sqlite3.connect(database) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(database.read_bytes())
    at = data.find(needle)
    assert at >= 0
    data[at + len(needle) // 2] ^= 0x10
    database.write_bytes(bytes(data))


@pytest.mark.parametrize("attack", ["flip-a-codebook-byte", "edit-the-generation"])
def test_a_tampered_codebook_is_named_by_verify_never_used_and_repair_rebuilds(palace: Palace, attack: str) -> None:
    _fill(palace)
    if attack == "flip-a-codebook-byte":
        blob = _codebook_blob(palace.home)
        _flip_in_file(palace.home, blob[1000:1064])
    else:
        with sqlite3.connect(_database(palace.home)) as raw:
            raw.execute(f"UPDATE {CODEBOOK_TABLE} SET blob = CAST('2' AS BLOB) WHERE name = 'generation'")
    with palace.open_vault("default", HashEmbedder()) as store:
        encoder = Words()
        store.attach_late_encoder(encoder)
        report = store.verify()
        assert not report.ok and report.tokens is not None
        assert report.tokens.failed[0].startswith("codebook: the token codebook fails its seal")
        searcher = Searcher.from_settings(store, HashEmbedder(), env={})
        stage = searcher.rescore
        assert isinstance(stage, LateRescore)
        searcher.search(SearchRequest("keeper storm lantern", limit=10))
        assert stage.scored_from_store == 0 and stage.encoded_at_query > 0  # nothing decoded from it
    encoder = Words()
    repaired = repair_vault(
        palace, "default", HashEmbedder(), tokens=True, prepare=lambda store: store.attach_late_encoder(encoder)
    )
    assert repaired.tokens is not None and repaired.tokens.dropped == DRAWERS
    assert repaired.tokens.built == DRAWERS and repaired.tokens.compressed == DRAWERS
    with palace.open_vault("default", HashEmbedder()) as store:
        store.attach_late_encoder(Words())
        assert store.verify().ok
        generation = store.stats().token_codebook_generation
    assert generation == (2 if attack == "flip-a-codebook-byte" else 3)  # a step: never a reused number


def test_rotation_reseals_the_codebook_and_the_codes_still_decode(palace: Palace) -> None:
    _fill(palace)
    before = _codebook_blob(palace.home)
    rotate_vault(palace, "default", HashEmbedder())
    assert _codebook_blob(palace.home) != before
    with palace.open_vault("default", HashEmbedder()) as store:
        encoder = Words()
        store.attach_late_encoder(encoder)
        assert store.verify().ok and store.stats().token_codebook_generation == 1
        searcher = Searcher.from_settings(store, HashEmbedder(), env={})
        stage = searcher.rescore
        assert isinstance(stage, LateRescore)
        searcher.search(SearchRequest("keeper storm lantern", limit=10))
        assert stage.scored_from_store > 0 and stage.encoded_at_query == 0


def test_pq_scores_rank_like_int8_on_the_stored_matrices(palace: Palace) -> None:
    """The decoded PQ matrices keep MaxSim's order: the true top hit of every probe stays in PQ's top 3."""
    from undercroft_core.late_interaction import maxsim_many

    _fill(palace)
    exact = Words()
    texts = [_text(i) for i in range(DRAWERS)]
    truth = exact.encode_documents(texts)
    with palace.open_vault("default", HashEmbedder()) as store:
        matrices = store.token_matrices(list(range(1, DRAWERS + 1)))
        decoded = [matrices[seq] for seq in sorted(matrices)]
    assert all(matrix is not None for matrix in decoded)
    for probe in range(0, DRAWERS, 6):
        query = exact.encode_query(" ".join(texts[probe].split()[:4]))
        top = int(np.argmax(maxsim_many(query, truth)))
        pq = maxsim_many(query, [matrix.tokens for matrix in decoded if matrix is not None])
        assert top in np.argsort(-pq)[:3]


def test_an_hmac_only_vault_tags_its_codebook_and_a_flipped_byte_is_named(palace: Palace) -> None:
    palace.create_vault("plain", level="hmac-only")
    _fill(palace, vault="plain")
    database = _database(palace.home, "plain")
    with sqlite3.connect(database) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        blob = bytes(raw.execute(f"SELECT blob FROM {CODEBOOK_TABLE} WHERE name = 'codebook'").fetchone()[0])
    with palace.open_vault("plain", HashEmbedder()) as store:
        assert store.verify().ok and store.stats().token_codebook_generation == 1
    data = bytearray(database.read_bytes())
    at = data.find(blob[2000:2064])
    assert at >= 0
    data[at + 7] ^= 0x01  # one bit of one centroid: the tag no longer matches
    database.write_bytes(bytes(data))
    with palace.open_vault("plain", HashEmbedder()) as store:
        tokens = store.verify().tokens
    assert tokens is not None and tokens.failed[0].startswith("codebook: the token codebook fails its seal")


def _training_with(monkeypatch: pytest.MonkeyPatch, during) -> dict[str, int]:  # type: ignore[no-untyped-def]
    """Patch the token trainer so ``during()`` runs (once) while a codebook trains; counts the trainings."""
    from undercroft_store.kernel import token_codebook

    real = token_codebook.train_token_codebook
    calls = {"n": 0}

    def training(sample):  # type: ignore[no-untyped-def]
        calls["n"] += 1
        if calls["n"] == 1:
            during()
        return real(sample)

    monkeypatch.setattr(token_codebook, "train_token_codebook", training)
    return calls


def test_training_holds_no_write_lock_and_a_row_written_meanwhile_is_coded_too(
    palace: Palace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Training takes seconds on real matrices: it runs with no lock held, so another writer proceeds at once,
    and a matrix written while it trains is coded in the short transaction that stores the codebook."""
    _fill(palace, PQ_MIN - 1)

    def during() -> None:
        raw = sqlite3.connect(_database(palace.home), timeout=0)  # timeout 0: a held write lock fails at once
        try:
            raw.execute("BEGIN IMMEDIATE")
            raw.execute("ROLLBACK")
        finally:
            raw.close()
        with palace.open_vault("default", HashEmbedder()) as other:
            other.attach_late_encoder(Words())
            other._context.late_pq_next = 10**9  # this writer does not train: the one in progress will
            other.remember(_text(1000), wing="sea", room="log", added_by="t")

    calls = _training_with(monkeypatch, during)
    with palace.open_vault("default", HashEmbedder()) as store:
        store.attach_late_encoder(Words())
        store.remember(_text(PQ_MIN), wing="sea", room="log", added_by="t")
    assert calls["n"] == 1
    with palace.open_vault("default", HashEmbedder()) as store:
        assert store.stats().token_codebook_generation == 1
        plains = _plains(store)
        assert store.verify().ok
    assert len(plains) == PQ_MIN + 1 and {plain[:4] for plain in plains.values()} == {b"UCT2"}


def test_two_handles_training_at_once_leave_one_codebook(palace: Palace, monkeypatch: pytest.MonkeyPatch) -> None:
    """While one handle trains, another crosses the threshold and trains first: the slower one finds a codebook
    stored and stores nothing (no second generation, no row coded against a codebook the vault lacks)."""
    _fill(palace, PQ_MIN - 1)
    first: dict[str, bytes] = {}

    def stored_codebook() -> bytes:
        with sqlite3.connect(_database(palace.home)) as raw:
            return bytes(raw.execute(f"SELECT blob FROM {CODEBOOK_TABLE} WHERE name = 'codebook'").fetchone()[0])

    def during() -> None:
        with palace.open_vault("default", HashEmbedder()) as other:
            other.attach_late_encoder(Words())
            other.remember(_text(1000), wing="sea", room="log", added_by="t")  # trains and stores generation 1
        first["codebook"] = stored_codebook()

    calls = _training_with(monkeypatch, during)
    with palace.open_vault("default", HashEmbedder()) as store:
        store.attach_late_encoder(Words())
        store.remember(_text(PQ_MIN), wing="sea", room="log", added_by="t")
    assert calls["n"] == 2
    assert stored_codebook() == first["codebook"]  # the rows were coded against this one: it is never replaced
    with palace.open_vault("default", HashEmbedder()) as store:
        assert store.stats().token_codebook_generation == 1
        assert {plain[:4] for plain in _plains(store).values()} == {b"UCT2"}
        assert store.verify().ok
