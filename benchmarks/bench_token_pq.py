"""Stored token matrices, int8 vs PQ (issue 24 §3): MaxSim rank agreement with float32 and bytes per token.

    python benchmarks/bench_token_pq.py [--docs 2000 --queries 200]            # synthetic token vectors
    UNDERCROFT_ONNX_MODEL=… UNDERCROFT_ONNX_TOKENIZER=… python benchmarks/bench_token_pq.py --minilm

LoCoMo-free. The ``synthetic`` arm: ``--docs`` documents of 12–40 tokens, each token a unit vector drawn near
one of 2,000 "word" directions (384 wide, Gaussian noise σ=0.35 before normalising), so documents share
vocabulary as text does. The ``minilm`` arm (``--minilm``): MiniLM int8's own token states (`OrtLateEncoder`,
the honest late encoder: no trained ColBERT model exists offline) over sentences sampled from a fixed word list.
Queries: 3–8 tokens of a random document, re-noised (synthetic) or the first words of a document (minilm).

Every matrix goes through the store's own codecs — `pack_matrix` (int8 + a float16 scale a token, version 1)
and `pack_pq` against a codebook trained by `train_token_codebook` on the corpus (what `compress_matrices`
does at ``UNDERCROFT_TOK_PQ_MIN``) — and `unpack_matrix` decodes it. Each query ranks every document by
MaxSim three ways (float32, int8, PQ); reported: how often each top-1 equals float32's, the mean overlap of
each top-10 with float32's, and the plaintext bytes per token of each stored form (the seal adds a fixed
per-row overhead to both).
"""

from __future__ import annotations

import argparse
import os
import sys
import time

import numpy as np
from numpy.typing import NDArray
from undercroft_core.late_interaction import maxsim_many
from undercroft_index.token_pq import train_token_codebook
from undercroft_store.kernel.token_codebook import StoredCodebook
from undercroft_store.kernel.token_table import pack_matrix, pack_pq, unpack_matrix

DIMENSION = 384
WORDS = 2000


def _unit(rows: NDArray[np.float32]) -> NDArray[np.float32]:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def _synthetic(docs: int, queries: int) -> tuple[list[NDArray[np.float32]], list[NDArray[np.float32]]]:
    rng = np.random.default_rng(7)
    words = _unit(rng.normal(size=(WORDS, DIMENSION)).astype(np.float32))
    ids = [rng.integers(0, WORDS, size=int(rng.integers(12, 41))) for _ in range(docs)]

    def noisy(picked: NDArray[np.int64]) -> NDArray[np.float32]:
        return _unit(words[picked] + rng.normal(scale=0.35 / np.sqrt(DIMENSION), size=(len(picked), DIMENSION)))

    matrices = [noisy(row) for row in ids]
    asked = []
    for _ in range(queries):
        source = ids[int(rng.integers(0, docs))]
        asked.append(noisy(rng.choice(source, size=min(len(source), int(rng.integers(3, 9))), replace=False)))
    return matrices, asked


def _minilm(docs: int, queries: int) -> tuple[list[NDArray[np.float32]], list[NDArray[np.float32]]]:
    from undercroft_embed_ort import OrtLateEncoder

    encoder = OrtLateEncoder(
        os.environ["UNDERCROFT_ONNX_MODEL"], os.environ["UNDERCROFT_ONNX_TOKENIZER"], name="minilm-tokens"
    )
    vocabulary = (
        "keeper lighthouse storm harbour night boat reef gull lantern tide fog rope anchor mast sail wave shore "
        "cliff beacon signal logbook compass chart current meeting budget garden recipe trip museum concert "
        "doctor school project deadline painting guitar marathon puppy birthday wedding camera bakery library"
    ).split()
    rng = np.random.default_rng(11)
    texts = [" ".join(str(word) for word in rng.choice(vocabulary, size=int(rng.integers(6, 20)))) for _ in range(docs)]
    matrices = [np.asarray(m, dtype=np.float32) for m in encoder.encode_documents(texts)]
    picks = rng.integers(0, docs, size=queries)
    asked = [np.asarray(encoder.encode_query(" ".join(texts[i].split()[:4])), dtype=np.float32) for i in picks]
    return matrices, asked


def _top(query: NDArray[np.float32], matrices: list[NDArray[np.float32]], k: int) -> NDArray[np.int64]:
    scores = np.asarray(maxsim_many(query, matrices))
    return np.argsort(-scores, kind="stable")[:k]


def run(arm: str, docs: int, queries: int) -> None:
    started = time.perf_counter()
    exact, asked = (_minilm if arm == "minilm" else _synthetic)(docs, queries)
    width = exact[0].shape[1]
    tokens = sum(m.shape[0] for m in exact)
    v1 = [pack_matrix("bench", f"doc {i}", m) for i, m in enumerate(exact)]
    trained = time.perf_counter()
    sample = np.concatenate([unpack_matrix(plain).tokens for plain in v1])  # type: ignore[union-attr]
    stored = StoredCodebook(1, train_token_codebook(sample[:: max(1, len(sample) // 65536)]))
    trained = time.perf_counter() - trained
    v2 = [pack_pq(plain, stored) for plain in v1]
    int8 = [unpack_matrix(plain).tokens for plain in v1]  # type: ignore[union-attr]
    pq = [unpack_matrix(plain, stored).tokens for plain in v2]  # type: ignore[union-attr]
    header = len(v1[0]) - exact[0].shape[0] * (2 + width)
    header_pq = len(v2[0]) - exact[0].shape[0] * stored.codebook.subquantizers
    top1 = {"int8": 0, "pq": 0}
    overlap = {"int8": 0.0, "pq": 0.0}
    for query in asked:
        truth = _top(query, exact, 10)
        for name, matrices in (("int8", int8), ("pq", pq)):
            got = _top(query, matrices, 10)
            top1[name] += int(got[0] == truth[0])
            overlap[name] += len(set(got.tolist()) & set(truth.tolist())) / 10
    print(
        f"arm {arm}: {docs} docs, {tokens} tokens, {width} wide, {queries} queries; codebook trained in "
        f"{trained:.1f}s ({stored.codebook.subquantizers} sub-quantisers)"
    )
    for name, plains, fixed in (("int8 (v1)", v1, header), ("pq (v2)", v2, header_pq)):
        per = (sum(len(p) for p in plains) - fixed * len(plains)) / tokens
        print(
            f"  {name}: {per:.1f} B/token of codes (+{fixed} B a row of header), "
            f"{sum(len(p) for p in plains) / tokens:.1f} B/token all in"
        )
    for name in ("int8", "pq"):
        print(
            f"  {name}: top-1 = float32's in {top1[name]}/{queries} ({100 * top1[name] / queries:.1f}%), "
            f"top-10 overlap {100 * overlap[name] / queries:.1f}%"
        )
    print(f"  ({time.perf_counter() - started:.1f}s)", flush=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--docs", type=int, default=2000)
    parser.add_argument("--queries", type=int, default=200)
    parser.add_argument("--minilm", action="store_true", help="also the MiniLM token-state arm")
    parser.add_argument("--smoke", action="store_true", help="a tiny synthetic run (nox -s bench-smoke)")
    args = parser.parse_args()
    if args.smoke:
        args.docs, args.queries, args.minilm = 300, 10, False
    if args.minilm and not os.environ.get("UNDERCROFT_ONNX_MODEL"):
        print("bench_token_pq: --minilm needs UNDERCROFT_ONNX_MODEL / _TOKENIZER", file=sys.stderr)
        return 1
    run("synthetic", args.docs, args.queries)
    if args.minilm:
        run("minilm", args.docs, args.queries)
    return 0


if __name__ == "__main__":
    sys.exit(main())
