"""End to end: a model swap's ``repair`` killed with SIGKILL mid-run resumes, and the vault verifies throughout.

The interrupted run is a child process re-embedding into a tiny generated model through the store's own
`repair_vault`, slowed per batch so the kill lands between two commits deterministically; the resume is the
real ``undercroft repair`` program, whose progress lines go to stderr and whose JSON report says how many
drawers the killed run had already done (they are not embedded again).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
sys.path.insert(0, str(Path(__file__).resolve().parent))
from live_server import palace_env
from model_fixtures import tiny_pair
from test_e2e_model_embedders import _run

DRAWERS = 30
BATCH = 5
CHILD = """
import os, sys, time
from undercroft_embed_onnx import OnnxEmbedder
from undercroft_store import Palace
from undercroft_store.integrity.repair import repair_vault

class Slow(OnnxEmbedder):
    def _embed_batch(self, texts):
        time.sleep(0.3)
        return super()._embed_batch(texts)

def progress(step, done, total):
    if step == "reembed":
        print(f"embed {done}/{total}", file=sys.stderr, flush=True)

embedder = Slow(os.environ["UNDERCROFT_ONNX_MODEL"], os.environ["UNDERCROFT_ONNX_TOKENIZER"], name="tiny-e2e")
with Palace.from_env(os.environ) as palace:
    repair_vault(palace, "default", embedder, batch=int(sys.argv[1]), progress=progress)
"""


def test_a_killed_model_swap_repair_resumes_and_the_vault_verifies(tmp_path: Path) -> None:
    files = tiny_pair(tmp_path)
    home = tmp_path / "palace"
    assert _run(home, "init").returncode == 0
    notes = tmp_path / "notes"
    notes.mkdir()
    for n in range(DRAWERS):
        (notes / f"n{n:02d}.md").write_text(f"the red car number {n} runs\n", encoding="utf-8")
    assert _run(home, "mine", str(notes)).returncode == 0  # the hash default
    model = {
        "UNDERCROFT_EMBEDDER": "onnx",
        "UNDERCROFT_ONNX_MODEL": str(files.model),
        "UNDERCROFT_ONNX_TOKENIZER": str(files.tokenizer),
        "UNDERCROFT_ONNX_NAME": "tiny-e2e",
        "UNDERCROFT_FORCE_EMBEDDER": "1",
    }
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD, str(BATCH)], env=palace_env(home, **model), stderr=subprocess.PIPE, text=True
    )
    assert child.stderr is not None
    seen = []
    for line in child.stderr:
        seen.append(line)
        if line.startswith(f"embed {2 * BATCH}/"):
            os.kill(child.pid, signal.SIGKILL)  # mid-run: the third batch is sleeping inside the model
            break
    assert child.wait(30) == -signal.SIGKILL, seen
    # Killed mid-migration, the vault is still the hash vault by record and verifies clean.
    verified = _run(home, "verify")
    assert verified.returncode == 0, verified.stdout + verified.stderr
    resumed = _run(home, "repair", "--json", **model)
    assert resumed.returncode == 0, resumed.stderr
    report = json.loads(resumed.stdout)
    assert report["embeddings_resumed"] == 2 * BATCH, report  # the killed run's two committed batches
    assert report["embeddings_reembedded"] == DRAWERS - 2 * BATCH and report["identity_recorded"] == "tiny-e2e@8"
    assert report["verify_ok"] and f"repair: re-embedded {DRAWERS - 2 * BATCH}/{DRAWERS - 2 * BATCH}" in resumed.stderr
    unforced = {k: v for k, v in model.items() if k != "UNDERCROFT_FORCE_EMBEDDER"}
    assert _run(home, "verify", **unforced).returncode == 0
    hits = json.loads(_run(home, "search", "--json", "red car number 7", **unforced).stdout)["hits"]
    assert hits and "number 7 " in hits[0]["content"]
