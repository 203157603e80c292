"""The late stage's stored token matrices: written sealed at write time, used by MaxSim, bound to their drawer,
dropped with it, verified, repaired (resumably), re-sealed by rotation — and every raw-byte tamper caught."""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from undercroft_core import HashEmbedder
from undercroft_core.late_interaction import maxsim
from undercroft_core.model_roles import DegradingLateEncoder
from undercroft_store import Palace
from undercroft_store.errors import LateStageMissing
from undercroft_store.governance.forgetting import forget
from undercroft_store.integrity.repair import repair_vault
from undercroft_store.integrity.rotation import rotate_vault
from undercroft_store.kernel.token_table import TOKEN_TABLE, content_digest, pack_matrix, unpack_matrix
from undercroft_store.search import Searcher, SearchRequest
from undercroft_store.search.late import LateRescore

DIMENSION = 8
TEXTS = (
    "the lighthouse keeper logs a storm",
    "a storm over the harbour at night",
    "the keeper paints the lighthouse red",
    "harbour boats wait for the storm to pass",
    "quiet keeper quiet lighthouse",
)


def _word(word: str) -> NDArray[np.float32]:
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).normal(size=DIMENSION).astype(np.float32)


class WordTokens(DegradingLateEncoder):
    """A deterministic late encoder: one random vector per word; ``poison`` in a text raises (degrades)."""

    def __init__(self, name: str = "word-tokens", poison: str | None = None, dimension: int = DIMENSION) -> None:
        super().__init__(name, dimension)
        self.poison = poison
        self.documents = 0

    def _encode_batch(self, texts: list[str], *, query: bool) -> list[NDArray[np.floating]]:
        if self.poison is not None and any(self.poison in text for text in texts):
            raise RuntimeError("inference failed")
        if not query:
            self.documents += len(texts)
        return [np.stack([_word(word)[: self.dimension] for word in text.split()]) for text in texts]


class Rogue(WordTokens):
    """A late encoder that breaks the role's contract: it raises, or hands back non-finite matrices."""

    def __init__(self, mode: str) -> None:
        super().__init__("rogue")
        self.mode = mode

    def encode_documents(self, texts: Sequence[str]) -> list[NDArray[np.float32]]:
        if self.mode == "raise":
            raise MemoryError("out of memory inside the runtime")
        return [np.full((3, DIMENSION), np.nan, dtype=np.float32) for _ in texts]


def _database(home: Path, vault: str = "default") -> Path:
    return home / "vaults" / vault / "vault.db"


def _raw(home: Path) -> sqlite3.Connection:
    return sqlite3.connect(_database(home), isolation_level=None)


def _fill(palace: Palace, encoder: WordTokens | None, level: str = "sealed") -> list[str]:
    if level != "sealed":
        palace.create_vault("plain", level=level)
    vault = "default" if level == "sealed" else "plain"
    with palace.open_vault(vault, HashEmbedder()) as store:
        if encoder is not None:
            store.attach_late_encoder(encoder)
        return [store.remember(text, wing="sea", room="log", added_by="t")[0].id for text in TEXTS]


def _blob(home: Path, drawer_id: str, vault: str = "default") -> bytes:
    with sqlite3.connect(_database(home, vault)) as raw:
        row = raw.execute(
            f"SELECT t.blob FROM {TOKEN_TABLE} t JOIN drawers d ON d.seq = t.seq WHERE d.id = ?", (drawer_id,)
        ).fetchone()
    return bytes(row[0])


def _flip_in_file(home: Path, needle: bytes, vault: str = "default") -> None:
    """Flip one bit of ``needle`` where it sits in the raw vault.db (after a checkpoint): an offline edit."""
    database = _database(home, vault)
    with sqlite3.connect(database) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
    data = bytearray(database.read_bytes())
    at = data.find(needle)
    assert at >= 0 and data.find(needle, at + 1) < 0, "the blob is in the file exactly once"
    data[at + len(needle) // 2] ^= 0x10
    database.write_bytes(bytes(data))


def _search(palace: Palace, encoder: WordTokens, query: str) -> tuple[list[str], LateRescore]:
    with palace.open_vault("default", HashEmbedder()) as store:
        store.attach_late_encoder(encoder)
        searcher = Searcher.from_settings(store, HashEmbedder(), env={})
        stage = searcher.rescore
        assert isinstance(stage, LateRescore)
        hits = searcher.search(SearchRequest(query, limit=10)).hits
        return [hit.content for hit in hits], stage


def test_a_write_stores_one_sealed_matrix_per_drawer_and_nothing_derived_in_clear(palace: Palace) -> None:
    encoder = WordTokens()
    ids = _fill(palace, encoder)
    with palace.open_vault("default", HashEmbedder()) as store:
        assert store.stats().token_matrices == len(TEXTS)
        opened = store.token_matrices(list(range(1, 20)))
    assert len(opened) == len(TEXTS) and all(m is not None and m.encoder == "word-tokens" for m in opened.values())
    raw = b"".join(path.read_bytes() for path in _database(palace.home).parent.glob("vault.db*"))
    for text in TEXTS:
        plain = pack_matrix("word-tokens", text, np.stack([_word(w) for w in text.split()]))
        assert plain[40:72] not in raw  # the quantised codes are sealed
        assert content_digest(text) not in raw  # so is the content digest
    assert b"word-tokens" not in raw
    assert len(_blob(palace.home, ids[0])) > 0


def test_the_codec_round_trips_within_int8_error_and_refuses_other_bytes() -> None:
    matrix = np.stack([_word(w) for w in "a storm over the harbour".split()])
    opened = unpack_matrix(pack_matrix("enc", "text", matrix))
    assert opened is not None and opened.current("enc", "text") and not opened.current("enc", "other text")
    assert not opened.current("other-enc", "text")
    assert np.abs(opened.tokens - matrix).max() <= np.abs(matrix).max() / 127 + 1e-3
    plain = pack_matrix("enc", "text", matrix)
    assert unpack_matrix(plain[:-1]) is None and unpack_matrix(b"XXXX" + plain[4:]) is None
    with pytest.raises(ValueError, match="non-empty"):
        pack_matrix("enc", "text", np.zeros((0, DIMENSION), dtype=np.float32))


def test_search_rescores_by_maxsim_over_the_stored_matrices_without_encoding_a_candidate(palace: Palace) -> None:
    _fill(palace, WordTokens())
    encoder = WordTokens()
    order, stage = _search(palace, encoder, "storm keeper")
    query = np.stack([_word(w) for w in "storm keeper".split()])
    norm = query / np.linalg.norm(query, axis=1, keepdims=True)

    def score(text: str) -> float:
        tokens = np.stack([_word(w) for w in text.split()])
        return maxsim(norm, tokens / np.linalg.norm(tokens, axis=1, keepdims=True))

    assert order == sorted(order, key=lambda text: -score(text))
    assert len(order) >= 3 and stage.scored_from_store == len(order) and stage.encoded_at_query == 0
    assert encoder.documents == 0  # no candidate was encoded at query time: the stored matrices served


def test_a_rewrite_without_the_stage_drops_the_old_matrix_and_with_it_replaces_it(palace: Palace) -> None:
    ids = _fill(palace, WordTokens())
    with palace.open_vault("default", HashEmbedder()) as store:
        drawer = store.get(ids[0])
        from dataclasses import replace

        from undercroft_store import DrawerWrite, Screen

        store.write([DrawerWrite(replace(drawer, content="an entirely new text"))], screening=Screen())
        assert store.stats().token_matrices == len(TEXTS) - 1  # the old text's matrix did not outlive it
        store.attach_late_encoder(WordTokens())
        store.write([DrawerWrite(replace(drawer, content="a second new text"))], screening=Screen())
        assert store.stats().token_matrices == len(TEXTS)
        seq = int(store._context.connection.execute("SELECT seq FROM drawers WHERE id = ?", (ids[0],)).fetchone()[0])
        held = store.token_matrices([seq])[seq]
        assert held is not None and held.current("word-tokens", "a second new text")


def test_a_failed_encoding_lands_the_write_without_a_matrix_and_is_counted(palace: Palace) -> None:
    encoder = WordTokens(poison="harbour")
    _fill(palace, encoder)
    with palace.open_vault("default", HashEmbedder()) as store:
        store.attach_late_encoder(encoder)
        stats = store.stats()
        assert stats.drawers == len(TEXTS) and stats.token_matrices == len(TEXTS) - 2
        report = store.verify()
    assert report.ok and report.tokens is not None and len(report.tokens.missing) == 2  # reported, not failed
    assert encoder.late_failures == 2


@pytest.mark.parametrize("level", ["sealed", "hmac-only"])
def test_a_flipped_byte_in_a_token_row_is_an_integrity_verdict_and_never_scored(palace: Palace, level: str) -> None:
    ids = _fill(palace, WordTokens(), level)
    vault = "default" if level == "sealed" else "plain"
    _flip_in_file(palace.home, _blob(palace.home, ids[1], vault), vault)
    with Palace(palace.home) as reopened, reopened.open_vault(vault, HashEmbedder()) as store:
        report = store.verify()
        assert not report.ok and report.tokens is not None
        why = "the stored matrix fails its seal (altered, or moved from another drawer)"
        assert report.tokens.failed == [f"{ids[1]}: {why}"]
        assert "TOKENS: " + ids[1] in report.render() and report.render().endswith("VERIFY FAILED")
        seq = int(store._context.connection.execute("SELECT seq FROM drawers WHERE id = ?", (ids[1],)).fetchone()[0])
        assert store.token_matrices([seq]) == {seq: None}  # never trusted


def test_a_matrix_moved_to_another_drawers_row_is_refused(palace: Palace) -> None:
    ids = _fill(palace, WordTokens())
    with _raw(palace.home) as raw:  # swap two rows' blobs: each is a valid seal, under the wrong drawer's domain
        (a, first), (b, second) = raw.execute(f"SELECT seq, blob FROM {TOKEN_TABLE} ORDER BY seq LIMIT 2").fetchall()
        raw.execute(f"UPDATE {TOKEN_TABLE} SET blob = ? WHERE seq = ?", (second, a))
        raw.execute(f"UPDATE {TOKEN_TABLE} SET blob = ? WHERE seq = ?", (first, b))
    with palace.open_vault("default", HashEmbedder()) as store:
        report = store.verify()
        assert store.token_matrices([a, b]) == {a: None, b: None}
    assert report.tokens is not None and [f.split(":")[0] for f in report.tokens.failed] == ids[:2]
    encoder = WordTokens()
    _order, stage = _search(palace, encoder, "storm keeper lighthouse harbour")
    assert stage.encoded_at_query == 2 and encoder.documents == 2  # the moved ones were encoded afresh, in RAM


def test_a_missing_matrix_is_reported_and_an_orphan_one_fails(palace: Palace) -> None:
    ids = _fill(palace, WordTokens())
    with _raw(palace.home) as raw:
        seq, blob = raw.execute(f"SELECT seq, blob FROM {TOKEN_TABLE} ORDER BY seq LIMIT 1").fetchone()
        raw.execute(f"DELETE FROM {TOKEN_TABLE} WHERE seq = ?", (seq,))
    with palace.open_vault("default", HashEmbedder()) as store:
        report = store.verify()
    assert report.ok and report.tokens is not None and report.tokens.missing == [ids[0]]
    assert f"NO TOKENS: {ids[0]}" in report.render()
    with _raw(palace.home) as raw:  # a row under a seq no drawer holds: what a forgotten drawer must never leave
        raw.execute(f"INSERT INTO {TOKEN_TABLE} (seq, blob) VALUES (?, ?)", (999, blob))
    with palace.open_vault("default", HashEmbedder()) as store:
        report = store.verify()
    assert not report.ok and report.tokens is not None
    assert report.tokens.failed == ["seq 999: a stored matrix with no drawer (orphan)"]


def test_forget_removes_the_matrix_and_no_byte_of_it_is_left_in_the_files(palace: Palace) -> None:
    ids = _fill(palace, WordTokens())
    blob = _blob(palace.home, ids[2])
    with palace.open_vault("default", HashEmbedder()) as store:
        forget(store, [ids[2]])
        assert store.stats().token_matrices == len(TEXTS) - 1
        assert store.verify().ok
    for path in _database(palace.home).parent.glob("vault.db*"):
        files = path.read_bytes()
        for start in range(0, len(blob) - 32, 32):  # not one 32-byte run of the sealed matrix survives
            assert blob[start : start + 32] not in files, (path.name, start)


def _runs_left(home: Path, blob: bytes, vault: str = "default") -> list[tuple[str, int]]:
    """Every (file, offset) of a 32-byte run of ``blob`` still in ``vault.db`` or its WAL."""
    found = []
    for path in _database(home, vault).parent.glob("vault.db*"):
        files = path.read_bytes()
        found += [(path.name, start) for start in range(0, len(blob) - 32, 32) if blob[start : start + 32] in files]
    return found


@pytest.mark.parametrize("written", ["earlier-handle", "same-handle"])
def test_forget_scrubs_the_files_at_once_while_another_handle_keeps_the_vault_open(
    palace: Palace, written: str
) -> None:
    """The close of the last connection checkpoints anyway; a long-lived holder (a server, a second handle)
    means no close comes, so forget's own checkpoint is what copies the zeroed pages over the main file's and
    the WAL's older frames. ``earlier-handle``: the matrix sits in vault.db (its writer closed, checkpointed);
    ``same-handle``: it sits in the WAL's earlier frames of the forgetting handle's own writes."""
    palace.create_vault("plain", level="hmac-only")
    with palace.open_vault("plain", HashEmbedder()) as holder:  # stays open: no last-close checkpoint
        holder.stats()
        if written == "earlier-handle":
            with palace.open_vault("plain", HashEmbedder()) as writer:
                writer.attach_late_encoder(WordTokens())
                ids = [writer.remember(text, wing="sea", room="log", added_by="t")[0].id for text in TEXTS]
            with sqlite3.connect(_database(palace.home, "plain")) as raw:
                raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")  # as an idle moment's autocheckpoint would
        with palace.open_vault("plain", HashEmbedder()) as store:
            if written == "same-handle":
                store.attach_late_encoder(WordTokens())
                ids = [store.remember(text, wing="sea", room="log", added_by="t")[0].id for text in TEXTS]
            blob = _blob(palace.home, ids[2], "plain")
            assert _runs_left(palace.home, blob, "plain"), "the matrix is in the files before forget"
            forget(store, [ids[2]])
            assert _runs_left(palace.home, blob, "plain") == []  # at once, the forgetting handle still open
            raw = b"".join(p.read_bytes() for p in _database(palace.home, "plain").parent.glob("vault.db*"))
            assert TEXTS[2].encode() not in raw  # the words too (an hmac-only vault holds them in clear)
        assert _runs_left(palace.home, blob, "plain") == []  # and after its close, the holder still open


def test_repair_tokens_builds_every_missing_matrix_resumably(palace: Palace) -> None:
    _fill(palace, None)  # written before the stage was configured: no matrix
    with pytest.raises(LateStageMissing, match="UNDERCROFT_RERANKER=colbert"):
        repair_vault(palace, "default", HashEmbedder(), tokens=True)
    encoder = WordTokens()

    def interrupt(step: str, done: int, total: int) -> None:
        if step == "tokens" and done >= 2:
            raise KeyboardInterrupt  # killed after the first committed batch

    with pytest.raises(KeyboardInterrupt):
        repair_vault(
            palace, "default", HashEmbedder(), tokens=True, batch=2, progress=interrupt,
            prepare=lambda store: store.attach_late_encoder(encoder),
        )  # fmt: skip
    assert encoder.documents == 2
    attach = lambda store: store.attach_late_encoder(encoder)  # noqa: E731 - the composition root's hook
    report = repair_vault(palace, "default", HashEmbedder(), tokens=True, batch=2, prepare=attach)
    assert report.tokens is not None and (report.tokens.current, report.tokens.built) == (2, 3)
    assert encoder.documents == 5 and report.ok  # resumed: the two done were not encoded again
    assert "token matrices:        3 built, 2 current" in report.render()
    with palace.open_vault("default", HashEmbedder()) as store:
        assert store.stats().token_matrices == len(TEXTS)
        verdict = store.verify().tokens
    assert verdict is not None and (verdict.missing, verdict.stale, verdict.failed) == ([], [], [])


def test_repair_drops_a_tampered_matrix_and_repair_tokens_rebuilds_it(palace: Palace) -> None:
    ids = _fill(palace, WordTokens())
    _flip_in_file(palace.home, _blob(palace.home, ids[3]))
    report = repair_vault(palace, "default", HashEmbedder())
    assert report.ok and report.tokens is not None and report.tokens.dropped == 1 and report.tokens.built == 0
    encoder = WordTokens()
    report = repair_vault(
        palace, "default", HashEmbedder(), tokens=True, prepare=lambda store: store.attach_late_encoder(encoder)
    )
    assert report.ok and report.tokens is not None and (report.tokens.built, report.tokens.current) == (1, 4)


def test_a_matrix_of_another_encoder_is_stale_and_rebuilt(palace: Palace) -> None:
    _fill(palace, WordTokens(name="old-model"))
    with palace.open_vault("default", HashEmbedder()) as store:
        store.attach_late_encoder(WordTokens(name="new-model"))
        verdict = store.verify().tokens
    assert verdict is not None and len(verdict.stale) == len(TEXTS) and verdict.ok
    encoder = WordTokens(name="new-model")
    order, stage = _search(palace, encoder, "storm keeper")
    assert stage.scored_from_store == 0 and stage.encoded_at_query == len(order)  # stale: never scored
    report = repair_vault(
        palace, "default", HashEmbedder(), tokens=True, prepare=lambda store: store.attach_late_encoder(encoder)
    )
    assert report.tokens is not None and report.tokens.built == len(TEXTS)


def test_rotation_reseals_every_matrix_under_the_new_keys(palace: Palace) -> None:
    ids = _fill(palace, WordTokens())
    before = _blob(palace.home, ids[0])
    rotate_vault(palace, "default", HashEmbedder())
    assert _blob(palace.home, ids[0]) != before
    with palace.open_vault("default", HashEmbedder()) as store:
        assert store.stats().token_matrices == len(TEXTS)
        report = store.verify()
    assert report.ok and report.tokens is not None and report.tokens.missing == []
    order, stage = _search(palace, WordTokens(), "storm keeper")
    assert stage.scored_from_store == len(order) and stage.encoded_at_query == 0


@pytest.mark.parametrize("mode", ["raise", "nan"])
def test_a_role_that_breaks_its_contract_costs_no_write(palace: Palace, mode: str) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        store.attach_late_encoder(Rogue(mode))
        results = store.remember("the keeper logs a storm", wing="sea", room="log", added_by="t")
        assert [result.outcome for result in results] == ["created"]
        assert store.stats().token_matrices == 0 and store.verify().ok


def test_a_late_encoder_name_that_cannot_be_stored_is_refused_at_attach(palace: Palace) -> None:
    from undercroft_store import InvalidDrawer

    with palace.open_vault("default", HashEmbedder()) as store:
        for name in ("", "x" * 256):
            with pytest.raises(InvalidDrawer, match="1 to 255 UTF-8 bytes"):
                store.attach_late_encoder(WordTokens(name=name))
        assert store.late_encoder is None


def test_a_stored_matrix_of_another_width_is_never_scored(palace: Palace) -> None:
    _fill(palace, WordTokens())
    narrow = WordTokens(dimension=4)  # the same name, another model width: stored matrices are not its own
    order, stage = _search(palace, narrow, "storm keeper")
    assert order and stage.scored_from_store == 0 and stage.encoded_at_query == len(order)


def test_a_tampered_drawer_is_signalled_once_by_verify_not_again_by_the_token_leg(palace: Palace) -> None:
    import undercroft_obs as obs
    from undercroft_obs import names

    ids = _fill(palace, WordTokens())
    with _raw(palace.home) as raw:
        tag = bytearray(raw.execute("SELECT tag FROM drawers WHERE id = ?", (ids[0],)).fetchone()[0])
        tag[0] ^= 1
        raw.execute("UPDATE drawers SET tag = ? WHERE id = ?", (bytes(tag), ids[0]))
    with obs.sink_installed(obs.RecordingSink()) as sink, palace.open_vault("default", HashEmbedder()) as store:
        report = store.verify()
        assert sink.counter_total(names.HMAC_VERIFY_FAILURES_TOTAL) == 1
    assert report.tampered == [ids[0]] and report.tokens is not None and report.tokens.failed == []


def test_repair_tokens_never_writes_a_matrix_for_a_drawer_deleted_since_its_survey(palace: Palace) -> None:
    _fill(palace, None)
    encoder = WordTokens()

    def delete_the_last(step: str, done: int, total: int) -> None:
        if step == "tokens" and done == 2:  # between two batches, another writer removes a drawer not yet built
            with _raw(palace.home) as raw:
                raw.execute("DELETE FROM drawers WHERE seq = (SELECT max(seq) FROM drawers)")

    repair_vault(
        palace, "default", HashEmbedder(), tokens=True, batch=2, progress=delete_the_last,
        prepare=lambda store: store.attach_late_encoder(encoder),
    )  # fmt: skip
    with _raw(palace.home) as raw:
        orphans = raw.execute(f"SELECT count(*) FROM {TOKEN_TABLE} WHERE seq NOT IN (SELECT seq FROM drawers)")
        assert orphans.fetchone()[0] == 0
        assert raw.execute(f"SELECT count(*) FROM {TOKEN_TABLE}").fetchone()[0] == len(TEXTS) - 1
