"""End to end: the stored late-interaction stage (``UNDERCROFT_RERANKER=colbert|colbert-ort``) from the real
``undercroft`` program.

A tiny token model the test generates (tests/model_fixtures.py: ``last_hidden_state = table[input_ids]``) is the
ColBERT encoder. Every ``remember`` stores its drawer's matrix sealed; ``search`` re-orders by MaxSim over the
stored matrices (the test computes each MaxSim from the same table, so the order is known); a flipped byte in a
stored matrix is verify's integrity verdict (exit 2); ``repair`` drops it and ``repair --tokens`` rebuilds it
(exit 1, named, without the stage declared), and resumes after a SIGKILL; an export imported into another
vault rebuilds every matrix; ``forget`` leaves no byte of the forgotten drawer's matrix in the raw files. The fde
candidate tier draws from those matrices (same hits), seals one row per drawer, and a flipped row is verify's exit 2.
"""

from __future__ import annotations

import json
import os
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from live_server import palace_env
from model_fixtures import VOCAB, embedding_table, tiny_pair
from test_e2e_model_embedders import _ok, _run
from test_e2e_serve_http import _start, _stop

DRAWERS = ("car dog", "cat sleeps", "the red car runs", "a blue cat", "dog runs", "automobile invoice roof")


def _late(tmp_path: Path, runtime: str = "colbert") -> dict[str, str]:
    files = tiny_pair(tmp_path)
    return {
        "UNDERCROFT_RERANKER": runtime,
        "UNDERCROFT_COLBERT_MODEL": str(files.model),
        "UNDERCROFT_COLBERT_TOKENIZER": str(files.tokenizer),
        "UNDERCROFT_COLBERT_NAME": "tiny-colbert",
        "UNDERCROFT_ORT_POOL": "2",
    }


def _tokens(text: str) -> np.ndarray:
    ids = [2, *(VOCAB.index(word) if word in VOCAB else 1 for word in text.split()), 3]  # [CLS] … [SEP]
    rows = embedding_table(len(VOCAB))[ids].astype(np.float64)
    return rows / np.linalg.norm(rows, axis=1, keepdims=True)


def _maxsim(query: str, text: str) -> float:
    return float((_tokens(query) @ _tokens(text).T).max(axis=1).sum())


def _palace(tmp_path: Path, env: dict[str, str]) -> Path:
    home = tmp_path / "palace"
    _ok(home, "init")
    for text in DRAWERS:
        _ok(home, "remember", text, "--wing", "w", **env)
    return home


def _database(home: Path, vault: str = "default") -> Path:
    return home / "vaults" / vault / "vault.db"


def _blobs(home: Path, vault: str = "default") -> list[bytes]:
    with sqlite3.connect(_database(home, vault)) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        return [bytes(row[0]) for row in raw.execute("SELECT blob FROM drawer_tokens ORDER BY seq")]


@pytest.mark.parametrize("runtime", ["colbert", "colbert-ort"])
def test_search_reorders_by_maxsim_over_the_matrices_stored_at_write_time(tmp_path: Path, runtime: str) -> None:
    env = _late(tmp_path, runtime)
    home = _palace(tmp_path, env)
    stats = json.loads(_ok(home, "stats", "--json", **env))
    assert stats["token_matrices"] == len(DRAWERS) and stats["late_failures"] == 0
    hits = json.loads(_ok(home, "search", "--json", "red car", "--limit", "10", **env))["hits"]
    order = [hit["content"] for hit in hits]
    assert order[: len(order)] == sorted(order, key=lambda text: -_maxsim("red car", text))
    assert len(order) >= 2
    raw = b"".join(path.read_bytes() for path in home.rglob("*") if path.is_file())
    assert b"invoice" not in raw and b"tiny-colbert" not in raw  # sealed vault: nothing of a matrix in clear


def test_a_flipped_matrix_byte_fails_verify_and_repair_then_repair_tokens_mend_it(tmp_path: Path) -> None:
    env = _late(tmp_path)
    home = _palace(tmp_path, env)
    blob = _blobs(home)[2]
    database = _database(home)
    data = bytearray(database.read_bytes())
    at = data.find(blob)
    data[at + len(blob) // 2] ^= 0x01
    database.write_bytes(bytes(data))
    verdict = _run(home, "verify")
    assert verdict.returncode == 2 and "TOKENS: " in verdict.stdout and "VERIFY FAILED" in verdict.stdout
    assert _run(home, "search", "red car", **env).returncode == 0  # the damaged matrix is never scored: re-encoded
    refused = _run(home, "repair", "--tokens")
    assert refused.returncode == 1 and "UNDERCROFT_RERANKER=colbert" in refused.stderr
    assert "Traceback" not in refused.stderr
    dropped = json.loads(_ok(home, "repair", "--json"))
    assert dropped["tokens"]["dropped"] == 1 and dropped["verify_ok"]
    assert "1 missing" in _ok(home, "verify")
    built = json.loads(_ok(home, "repair", "--tokens", "--json", **env))
    assert (built["tokens"]["built"], built["tokens"]["current"]) == (1, len(DRAWERS) - 1)
    assert "0 missing, 0 stale" in _ok(home, "verify", **env)


def test_the_fde_tier_draws_from_the_stored_matrices_and_a_flipped_row_fails_verify(tmp_path: Path) -> None:
    env = _late(tmp_path)
    home = _palace(tmp_path, env)
    plain = json.loads(_ok(home, "search", "--json", "red car", "--limit", "10", **env))["hits"]
    fde = json.loads(_ok(home, "search", "--json", "red car", "--limit", "10", UNDERCROFT_RETRIEVAL="fde", **env))
    assert [hit["id"] for hit in fde["hits"]] == [hit["id"] for hit in plain]  # what is returned is the scan's
    with sqlite3.connect(_database(home)) as raw:  # the writable search persisted one sealed row per drawer
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        seq, blob = raw.execute("SELECT seq, blob FROM tier_fde_rows ORDER BY seq LIMIT 1").fetchone()
        assert raw.execute("SELECT count(*) FROM tier_fde_rows").fetchone()[0] == len(DRAWERS)
    database = _database(home)
    data = bytearray(database.read_bytes())
    at = data.find(bytes(blob))
    data[at + len(blob) // 2] ^= 0x01
    database.write_bytes(bytes(data))
    verdict = _run(home, "verify")
    assert verdict.returncode == 2 and f"tier_fde_rows row of seq {seq} fails its seal" in verdict.stdout
    again = json.loads(_ok(home, "search", "--json", "red car", "--limit", "10", UNDERCROFT_RETRIEVAL="fde", **env))
    assert again["hits"] == fde["hits"]  # the failed row is never used: its drawer is encoded again in RAM
    refused = _run(home, "search", "red car", UNDERCROFT_RETRIEVAL="fde")
    assert refused.returncode == 1 and "declare UNDERCROFT_RERANKER=colbert" in refused.stderr


def test_an_export_imported_with_the_stage_rebuilds_every_matrix(tmp_path: Path) -> None:
    env = _late(tmp_path)
    home = _palace(tmp_path, env)
    export = tmp_path / "export.jsonl"
    _ok(home, "export", "--out", str(export))
    _ok(home, "vault", "create", "copy")
    _ok(home, "import", str(export), "--vault", "copy", **env)
    stats = json.loads(_ok(home, "stats", "--json", "--vault", "copy", **env))
    assert stats["token_matrices"] == len(DRAWERS)
    assert "0 missing" in _ok(home, "verify", "--vault", "copy")


def test_forget_leaves_no_byte_of_the_matrix_in_the_raw_files(tmp_path: Path) -> None:
    env = _late(tmp_path)
    home = _palace(tmp_path, env)
    listed = json.loads(_ok(home, "search", "--json", "automobile invoice", "--limit", "10", **env))["hits"]
    target = next(hit["id"] for hit in listed if hit["content"] == DRAWERS[-1])
    before = _blobs(home)
    _ok(home, "forget", target, **env)
    after = _blobs(home)
    [gone] = [blob for blob in before if blob not in after]
    files = [path.read_bytes() for path in _database(home).parent.glob("vault.db*")]
    for start in range(0, len(gone) - 32, 32):
        assert not any(gone[start : start + 32] in data for data in files)
    assert json.loads(_ok(home, "stats", "--json"))["token_matrices"] == len(DRAWERS) - 1


KILLED = 30
BATCH = 5
CHILD = """
import os, sys, time
from undercroft_core import HashEmbedder
from undercroft_embed_onnx import OnnxLateEncoder
from undercroft_store import Palace
from undercroft_store.integrity.repair import repair_vault

class Slow(OnnxLateEncoder):
    def _encode_batch(self, texts, *, query):
        time.sleep(0.3)
        return super()._encode_batch(texts, query=query)

def progress(step, done, total):
    if step == "tokens":
        print(f"tokens {done}/{total}", file=sys.stderr, flush=True)

encoder = Slow(os.environ["UNDERCROFT_COLBERT_MODEL"], os.environ["UNDERCROFT_COLBERT_TOKENIZER"], name="tiny-colbert")
with Palace.from_env(os.environ) as palace:
    repair_vault(palace, "default", HashEmbedder(), batch=int(sys.argv[1]), progress=progress, tokens=True,
                 prepare=lambda store: store.attach_late_encoder(encoder))
"""


def test_a_killed_repair_tokens_resumes_without_encoding_the_done_drawers_again(tmp_path: Path) -> None:
    env = _late(tmp_path)
    home = tmp_path / "palace"
    _ok(home, "init")
    notes = tmp_path / "notes"
    notes.mkdir()
    for n in range(KILLED):
        (notes / f"n{n:02d}.md").write_text(f"the red car number {n} runs\n", encoding="utf-8")
    _ok(home, "mine", str(notes))  # before the stage was declared: no matrix
    assert json.loads(_ok(home, "stats", "--json"))["token_matrices"] == 0
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(BATCH)], env=palace_env(home, **env), stderr=subprocess.PIPE, text=True
    )
    assert child.stderr is not None
    seen = []
    for line in child.stderr:
        seen.append(line)
        if line.startswith(f"tokens {2 * BATCH}/"):
            os.kill(child.pid, signal.SIGKILL)  # mid-run: the third batch is sleeping inside the model
            break
    assert child.wait(30) == -signal.SIGKILL, seen
    verified = _run(home, "verify")
    assert verified.returncode == 0 and f"{2 * BATCH} stored, 0 failed" in verified.stdout, verified.stdout
    resumed = _run(home, "repair", "--tokens", "--json", **env)
    assert resumed.returncode == 0, resumed.stderr
    tokens = json.loads(resumed.stdout)["tokens"]
    assert (tokens["current"], tokens["built"]) == (2 * BATCH, KILLED - 2 * BATCH), tokens
    assert f"repair: token matrices {KILLED - 2 * BATCH}/{KILLED - 2 * BATCH}" in resumed.stderr
    assert f"{KILLED} stored, 0 failed, 0 missing, 0 stale" in _ok(home, "verify", **env)


def test_v1_repair_builds_the_matrices_with_tokens_true(tmp_path: Path) -> None:
    env = _late(tmp_path)
    home = tmp_path / "palace"
    _ok(home, "init")
    for text in DRAWERS:
        _ok(home, "remember", text, "--wing", "w")  # before the stage was declared: no matrix
    server = _start(home, **env)
    try:
        refused = server.v1("POST", "/v1/vaults/default/repair", json={"tokens": "yes"})
        assert refused.status_code == 400, refused.text
        built = server.v1("POST", "/v1/vaults/default/repair", json={"tokens": True})
        assert built.status_code == 200, built.text
        assert built.json()["tokens"]["built"] == len(DRAWERS) and built.json()["verify_ok"]
        again = server.v1("POST", "/v1/vaults/default/repair")
        assert again.status_code == 200 and again.json()["tokens"]["current"] == len(DRAWERS), again.text
        stats = server.v1("GET", "/v1/vaults/default/stats").json()
        assert stats["token_matrices"] == len(DRAWERS), stats
    finally:
        _stop(server)
