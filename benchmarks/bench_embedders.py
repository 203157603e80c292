"""The in-process model embedders against the hash default, in one sitting (issue 24).

    UNDERCROFT_ONNX_MODEL=… UNDERCROFT_ONNX_TOKENIZER=… python benchmarks/bench_embedders.py locomo OUT_DIR
    UNDERCROFT_ONNX_MODEL=… UNDERCROFT_ONNX_TOKENIZER=… python benchmarks/bench_embedders.py ingest [--limit N]
    python benchmarks/bench_embedders.py --smoke     # bench-smoke: the ingest timing path on 64 synthetic drawers

``locomo``: LoCoMo (dev split, the protocol of ``undercroft-bench locomo``) with the hash embedder and with the
model embedder under several calibrations, in one process. The model's vectors are computed once (a cache
keyed by the exact text, in RAM only) and reused by every calibration row, so a row costs its searches and
not a re-embed; the first model row is the shipped default and reproduces ``--arm undercroft-ort`` exactly.
Each row writes ``OUT_DIR/<row>.json`` (the instrument's own report), for ``compare_locomo.py``.

``maxsim``: the honest real-model late-interaction arm. No trained ColBERT model can be had offline, so the
hash default's top ``--pool`` candidates are re-ordered by MaxSim over MiniLM's own token outputs (the
model's ``last_hidden_state`` rows, L2-normalised, through the ort late-encoder role), beside the hash arm.

``rescore``: the product's rescore tier (``UNDERCROFT_RERANKER``'s path: `Searcher` re-orders its fused top
``UNDERCROFT_RERANK_TOP_N`` through an attached `CrossEncoder`) on and off, with the MiniLM embedder and with
the hash default. No trained cross-encoder exists offline, so the scorer attached is MaxSim over MiniLM's
token states (`MaxSimScorer`, a `CrossEncoder` over the ort late-encoder role, each chunk's matrix encoded
once and kept in RAM — what ingest-time encoding would store). It measures the tier's plumbing and what
this scorer does to the ranking, not what a trained cross-encoder would.

``late``: the stored late-interaction stage (``UNDERCROFT_RERANKER=colbert``'s path: each chunk's token matrix
encoded once at write time and stored sealed under ``{id}/tok``, `Searcher` re-ordering its fused top
``UNDERCROFT_LATE_TOP_N`` by MaxSim over the stored matrices) beside the query-time path (`MaxSimScorer` through
the cross-encoder tier, matrices held in RAM) and beside the stage off, on the hash default and on MiniLM, in
one process. The late encoder is MiniLM's own token states (`OrtLateEncoder`), each text encoded once and
cached in RAM (`CachedLateEncoder`) so the rows share one encode; the stored rows still pack, seal, store,
open and dequantise every matrix they score.

``late-pq``: the stored stage with its matrices as stored below ``UNDERCROFT_TOK_PQ_MIN`` (int8, ``UCT1``) against
the same stage with every matrix PQ-coded (``UNDERCROFT_TOK_PQ_MIN=32``: each conversation's vault trains its
own token codebook once 32 matrices are stored, then codes every matrix, ``UCT2``), beside the stage off, on the
hash default; how many vaults trained a codebook is counted, so a row that never coded is visible.

``ingest``: drawers/s through the store's write path (a sealed vault, one batch) for hash, onnx, ort with a
pool of 1 (one batched all-core forward) and ort with a pool of single-thread sessions, on the same LoCoMo
chunks, interleaved so the machine's noise lands on every arm.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import sys
import tempfile
import time
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray
from undercroft_bench.chunking import CHUNKERS
from undercroft_bench.locomo_data import load_locomo
from undercroft_bench.locomo_eval import LocomoSettings, format_locomo, locomo_json, run_locomo
from undercroft_bench.undercroft_arm import UndercroftRetriever
from undercroft_core import DegradingCrossEncoder, Drawer, Embedder, EmbedderIdentity, HashEmbedder
from undercroft_store import DrawerWrite, Palace, Screen

DATA = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo" / "locomo-dev.json"

#: (row name, environment declared for that row). The first model row is the shipped default.
CALIBRATIONS: tuple[tuple[str, dict[str, str]], ...] = (
    ("minilm-default", {}),
    ("minilm-floor-0", {"UNDERCROFT_SEMANTIC_FLOOR": "0"}),
    ("minilm-gate-off", {"UNDERCROFT_SEMANTIC_GATE": "off"}),
    ("minilm-gate-0.45", {"UNDERCROFT_SEMANTIC_GATE": "0.45"}),
    ("minilm-weight-0.70", {"UNDERCROFT_FUSION_WEIGHT": "0.70"}),
    ("minilm-weight-0.35", {"UNDERCROFT_FUSION_WEIGHT": "0.35"}),
)


class CachedEmbedder:
    """Delegates to ``inner``, remembering each text's vector (RAM only) so calibration rows share one embed."""

    def __init__(self, inner: Embedder) -> None:
        self.inner = inner
        self.cache: dict[str, NDArray[np.float32]] = {}

    @property
    def identity(self) -> EmbedderIdentity:
        return self.inner.identity

    @property
    def dimension(self) -> int:
        return self.inner.dimension

    @property
    def embed_failures(self) -> int:
        return self.inner.embed_failures

    @property
    def semantic_admission_gate(self) -> float | None:
        return self.inner.semantic_admission_gate

    @property
    def semantic_floor(self) -> float:
        return self.inner.semantic_floor

    def embed(self, texts: Sequence[str]) -> NDArray[np.float32]:
        missing = list(dict.fromkeys(text for text in texts if text not in self.cache))
        if missing:
            for text, row in zip(missing, self.inner.embed(missing), strict=True):
                self.cache[text] = row
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.stack([self.cache[text] for text in texts])


def _model(runtime: str, pool: int | None = None) -> Embedder:
    if runtime == "onnx":
        from undercroft_embed_onnx import OnnxEmbedder

        return OnnxEmbedder.from_env()
    from undercroft_embed_ort import OrtEmbedder

    env = dict(os.environ) if pool is None else {**os.environ, "UNDERCROFT_ORT_POOL": str(pool)}
    return OrtEmbedder.from_env(env)


def _run(
    conversations: list, embedder: Embedder, arm: str, out: pathlib.Path, row: str, scorer: object = None
) -> dict[str, object]:
    def factory(context: object) -> UndercroftRetriever:
        return UndercroftRetriever(context, embedder=embedder, cross_encoder=scorer)  # type: ignore[arg-type]

    started = time.perf_counter()
    report = run_locomo(conversations, LocomoSettings(arm=arm), factory=factory)
    wall = time.perf_counter() - started
    for line in format_locomo(report, DATA.name):
        print(f"[{row}] {line}", flush=True)
    document = locomo_json(report, {"path": str(DATA)})
    document["row"] = row
    document["environment"] = {
        k: v for k, v in os.environ.items() if k.startswith("UNDERCROFT_SEMANTIC_") or k == "UNDERCROFT_FUSION_WEIGHT"
    }
    (out / f"{row}.json").write_text(json.dumps(document, indent=1), encoding="utf-8")
    return {"row": row, "wall_seconds": round(wall, 1)}


def locomo(out: pathlib.Path) -> None:
    """Hash, then the model under each calibration (one embed of every text, shared by the rows)."""
    out.mkdir(parents=True, exist_ok=True)
    conversations = load_locomo(DATA)
    print(_run(conversations, HashEmbedder(), "undercroft", out, "hash"), flush=True)
    model = CachedEmbedder(_model("ort"))
    print(f"model {model.identity.label}: gate {model.semantic_admission_gate}, floor {model.semantic_floor}")
    for row, declared in CALIBRATIONS:
        saved = {name: os.environ.get(name) for name in declared}
        os.environ.update(declared)
        try:
            print(_run(conversations, model, "undercroft-ort", out, row), flush=True)
        finally:
            for name, value in saved.items():
                if value is None:
                    os.environ.pop(name, None)
                else:
                    os.environ[name] = value


class MaxSimRescore:
    """The hash arm's candidates for a scope, re-ordered by MaxSim of the query's tokens over each chunk's."""

    def __init__(self, context: object, encoder: object) -> None:
        self.inner = UndercroftRetriever(context)  # type: ignore[arg-type]
        self.encoder = encoder
        self.scope_id = self.inner.scope_id
        self.matrices: dict[str, NDArray[np.float32]] = {}

    def index(self, chunks: Sequence[object]) -> None:
        self.inner.index(chunks)  # type: ignore[arg-type]
        texts = [chunk.text for chunk in chunks]  # type: ignore[attr-defined]
        for chunk, matrix in zip(chunks, self.encoder.encode_documents(texts), strict=True):  # type: ignore[attr-defined]
            self.matrices[chunk.chunk_id] = matrix  # type: ignore[attr-defined]

    def search(self, question: str, k: int) -> list[str]:
        from undercroft_core import maxsim_many

        candidates = self.inner.search(question, k)
        query = self.encoder.encode_query(question)  # type: ignore[attr-defined]
        scores = maxsim_many(query, [self.matrices[chunk_id] for chunk_id in candidates])
        order = sorted(range(len(candidates)), key=lambda index: (-scores[index], index))
        return [candidates[index] for index in order]


def maxsim(out: pathlib.Path) -> None:
    """Hash, then hash candidates re-ordered by MaxSim over MiniLM token states."""
    from undercroft_embed_ort import OrtLateEncoder

    out.mkdir(parents=True, exist_ok=True)
    conversations = load_locomo(DATA)
    print(_run(conversations, HashEmbedder(), "undercroft", out, "hash-again"), flush=True)
    encoder = OrtLateEncoder(
        os.environ["UNDERCROFT_ONNX_MODEL"], os.environ["UNDERCROFT_ONNX_TOKENIZER"], name="minilm-tokens"
    )
    started = time.perf_counter()
    report = run_locomo(
        conversations, LocomoSettings(arm="undercroft"), factory=lambda context: MaxSimRescore(context, encoder)
    )
    for line in format_locomo(report, DATA.name):
        print(f"[maxsim] {line}", flush=True)
    document = locomo_json(report, {"path": str(DATA)})
    document["row"] = "hash+maxsim-minilm-tokens"
    (out / "hash-maxsim.json").write_text(json.dumps(document, indent=1), encoding="utf-8")
    print(
        {
            "row": "maxsim",
            "wall_seconds": round(time.perf_counter() - started, 1),
            "late_failures": encoder.late_failures,
        }
    )


class MaxSimScorer(DegradingCrossEncoder):
    """A `CrossEncoder` scoring (query, passage) by MaxSim of the query's token states over the passage's.

    Each passage's matrix is encoded once and kept (RAM only, keyed by the exact text), the query's once per
    distinct query: the rescore tier then costs one query forward per search, as a stored-matrix stage would."""

    def __init__(self, encoder: object) -> None:
        super().__init__("maxsim-minilm-tokens")
        self.encoder = encoder
        self.matrices: dict[str, NDArray[np.float32]] = {}
        self.queries: dict[str, NDArray[np.float32]] = {}

    def _score_batch(self, query: str, passages: list[str]) -> NDArray[np.floating]:
        from undercroft_core import maxsim_many

        missing = [text for text in dict.fromkeys(passages) if text not in self.matrices]
        if missing:
            self.matrices.update(zip(missing, self.encoder.encode_documents(missing), strict=True))  # type: ignore[attr-defined]
        if query not in self.queries:
            self.queries[query] = self.encoder.encode_query(query)  # type: ignore[attr-defined]
        return np.asarray(
            maxsim_many(self.queries[query], [self.matrices[text] for text in passages]), dtype=np.float32
        )


class CachedLateEncoder:
    """Delegates to ``inner``, remembering each text's matrix (RAM only) so the rows share one encode."""

    def __init__(self, inner: object) -> None:
        self.inner = inner
        self.documents: dict[str, NDArray[np.float32]] = {}
        self.queries: dict[str, NDArray[np.float32]] = {}

    @property
    def name(self) -> str:
        return str(self.inner.name)  # type: ignore[attr-defined]

    @property
    def dimension(self) -> int:
        return int(self.inner.dimension)  # type: ignore[attr-defined]

    @property
    def late_failures(self) -> int:
        return int(self.inner.late_failures)  # type: ignore[attr-defined]

    def encode_query(self, text: str) -> NDArray[np.float32]:
        if text not in self.queries:
            self.queries[text] = self.inner.encode_query(text)  # type: ignore[attr-defined]
        return self.queries[text]

    def encode_documents(self, texts: Sequence[str]) -> list[NDArray[np.float32]]:
        missing = [text for text in dict.fromkeys(texts) if text not in self.documents]
        if missing:
            self.documents.update(zip(missing, self.inner.encode_documents(missing), strict=True))  # type: ignore[attr-defined]
        return [self.documents[text] for text in texts]


class _Declared:
    """Declare ``UNDERCROFT_*`` variables for one row (the searcher reads them) and restore them after."""

    def __init__(self, declared: dict[str, str]) -> None:
        self.declared = declared
        self.saved = {name: os.environ.get(name) for name in declared}

    def __enter__(self) -> None:
        os.environ.update(self.declared)

    def __exit__(self, *_: object) -> None:
        for name, value in self.saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _late_row(
    conversations: list, embedder: Embedder, arm: str, out: pathlib.Path, row: str, late: CachedLateEncoder
) -> dict[str, object]:
    stages: list[object] = []
    codebooks: list[int | None] = []

    class Counted(UndercroftRetriever):
        def index(self, chunks: Sequence[object]) -> None:
            super().index(chunks)  # type: ignore[arg-type]
            codebooks.append(self._store.stats().token_codebook_generation)

    def factory(context: object) -> UndercroftRetriever:
        retriever = Counted(context, embedder=embedder, late_encoder=late)  # type: ignore[arg-type]
        stages.append(retriever._searcher.rescore)
        return retriever

    started = time.perf_counter()
    report = run_locomo(conversations, LocomoSettings(arm=arm), factory=factory)
    wall = time.perf_counter() - started
    for line in format_locomo(report, DATA.name):
        print(f"[{row}] {line}", flush=True)
    document = locomo_json(report, {"path": str(DATA)})
    document["row"] = row
    (out / f"{row}.json").write_text(json.dumps(document, indent=1), encoding="utf-8")
    stored = sum(getattr(stage, "scored_from_store", 0) for stage in stages)
    encoded = sum(getattr(stage, "encoded_at_query", 0) for stage in stages)
    coded = sum(1 for generation in codebooks if generation)
    return {
        "row": row,
        "wall_seconds": round(wall, 1),
        "scored_from_store": stored,
        "encoded_at_query": encoded,
        "vaults_pq_coded": f"{coded}/{len(codebooks)}",
    }


def late(out: pathlib.Path) -> None:
    """Off, query-time MaxSim (the cross-encoder tier) and the stored stage at depth 50 and 200: hash, MiniLM."""
    from undercroft_embed_ort import OrtLateEncoder

    out.mkdir(parents=True, exist_ok=True)
    conversations = load_locomo(DATA)
    encoder = OrtLateEncoder(
        os.environ["UNDERCROFT_ONNX_MODEL"], os.environ["UNDERCROFT_ONNX_TOKENIZER"], name="minilm-tokens"
    )
    cached = CachedLateEncoder(encoder)
    scorer = MaxSimScorer(cached)  # one encode of every text, shared with the stored rows
    model = CachedEmbedder(_model("ort"))
    for embedder, arm, prefix in ((HashEmbedder(), "undercroft", "hash"), (model, "undercroft-ort", "minilm")):
        print(_run(conversations, embedder, arm, out, f"{prefix}-late-off"), flush=True)
        print(_run(conversations, embedder, arm, out, f"{prefix}-late-querytime", scorer), flush=True)
        with _Declared({"UNDERCROFT_LATE_TOP_N": "50"}):
            print(_late_row(conversations, embedder, arm, out, f"{prefix}-late-stored-50", cached), flush=True)
        with _Declared({"UNDERCROFT_LATE_TOP_N": "200"}):
            print(_late_row(conversations, embedder, arm, out, f"{prefix}-late-stored-200", cached), flush=True)
    print({"rerank_failures": scorer.rerank_failures, "late_failures": encoder.late_failures}, flush=True)


def late_pq(out: pathlib.Path) -> None:
    """The stored stage at depth 50 with int8 matrices and with PQ-coded ones (hash embedder), and the stage off."""
    from undercroft_embed_ort import OrtLateEncoder

    out.mkdir(parents=True, exist_ok=True)
    conversations = load_locomo(DATA)
    encoder = OrtLateEncoder(
        os.environ["UNDERCROFT_ONNX_MODEL"], os.environ["UNDERCROFT_ONNX_TOKENIZER"], name="minilm-tokens"
    )
    cached = CachedLateEncoder(encoder)
    embedder = HashEmbedder()
    print(_run(conversations, embedder, "undercroft", out, "hash-late-off"), flush=True)
    for row, pq_min in (("hash-late-int8-50", "1000000"), ("hash-late-pq-50", "32")):
        with _Declared({"UNDERCROFT_LATE_TOP_N": "50", "UNDERCROFT_TOK_PQ_MIN": pq_min}):
            print(_late_row(conversations, embedder, "undercroft", out, row, cached), flush=True)
    print({"late_failures": encoder.late_failures}, flush=True)


def rescore(out: pathlib.Path) -> None:
    """Reranker off and on (MaxSim over MiniLM tokens as the scorer), for the MiniLM embedder and for hash."""
    from undercroft_embed_ort import OrtLateEncoder

    out.mkdir(parents=True, exist_ok=True)
    conversations = load_locomo(DATA)
    encoder = OrtLateEncoder(
        os.environ["UNDERCROFT_ONNX_MODEL"], os.environ["UNDERCROFT_ONNX_TOKENIZER"], name="minilm-tokens"
    )
    scorer = MaxSimScorer(encoder)
    model = CachedEmbedder(_model("ort"))
    print(_run(conversations, model, "undercroft-ort", out, "minilm-rerank-off"), flush=True)
    print(_run(conversations, model, "undercroft-ort", out, "minilm-rerank-on", scorer), flush=True)
    print(_run(conversations, HashEmbedder(), "undercroft", out, "hash-rerank-off"), flush=True)
    print(_run(conversations, HashEmbedder(), "undercroft", out, "hash-rerank-on", scorer), flush=True)
    print({"rerank_failures": scorer.rerank_failures, "late_failures": encoder.late_failures}, flush=True)


def _ingest_once(embedder: Embedder, texts: list[str]) -> float:
    with tempfile.TemporaryDirectory(prefix="bench-embed-") as directory, Palace(pathlib.Path(directory)) as palace:
        palace.create_vault("bench", level="sealed")
        with palace.open_vault("bench", embedder) as store:
            drawers = [
                DrawerWrite(
                    Drawer(
                        id=store.drawer_ids.append("bench", "ingest", index),
                        content=text,
                        wing="bench",
                        room="ingest",
                        chunk_index=index,
                        id_recipe="append",
                        added_by="bench",
                        filed_at="2024-01-01T00:00:00Z",
                    )
                )
                for index, text in enumerate(texts)
            ]
            started = time.perf_counter()
            results = store.write(drawers, screening=Screen())
            seconds = time.perf_counter() - started
            created = sum(result.outcome == "created" for result in results)
            if created != len(texts):
                raise SystemExit(f"bench_embedders: {created} of {len(texts)} drawers landed")
            return seconds


def ingest(limit: int, rounds: int) -> None:
    """Drawers/s through the sealed write path, each arm a fresh vault, arms interleaved per round."""
    conversations = load_locomo(DATA)
    chunker = CHUNKERS["protocol"]
    texts = [chunk.text for conversation in conversations for chunk in chunker(conversation.sessions)][:limit]
    arms: dict[str, Embedder] = {
        "hash": HashEmbedder(),
        "onnx": _model("onnx"),
        "ort-pool-1": _model("ort", 1),
        "ort-pool-2": _model("ort", 2),
    }
    for arm in arms.values():  # warm every session (and calibrate) before any timing
        arm.embed(["warm up"])
    seconds: dict[str, list[float]] = {name: [] for name in arms}
    for _ in range(rounds):
        for name, arm in arms.items():
            seconds[name].append(_ingest_once(arm, texts))
    print(f"ingest of {len(texts)} LoCoMo protocol chunks into a sealed vault, {rounds} round(s), median:")
    for name, values in seconds.items():
        median = float(np.median(values))
        hash_median = float(np.median(seconds["hash"]))
        print(f"  {name}: {median:.2f} s, {len(texts) / median:.1f} drawers/s ({median / hash_median:.1f}x hash)")


def smoke() -> int:
    """The ingest timing path end to end on 64 synthetic drawers with the hash embedder (and the model embedders
    when ``UNDERCROFT_ONNX_MODEL`` is declared); fails when a drawer does not land."""
    texts = [f"smoke drawer {index}: the lighthouse keeper logs storm number {index}" for index in range(64)]
    arms: dict[str, Embedder] = {"hash": HashEmbedder()}
    if os.environ.get("UNDERCROFT_ONNX_MODEL"):
        arms |= {"onnx": _model("onnx"), "ort-pool-1": _model("ort", 1)}
    for name, embedder in arms.items():
        seconds = _ingest_once(embedder, texts)
        print(f"smoke {name:<11} {len(texts) / seconds:9.0f} drawers/s ({len(texts)} drawers, sealed, one batch)")
    return 0


def main(argv: list[str]) -> int:
    global DATA  # one run, one file: every report records the path it read
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=pathlib.Path, default=DATA, help="the LoCoMo dev split")
    parser.add_argument("--smoke", action="store_true", help="the ingest timing path on synthetic drawers (CI)")
    commands = parser.add_subparsers(dest="command", required="--smoke" not in argv)
    locomo_command = commands.add_parser("locomo")
    locomo_command.add_argument("out", type=pathlib.Path)
    maxsim_command = commands.add_parser("maxsim")
    maxsim_command.add_argument("out", type=pathlib.Path)
    rescore_command = commands.add_parser("rescore")
    rescore_command.add_argument("out", type=pathlib.Path)
    late_command = commands.add_parser("late")
    late_command.add_argument("out", type=pathlib.Path)
    late_pq_command = commands.add_parser("late-pq")
    late_pq_command.add_argument("out", type=pathlib.Path)
    ingest_command = commands.add_parser("ingest")
    ingest_command.add_argument("--limit", type=int, default=256)
    ingest_command.add_argument("--rounds", type=int, default=1)
    args = parser.parse_args(argv)
    DATA = args.data
    if args.smoke:
        return smoke()
    if not os.environ.get("UNDERCROFT_ONNX_MODEL"):
        print(
            "bench_embedders: UNDERCROFT_ONNX_MODEL is not set (see ../shared/data/README.md, 'Models that work "
            "offline'): nothing measured",
            file=sys.stderr,
        )
        return 1
    if args.command == "locomo":
        locomo(args.out)
    elif args.command == "maxsim":
        maxsim(args.out)
    elif args.command == "rescore":
        rescore(args.out)
    elif args.command == "late":
        late(args.out)
    elif args.command == "late-pq":
        late_pq(args.out)
    else:
        ingest(args.limit, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
