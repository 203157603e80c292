"""Token matrices ride the export lines (issue 24): an import stores them by copy — no model forward — when
each is this content's under the importing vault's late encoder, and refuses every other one (forged, moved to
another drawer's line, stale, another encoder's or width's, not decodable) by encoding that drawer afresh.

Every attack is a raw edit of the export file's bytes, as someone holding the file would make it."""

from __future__ import annotations

import base64
import hashlib
import json
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from numpy.typing import NDArray
from undercroft_cli._internal.transfer_io import collect_export, import_export_bytes
from undercroft_core import HashEmbedder
from undercroft_core.model_roles import DegradingLateEncoder
from undercroft_store import Palace, VaultStore
from undercroft_store.kernel.token_table import pack_matrix, unpack_matrix

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
    return np.random.default_rng(seed).normal(size=16).astype(np.float32)


class Counting(DegradingLateEncoder):
    """A deterministic late encoder (one vector per word) that counts its document forwards."""

    def __init__(self, name: str = "word-tokens", dimension: int = DIMENSION) -> None:
        super().__init__(name, dimension)
        self.documents = 0

    def _encode_batch(self, texts: list[str], *, query: bool) -> list[NDArray[np.floating]]:
        if not query:
            self.documents += len(texts)
        return [np.stack([_word(word)[: self.dimension] for word in text.split()]) for text in texts]


@pytest.fixture(autouse=True)
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in [n for n in os.environ if n.startswith("UNDERCROFT_")]:
        monkeypatch.delenv(name)


@pytest.fixture
def exported(tmp_path: Path) -> bytes:
    """A sealed vault's export, every drawer's matrix stored by the late stage at write time."""
    with Palace(tmp_path / "source") as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            store.attach_late_encoder(Counting())
            for text in TEXTS:
                store.remember(text, wing="sea", room="log", added_by="t")
            data, counts = collect_export(store)
    assert counts["token_matrices"] == len(TEXTS)
    return data


@pytest.fixture
def target(tmp_path: Path) -> Iterator[Palace]:
    with Palace(tmp_path / "target") as palace:
        palace.init()
        yield palace


def _lines(data: bytes) -> list[dict[str, object]]:
    return [json.loads(line) for line in data.decode().splitlines()]


def _join(lines: list[dict[str, object]]) -> bytes:
    return b"".join(json.dumps(line, sort_keys=True).encode() + b"\n" for line in lines)


def _stored(store: VaultStore) -> dict[str, bytes]:
    """Every stored matrix's plaintext keyed by its drawer's content."""
    artifacts = store.token_artifacts([int(s) for s in store.scope_seqs(include_quarantine=True)])
    contents = {d.id: d.content for d in store.hydrate(list(artifacts))}
    return {contents[drawer_id]: plain for drawer_id, plain in artifacts.items()}


def _import(palace: Palace, data: bytes, encoder: Counting | None) -> tuple[dict[str, object], dict[str, bytes]]:
    with palace.open_vault("default", HashEmbedder()) as store:
        if encoder is not None:
            store.attach_late_encoder(encoder)
        report = import_export_bytes(store, data, "export.jsonl", added_by="cli").to_dict()
        return report, _stored(store)


def _fresh(text: str, name: str = "word-tokens") -> bytes:
    return pack_matrix(name, text, Counting(name).encode_documents([text])[0])


def test_an_import_stores_every_matrix_by_copy_with_no_forward(exported: bytes, target: Palace) -> None:
    drawers = [line for line in _lines(exported) if line.get("type") == "drawer"]
    assert all(isinstance(line.get("tokens"), str) for line in drawers)
    encoder = Counting()
    report, stored = _import(target, exported, encoder)
    assert encoder.documents == 0  # restore = copy: not one document forward
    assert report["tokens"] == {"copied": len(TEXTS), "refused": 0}
    assert stored == {text: _fresh(text) for text in TEXTS}
    with target.open_vault("default", HashEmbedder()) as store:
        store.attach_late_encoder(Counting())
        tokens = store.verify().tokens
    assert tokens is not None and tokens.ok and not tokens.missing and not tokens.stale


def _edit_tokens(data: bytes, index: int, edit: object) -> bytes:
    lines = _lines(data)
    drawers = [line for line in lines if line.get("type") == "drawer"]
    drawers[index]["tokens"] = edit(drawers[index]["tokens"]) if callable(edit) else edit
    return _join(lines)


def _flip_digest(value: object) -> str:
    plain = bytearray(base64.b64decode(str(value)))
    at = 5 + plain[4]  # magic, name length, name: the first byte of the content digest
    plain[at] ^= 0x01
    return base64.b64encode(bytes(plain)).decode()


def _nan_scale(value: object) -> str:
    plain = bytearray(base64.b64decode(str(value)))
    at = 5 + plain[4] + 16 + 6  # the first token's float16 scale
    plain[at : at + 2] = np.array([np.nan], dtype="<f2").tobytes()
    return base64.b64encode(bytes(plain)).decode()


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        (_flip_digest, "a forged content digest"),
        (_nan_scale, "a non-finite scale"),
        ("not base64 at all!", "a value that is not base64"),
        (base64.b64encode(b"UCT1 but not a matrix").decode(), "bytes that are not a matrix"),
        (17, "a value that is not a string"),
    ],
)
def test_a_forged_matrix_line_is_refused_and_its_drawer_encoded(
    exported: bytes, target: Palace, edit: object, why: str
) -> None:
    encoder = Counting()
    report, stored = _import(target, _edit_tokens(exported, 1, edit), encoder)
    assert encoder.documents == 1, why  # the one refused drawer, and only it, costs a forward
    assert report["tokens"] == {"copied": len(TEXTS) - 1, "refused": 1}
    assert any("encoded afresh" in str(note) for note in report["notes"])  # type: ignore[attr-defined]
    assert stored == {text: _fresh(text) for text in TEXTS}  # what is stored is the true matrix


def test_matrices_swapped_between_two_drawer_lines_are_refused(exported: bytes, target: Palace) -> None:
    lines = _lines(exported)
    first, second = [line for line in lines if line.get("type") == "drawer"][:2]
    first["tokens"], second["tokens"] = second["tokens"], first["tokens"]
    encoder = Counting()
    report, stored = _import(target, _join(lines), encoder)
    assert encoder.documents == 2 and report["tokens"] == {"copied": len(TEXTS) - 2, "refused": 2}
    assert stored == {text: _fresh(text) for text in TEXTS}


def test_a_line_whose_content_was_edited_keeps_no_stale_matrix(exported: bytes, target: Palace) -> None:
    lines = _lines(exported)
    drawer = next(line for line in lines if line.get("type") == "drawer")
    body = drawer["drawer"]
    assert isinstance(body, dict)
    body["content"] = body["content"] + " and a gull"
    encoder = Counting()
    report, stored = _import(target, _join(lines), encoder)
    assert report["tokens"] == {"copied": len(TEXTS) - 1, "refused": 1}
    assert stored[body["content"]] == _fresh(body["content"])  # encoded from the words that landed


@pytest.mark.parametrize(("name", "dimension"), [("another-model", DIMENSION), ("word-tokens", 4)])
def test_matrices_of_another_encoder_or_width_are_all_refused(
    exported: bytes, target: Palace, name: str, dimension: int
) -> None:
    encoder = Counting(name, dimension)
    report, stored = _import(target, exported, encoder)
    assert encoder.documents == len(TEXTS) and report["tokens"] == {"copied": 0, "refused": len(TEXTS)}
    assert all(unpack_matrix(plain).encoder == name for plain in stored.values())  # type: ignore[union-attr]
    assert {unpack_matrix(plain).tokens.shape[1] for plain in stored.values()} == {dimension}  # type: ignore[union-attr]


def test_an_old_export_without_matrices_still_imports_and_is_encoded(exported: bytes, target: Palace) -> None:
    lines = _lines(exported)
    for line in lines:
        line.pop("tokens", None)
    encoder = Counting()
    report, stored = _import(target, _join(lines), encoder)
    assert report["drawers"] == len(TEXTS) and report["tokens"] == {"copied": 0, "refused": 0}
    assert encoder.documents == len(TEXTS) and stored == {text: _fresh(text) for text in TEXTS}


def test_without_a_late_stage_the_matrices_are_not_stored_and_the_note_says_so(exported: bytes, target: Palace) -> None:
    report, stored = _import(target, exported, None)
    assert stored == {} and report["drawers"] == len(TEXTS)
    assert any("no late stage is declared here" in str(note) for note in report["notes"])  # type: ignore[attr-defined]


def test_a_stale_stored_matrix_is_not_exported(tmp_path: Path) -> None:
    with Palace(tmp_path / "source") as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            store.attach_late_encoder(Counting())
            [result] = store.remember(TEXTS[0], wing="sea", room="log", added_by="t")
        # Put another text's matrix into the row by the store's own door (sealed under the right domain).
        with palace.open_vault("default", HashEmbedder()) as store:
            from undercroft_store.kernel.tier_tables import Envelope
            from undercroft_store.kernel.token_table import write_rows

            context = store._live()
            context.connection.execute("BEGIN IMMEDIATE")
            write_rows(context.connection, Envelope(context), [(result.seq, result.id, _fresh(TEXTS[1]))])
            context.connection.execute("COMMIT")
            data, counts = collect_export(store)
    assert "token_matrices" not in counts
    assert all("tokens" not in line for line in _lines(data))


def test_a_pq_coded_vault_exports_the_decoded_int8_form_and_another_vault_copies_it(
    tmp_path: Path, target: Palace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PQ codes mean nothing outside the vault that trained the codebook: the line carries version 1."""
    monkeypatch.setenv("UNDERCROFT_TOK_PQ_MIN", "4")
    times = ("at dawn", "at dusk", "in the rain", "again", "at noon", "in fog", "by lantern", "once more")
    many = [f"{text} {word}" for text in TEXTS for word in times]
    with Palace(tmp_path / "source") as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            store.attach_late_encoder(Counting())
            for text in many:
                store.remember(text, wing="sea", room="log", added_by="t")
            assert store.stats().token_codebook_generation == 1
            decoded = {
                text: matrix.tokens
                for text, matrix in zip(many, store.token_matrices(list(range(1, len(many) + 1))).values(), strict=True)
                if matrix is not None
            }
            data, _ = collect_export(store)
    lines = [line for line in _lines(data) if line.get("type") == "drawer"]
    assert {base64.b64decode(str(line["tokens"]))[:4] for line in lines} == {b"UCT1"}
    monkeypatch.setenv("UNDERCROFT_TOK_PQ_MIN", "1000")
    encoder = Counting()
    report, stored = _import(target, data, encoder)
    assert encoder.documents == 0 and report["tokens"] == {"copied": len(many), "refused": 0}
    for text, plain in stored.items():  # the PQ reconstruction, within int8's error of it
        matrix = unpack_matrix(plain)
        assert matrix is not None
        assert np.abs(matrix.tokens - decoded[text]).max() < 0.02
