"""How long another writer waits while a vault trains its token codebook (issue 24).

A vault crosses ``UNDERCROFT_TOK_PQ_MIN`` stored token matrices on one write, which trains the codebook and re-codes
every matrix. This instrument fills a sealed vault to one matrix short of the threshold (a synthetic late encoder,
384 wide, hashed word vectors), then makes the crossing write while a second connection takes the write lock in a
loop (``BEGIN IMMEDIATE; COMMIT``, one attempt every 5 ms) and records how long each attempt waited.

    python benchmarks/bench_token_training_lock.py [--matrices 256] [--smoke]
"""

from __future__ import annotations

import argparse
import hashlib
import os
import sqlite3
import tempfile
import threading
import time
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from undercroft_core import HashEmbedder
from undercroft_core.model_roles import DegradingLateEncoder
from undercroft_store import Palace

WIDTH = 384
WORDS = [f"w{i}" for i in range(2000)]


def _word(word: str) -> NDArray[np.float32]:
    seed = int.from_bytes(hashlib.sha256(word.encode()).digest()[:8], "little")
    return np.random.default_rng(seed).normal(size=WIDTH).astype(np.float32)


class _Words(DegradingLateEncoder):
    def __init__(self) -> None:
        super().__init__("bench-word-tokens", WIDTH)

    def _encode_batch(self, texts: list[str], *, query: bool) -> list[NDArray[np.floating]]:
        return [np.stack([_word(word) for word in text.split()]) for text in texts]


def _text(i: int, tokens: int) -> str:
    rng = np.random.default_rng(i)
    return " ".join(WORDS[j] for j in rng.choice(len(WORDS), size=tokens, replace=False))


def main() -> None:
    """Run the instrument and print the waits."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--matrices", type=int, default=256, help="the threshold (UNDERCROFT_TOK_PQ_MIN)")
    parser.add_argument("--tokens", type=int, default=60, help="tokens per matrix")
    parser.add_argument("--smoke", action="store_true", help="a tiny run (nox -s bench-smoke)")
    args = parser.parse_args()
    matrices, tokens = (40, 20) if args.smoke else (args.matrices, args.tokens)
    os.environ["UNDERCROFT_TOK_PQ_MIN"] = str(matrices)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "palace"
        with Palace(home) as palace:
            palace.init()
            with palace.open_vault("default", HashEmbedder()) as store:
                store.attach_late_encoder(_Words())
                for i in range(matrices - 1):
                    store.remember(_text(i, tokens), wing="w", room="r", added_by="bench")
                waits: list[float] = []
                stop = threading.Event()

                def contend() -> None:
                    raw = sqlite3.connect(home / "vaults" / "default" / "vault.db", timeout=60, isolation_level=None)
                    try:
                        while not stop.is_set():
                            started = time.perf_counter()
                            raw.execute("BEGIN IMMEDIATE")
                            raw.execute("COMMIT")
                            waits.append(time.perf_counter() - started)
                            time.sleep(0.005)
                    finally:
                        raw.close()

                thread = threading.Thread(target=contend)
                thread.start()
                time.sleep(0.05)
                started = time.perf_counter()
                store.remember(_text(matrices, tokens), wing="w", room="r", added_by="bench")
                crossing = time.perf_counter() - started
                stop.set()
                thread.join()
                generation = store.stats().token_codebook_generation
    ordered = sorted(waits)
    print(f"matrices {matrices} x {tokens} tokens x {WIDTH} wide; codebook generation {generation}")
    print(f"  the crossing write (train + re-code): {crossing * 1000:,.0f} ms")
    p99, median = ordered[int(0.99 * (len(ordered) - 1))], ordered[len(ordered) // 2]
    print(
        f"  another writer's lock waits over {len(waits)} attempts: max {ordered[-1] * 1000:,.1f} ms, "
        f"p99 {p99 * 1000:,.1f} ms, median {median * 1000:,.2f} ms"
    )


if __name__ == "__main__":
    main()
