"""Search latency with the MiniLM embedder beside the hash default, on the same drawers in the same run (issue 24).

    UNDERCROFT_ONNX_MODEL=… UNDERCROFT_ONNX_TOKENIZER=… python benchmarks/bench_model_search.py [--drawers 10000]
    UNDERCROFT_ONNX_MODEL=… UNDERCROFT_ONNX_TOKENIZER=… python benchmarks/bench_model_search.py --late [--drawers N]
    python benchmarks/bench_model_search.py --smoke      # 300 drawers, 10 queries, hash (+ the model if declared)

Two sealed vaults hold the same ``--drawers`` drawers: LoCoMo dev-split turns ("<speaker>: <text>"), cycled
and numbered so every drawer is distinct, 20 rooms. One is embedded by the hash default, one by the ort
embedder the ``UNDERCROFT_ONNX_*`` variables declare (``UNDERCROFT_ORT_POOL``). Each vault's searcher is
warmed (`Searcher.warm`), then the LoCoMo questions are searched (limit 10, unscoped, the shipped defaults),
alternating hash and model query by query so the machine's noise lands on both; p50/p95 per arm and the
ratio. The model arm's cost over hash is the query's forward pass plus whatever the wider semantic channel
changes; ingest seconds are printed too (the model's dominates).

``--late``: the late-interaction stage on vs off, every arm on the hash embedder and the same drawers:
``hash`` (off), ``late-stored`` (a late encoder over MiniLM's token states attached before the fill, so each
drawer's matrix is encoded at write time and stored sealed; a search re-orders its top
``UNDERCROFT_LATE_TOP_N`` by MaxSim over the stored matrices) and ``late-querytime`` (the same encoder attached
after the fill: no matrix stored, every candidate of the window encoded at query time — the cost the stored
stage removes; seconds a query, so only the first ``--querytime-queries`` questions). Searched alternately
query by query, as above; each ratio is over the hash arm's timings of the same questions.
"""

from __future__ import annotations

import argparse
import os
import pathlib
import statistics
import sys
import tempfile
import time

from undercroft_bench.locomo_data import load_locomo
from undercroft_core import Drawer, Embedder, HashEmbedder, LateEncoder
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.search import Searcher, SearchRequest

DATA = pathlib.Path(__file__).resolve().parents[1].parent / "shared" / "data" / "locomo" / "locomo-dev.json"
BATCH = 500


def _corpus(count: int, *, synthetic: bool = False) -> tuple[list[str], list[str]]:
    if synthetic:  # the smoke run needs no data file
        texts = [f"the lighthouse keeper logs storm number {i} near the northern reef" for i in range(count)]
        return texts, [f"which storm did the keeper log near reef {i}" for i in range(count)]
    conversations = load_locomo(DATA)
    turns = [
        f"{turn.speaker}: {turn.text}"
        for conversation in conversations
        for session in conversation.sessions
        for turn in session.turns
        if turn.text.strip()
    ]
    texts = [f"{turns[i % len(turns)]} (#{i})" for i in range(count)]
    questions = [q.question for conversation in conversations for q in conversation.questions]
    return texts, questions


def _fill(store: VaultStore, texts: list[str]) -> float:
    started = time.perf_counter()
    for start in range(0, len(texts), BATCH):
        store.write(
            [
                DrawerWrite(
                    Drawer(
                        id=store.drawer_ids.append("bench", f"room-{index % 20}", index),
                        content=text,
                        wing="bench",
                        room=f"room-{index % 20}",
                        chunk_index=index,
                        id_recipe="append",
                        added_by="bench",
                        filed_at="2024-01-01T00:00:00Z",
                    )
                )
                for index, text in enumerate(texts[start : start + BATCH], start)
            ],
            screening=Screen(),
        )
    return time.perf_counter() - started


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def _late_encoder() -> LateEncoder:
    from undercroft_embed_ort import OrtLateEncoder

    return OrtLateEncoder(
        os.environ["UNDERCROFT_ONNX_MODEL"], os.environ["UNDERCROFT_ONNX_TOKENIZER"], name="minilm-tokens"
    )


def run(drawers: int, queries: int, *, synthetic: bool = False, late: bool = False, querytime: int = 20) -> int:
    texts, questions = _corpus(drawers, synthetic=synthetic)
    arms: dict[str, Embedder] = {"hash": HashEmbedder()}
    # arm -> (the late encoder, attached before the fill: matrices stored at write time, or after it: none)
    stages: dict[str, tuple[LateEncoder, bool]] = {}
    if late:
        encoder = _late_encoder()
        arms |= {"late-stored": HashEmbedder(), "late-querytime": HashEmbedder()}
        stages = {"late-stored": (encoder, True), "late-querytime": (encoder, False)}
    elif os.environ.get("UNDERCROFT_ONNX_MODEL"):
        from undercroft_embed_ort import OrtEmbedder

        arms["minilm"] = OrtEmbedder.from_env()
    with (
        tempfile.TemporaryDirectory(prefix="bench-model-search-") as directory,
        Palace(pathlib.Path(directory)) as palace,
    ):
        searchers: dict[str, Searcher] = {}
        for name, embedder in arms.items():
            palace.create_vault(name, level="sealed")
            store = palace.open_vault(name, embedder)
            stage = stages.get(name)
            if stage is not None and stage[1]:
                store.attach_late_encoder(stage[0])
            seconds = _fill(store, texts)
            if stage is not None and not stage[1]:
                store.attach_late_encoder(stage[0])
            searcher = Searcher.from_settings(store, embedder)
            warmed = time.perf_counter()
            searcher.warm()
            print(
                f"{name}: ingest {drawers} drawers {seconds:.1f} s ({drawers / seconds:.0f}/s), "
                f"warm {time.perf_counter() - warmed:.1f} s, embedder {embedder.identity.label}, "
                f"token matrices stored {store.stats().token_matrices}",
                flush=True,
            )
            searchers[name] = searcher
        timings: dict[str, list[float]] = {name: [] for name in searchers}
        for number, question in enumerate(questions[:queries]):
            for name, searcher in searchers.items():
                if name == "late-querytime" and number >= querytime:
                    continue  # seconds a query: only the first --querytime-queries questions
                started = time.perf_counter()
                searcher.search(SearchRequest(question, limit=10))
                timings[name].append((time.perf_counter() - started) * 1000)
        for name, values in timings.items():
            print(
                f"{name}: {len(values)} queries, p50 {statistics.median(values):.1f} ms, "
                f"p95 {_percentile(values, 0.95):.1f} ms",
                flush=True,
            )
        if "minilm" in timings:
            ratio = statistics.median(timings["minilm"]) / statistics.median(timings["hash"])
            print(f"minilm p50 / hash p50 = {ratio:.2f}x (goal <= 2x)", flush=True)
        for name in stages:
            baseline = timings["hash"][: len(timings[name])]  # the same questions, searched in the same minutes
            ratio = statistics.median(timings[name]) / statistics.median(baseline)
            rescore = searchers[name].rescore
            print(
                f"{name} p50 / hash p50 = {ratio:.2f}x (scored from store {getattr(rescore, 'scored_from_store', 0)}, "
                f"encoded at query {getattr(rescore, 'encoded_at_query', 0)})",
                flush=True,
            )
    return 0


def main(argv: list[str]) -> int:
    global DATA
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=pathlib.Path, default=DATA)
    parser.add_argument("--drawers", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--smoke", action="store_true", help="300 synthetic drawers, 10 queries (CI)")
    parser.add_argument("--late", action="store_true", help="the late stage on (stored, query-time) vs off")
    parser.add_argument("--querytime-queries", type=int, default=20, help="questions the query-time arm runs")
    args = parser.parse_args(argv)
    DATA = args.data
    if args.smoke:
        return run(300, 10, synthetic=True)
    if not DATA.is_file():
        print(f"bench_model_search: {DATA} is missing (see ../shared/data/README.md)", file=sys.stderr)
        return 1
    if args.late and not os.environ.get("UNDERCROFT_ONNX_MODEL"):
        print("bench_model_search: --late needs UNDERCROFT_ONNX_MODEL / _TOKENIZER (MiniLM)", file=sys.stderr)
        return 1
    return run(args.drawers, args.queries, late=args.late, querytime=args.querytime_queries)


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
