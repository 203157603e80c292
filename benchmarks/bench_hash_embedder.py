"""Hash embedder throughput: 1,000 drawers of 800 characters, against raw baselines measured in the same run.

    python benchmarks/bench_hash_embedder.py [--smoke]

Figures: the vectorised embedder (float32 and the exact int8 form); baselines: a plain tokenising pass
(casefold + regex word split, no hashing) and the same features hashed with SHA-256 one at a time in
Python — the "SHA-256 or a faster keyed-free hash — measure" decision.
"""

from __future__ import annotations

import argparse
import hashlib
import itertools
import re
import sys
import time
from collections.abc import Callable

import numpy as np
from undercroft_core import HashEmbedder, chunk

WORD = re.compile(r"\w+")


def corpus(count: int, seed: int = 11) -> list[str]:
    """``count`` drawers of 800 characters of mixed-language prose-like text (deterministic)."""
    rng = np.random.default_rng(seed)
    letters = list("abcdefghijklmnopqrstuvwxyzäöüéèßñ") + list("абвгдежзиклмнопрст")
    vocabulary = [
        "".join(rng.choice(letters[:33] if i % 5 else letters, size=rng.integers(2, 11))) for i in range(5000)
    ]
    drawers = []
    while len(drawers) < count:
        words = rng.choice(vocabulary, size=400)
        text = " ".join(w + ("." if rng.random() < 0.08 else "") for w in words)
        drawers.extend(piece.text for piece in chunk(text) if len(piece.text) >= 700)
    return [(d + " " + d)[:800] for d in drawers[:count]]


def best_of(repeats: int, action: Callable[[], object]) -> float:
    """Fastest of ``repeats`` wall-clock runs, in seconds."""
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        action()
        times.append(time.perf_counter() - start)
    return min(times)


def tokenise_only(texts: list[str]) -> int:
    """Baseline: casefold and split into words, nothing else."""
    return sum(len(WORD.findall(text.casefold())) for text in texts)


def sha256_per_feature(texts: list[str], dimension: int = 384) -> np.ndarray:
    """Baseline: unigrams, bigrams and padded trigrams, each SHA-256'd in a Python loop."""
    out = np.zeros((len(texts), dimension))
    for row, text in enumerate(texts):
        words = WORD.findall(text.casefold())
        features = [("u", w) for w in words] + [("b", a + " " + b) for a, b in itertools.pairwise(words)]
        for w in words:
            padded = f" {w} "
            features.extend(("t", padded[i : i + 3]) for i in range(len(padded) - 2))
        for kind, feature in features:
            digest = hashlib.sha256((kind + feature).encode()).digest()
            value = int.from_bytes(digest[:8], "little")
            out[row, value % dimension] += 1.0 if value >> 63 == 0 else -1.0
    return out


def main() -> int:
    """Run and print each figure beside its baselines."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="a tiny run that only checks the instrument works")
    args = parser.parse_args()
    count, repeats = (50, 1) if args.smoke else (1000, 5)
    texts = corpus(count)
    embedder = HashEmbedder()
    embedder.embed(texts[:2])  # build the code-point table once, outside the timing
    chars = sum(len(t) for t in texts)
    print(f"corpus: {count} drawers, {chars} characters, mean {chars / count:.0f}")
    baseline_tokens = best_of(repeats, lambda: tokenise_only(texts))
    float_time = best_of(repeats, lambda: embedder.embed(texts))
    int8_time = best_of(repeats, lambda: embedder.embed_int8(texts))
    sha_time = best_of(1, lambda: sha256_per_feature(texts))
    print(f"baseline tokenise only (casefold + regex split):  {baseline_tokens * 1000:8.1f} ms")
    print(f"baseline SHA-256 per feature (Python loop):        {sha_time * 1000:8.1f} ms")
    print(f"HashEmbedder.embed (float32, 384):                 {float_time * 1000:8.1f} ms")
    print(f"HashEmbedder.embed_int8 (exact int8 + scale):      {int8_time * 1000:8.1f} ms")
    speed_up = sha_time / float_time
    print(f"per drawer: {float_time / count * 1e6:.0f} µs; speed-up over SHA-256 per feature: {speed_up:.1f}x")
    assert embedder.embed_failures == 0
    return 0


if __name__ == "__main__":
    sys.exit(main())
