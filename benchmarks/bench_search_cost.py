"""What a search costs in each state a handle meets (issue 19), in CPU time by default, beside the raw scan.

    python benchmarks/bench_search_cost.py                      # 10k (200 queries) and 100k (100 queries)
    python benchmarks/bench_search_cost.py --sizes 10000 --clock wall
    python benchmarks/bench_search_cost.py --sizes 10000 --repeat 5  # warm p50/p95 of each query's least of 5
    python benchmarks/bench_search_cost.py --locomo FILE --arm undercroft --golden OUT.jsonl [--repeat 6]
    python benchmarks/bench_search_cost.py --synthetic DIR      # gen_corpus.py output: CPU per query
    python benchmarks/bench_search_cost.py --feed-ingest        # ingest with and without the change feed
    python benchmarks/bench_search_cost.py --smoke              # 500 drawers, 20 queries (CI)

Store mode prints one JSON line per size: ingest rate (no searcher on the handle), the first search after
reopening the vault, warm p50/p95 after `Searcher.warm()`, the first search after each of 9 `remember` calls,
ingest of 2,000 more drawers with a searcher attached (its change feed installed), the first search after them,
the raw numpy scan (cached matrix · query, top 320), the first and second search of two more opens (after those
writes, then after nothing more was written: the sealed snapshot's case) and the peak RSS. The corpus is
`bench_search.py`'s (Zipf pseudo-words, 20 rooms; five-word queries drawn from one drawer).

``--clock cpu`` (the default) times `time.process_time`: on a shared machine the wall clock mostly measures
the wait for a core. Set ``OPENBLAS_NUM_THREADS=1`` so CPU time is one thread's.

LoCoMo mode runs `undercroft-bench locomo FILE --arm ARM` with every search's full hit list (chunk ids, every score,
time mentions, entities) written to ``--golden`` and its CPU time kept: two trees' golden files compared
byte for byte are the equivalence check of a change that must not move a ranking.

The script uses only APIs present before issue 19's changes, so a baseline tree runs it unchanged:
``git archive <commit> packages | tar -x -C DIR`` and every ``DIR/packages/*/src`` on ``PYTHONPATH``.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from undercroft_core import Drawer, DrawerIds, HashEmbedder
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.search import Searcher, SearchHit, SearchRequest

sys.path.insert(0, str(Path(__file__).parent))
import bench_search

BATCH = 1000


def _writes(ids: DrawerIds, texts: list[str], first: int, room: str | None = None) -> list[DrawerWrite]:
    return [
        DrawerWrite(
            Drawer(
                id=ids.append("bench", room or f"room-{index % 20}", index),
                content=text,
                wing="bench",
                room=room or f"room-{index % 20}",
                chunk_index=index,
                id_recipe="append",
                added_by="bench",
                filed_at=bench_search.FILED_AT,
            )
        )
        for index, text in enumerate(texts, first)
    ]


def _pct(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(share * len(ordered)))] * 1000, 2)


def run(size: int, queries: int, clock: Callable[[], float], seed: int = 7, repeat: int = 1) -> dict[str, object]:
    """One size's figures (milliseconds unless named otherwise); each warm query timed ``repeat`` times, the
    least kept."""
    rng = random.Random(seed)  # noqa: S311 - a reproducible synthetic corpus, not a secret
    vocabulary = bench_search._vocabulary(rng)
    texts = bench_search._texts(rng, vocabulary, size)
    embedder = HashEmbedder()
    out: dict[str, object] = {"size": size}
    with tempfile.TemporaryDirectory() as home, Palace(Path(home)) as palace:
        palace.create_vault("bench", level="sealed")
        with palace.open_vault("bench", embedder) as store:
            started = clock()
            for first in range(0, size, BATCH):
                store.write(_writes(store.drawer_ids, texts[first : first + BATCH], first), screening=Screen())
            out["ingest_per_s"] = round(size / max(clock() - started, 1e-9))
        asked = [" ".join(rng.sample(texts[rng.randrange(size)].rstrip(".").split(), 5)) for _ in range(queries)]
        with palace.open_vault("bench", embedder) as store:
            searcher = Searcher(store, embedder)
            started = clock()
            searcher.search(SearchRequest(asked[0], limit=10))
            out["first_after_open_ms"] = round((clock() - started) * 1000, 1)
            searcher.warm()
            for question in asked[:10]:
                searcher.search(SearchRequest(question, limit=10))
            timings = []
            for question in asked:
                once = []
                for _ in range(repeat):  # the least of the repeats: a core's preemption filtered out
                    started = clock()
                    searcher.search(SearchRequest(question, limit=10))
                    once.append(clock() - started)
                timings.append(min(once))
            out["warm_p50_ms"], out["warm_p95_ms"] = _pct(timings, 0.5), _pct(timings, 0.95)
            out["warm_repeats"] = repeat
            after = []
            for index, question in enumerate(asked[:9]):
                store.remember(f"{question} fresh note {index}", wing="bench", room="room-0", added_by="bench")
                started = clock()
                searcher.search(SearchRequest(question, limit=10))
                after.append(clock() - started)
            out["after_write_p50_ms"], out["after_write_max_ms"] = _pct(after, 0.5), _pct(after, 1.0)
            extra = bench_search._texts(rng, vocabulary, 2000)
            started = clock()
            for first in range(0, len(extra), BATCH):
                store.write(
                    _writes(store.drawer_ids, extra[first : first + BATCH], size + first, "room-x"), screening=Screen()
                )
            out["ingest_with_searcher_per_s"] = round(len(extra) / max(clock() - started, 1e-9))
            started = clock()
            searcher.search(SearchRequest(asked[0], limit=10))
            out["after_2000_writes_ms"] = round((clock() - started) * 1000, 1)
            _, unit = searcher.cache.load(store)
            scans = []
            for vector in embedder.embed(asked):
                started = clock()
                np.argpartition(-(unit @ vector), min(319, len(unit) - 1))[:320]
                scans.append(clock() - started)
            out["raw_scan_p50_ms"] = _pct(scans, 0.5)
        # Two more opens: the first after the writes above (a snapshot taken before them is stale: refused and
        # stored again), the second with nothing written since (the sealed snapshot, when the tree has one).
        for key in ("first_after_writes_reopen_ms", "first_after_quiet_reopen_ms"):
            with palace.open_vault("bench", embedder) as store:
                searcher = Searcher(store, embedder)
                started = clock()
                searcher.search(SearchRequest(asked[1], limit=10))
                out[key] = round((clock() - started) * 1000, 1)
                started = clock()
                searcher.search(SearchRequest(asked[2], limit=10))
                out[key.replace("first", "second")] = round((clock() - started) * 1000, 1)
    out["maxrss_mb"] = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
    return out


def _hit_record(chunk: str, h: SearchHit) -> list[object]:
    """One hit of the golden file: its chunk, every score and channel, its rank and its time mentions."""
    return [chunk, h.score, h.semantic, h.lexical, h.lexical_exact, h.lexical_morph, h.rank, repr(h.time_mentions)]


def run_locomo(path: str, arm: str, golden: str, extra: list[str], repeat: int = 1) -> int:
    """The LoCoMo instrument with each search's hits dumped to ``golden`` and its CPU time reported.

    ``repeat`` > 1 runs every search that many more times right after it and keeps the least CPU time of the
    repeats: the warm cost of that search, with a core's preemption filtered out (a loaded machine)."""
    from undercroft_bench import undercroft_arm
    from undercroft_bench.main import main as bench_main

    spent: list[float] = []
    warm: list[float] = []
    with open(golden, "w", encoding="utf-8") as out:

        def search(self: undercroft_arm.UndercroftRetriever, question: str, k: int) -> list[str]:
            started = time.process_time()
            request = SearchRequest(question, limit=k, when_from_query=self._when_from_query)
            result = self._searcher.search(request)
            spent.append(time.process_time() - started)
            again = []
            for _ in range(repeat - 1):
                started = time.process_time()
                self._searcher.search(request)
                again.append(time.process_time() - started)
            if again:
                warm.append(min(again))
            # The chunk, not the drawer id: ids are keyed by the vault's own secret, so they differ run to run.
            hits = [_hit_record(self._chunk_of[h.id], h) for h in result.hits]
            entities = [repr(h.entities) for h in result.hits]
            out.write(json.dumps([question, result.pool, result.admitted, hits, entities]) + "\n")
            return [self._chunk_of[hit.id] for hit in result.hits]

        undercroft_arm.UndercroftRetriever.search = search  # type: ignore[method-assign]
        code = bench_main(["locomo", path, "--arm", arm, *extra])
    if spent:
        print(f"CPU per search: median {statistics.median(spent) * 1000:.2f} ms over {len(spent)} searches")
    if warm:
        print(f"CPU per search, least of {repeat - 1} repeats: median {statistics.median(warm) * 1000:.2f} ms")
    return code


def run_synthetic(folder: Path) -> dict[str, float]:
    """CPU per query over ``../shared/tools/gen_corpus.py``'s corpus (one sealed vault, room = topic folder):
    the 50 queries on a fresh searcher, then the same 50 again."""
    files = sorted(folder.glob("corpus/*/*.md"))
    queries = [item["query"] for item in json.loads((folder / "queries.json").read_text(encoding="utf-8"))]
    embedder = HashEmbedder()
    passes: list[list[float]] = [[], []]
    with tempfile.TemporaryDirectory() as home, Palace(Path(home)) as palace:
        palace.create_vault("v", level="sealed")
        with palace.open_vault("v", embedder) as store:
            writes = [
                DrawerWrite(
                    Drawer(
                        id=store.drawer_ids.append("w", path.parent.name, index),
                        content=path.read_text(encoding="utf-8"),
                        wing="w",
                        room=path.parent.name,
                        chunk_index=index,
                        id_recipe="append",
                        added_by="bench",
                        filed_at=bench_search.FILED_AT,
                    )
                )
                for index, path in enumerate(files)
            ]
            for first in range(0, len(writes), BATCH):
                store.write(writes[first : first + BATCH], screening=Screen())
            searcher = Searcher(store, embedder)
            for spent in passes:
                for question in queries:
                    started = time.process_time()
                    searcher.search(SearchRequest(question, limit=10))
                    spent.append(time.process_time() - started)
    return {
        "queries": len(queries),
        "first_pass_median_ms": round(statistics.median(passes[0]) * 1000, 2),
        "second_pass_median_ms": round(statistics.median(passes[1]) * 1000, 2),
    }


def run_feed_ingest(rounds: int = 3, drawers: int = 4000) -> dict[str, list[int]]:
    """CPU drawers/s of ingest into fresh sealed vaults, alternately without and with the handle's change feed
    installed (its TEMP triggers then log every row written)."""
    from undercroft_store.search._internal.change_feed import change_feed

    rng = random.Random(1)  # noqa: S311 - a reproducible synthetic corpus
    texts = bench_search._texts(rng, bench_search._vocabulary(rng), drawers)
    embedder = HashEmbedder()
    rates: dict[str, list[int]] = {"off": [], "on": []}
    for _ in range(rounds):
        for mode, rate in rates.items():
            with tempfile.TemporaryDirectory() as home, Palace(Path(home)) as palace:
                palace.create_vault("v", level="sealed")
                with palace.open_vault("v", embedder) as store:
                    if mode == "on":
                        change_feed(store)
                    started = time.process_time()
                    for first in range(0, drawers, BATCH):
                        store.write(_writes(store.drawer_ids, texts[first : first + BATCH], first), screening=Screen())
                    rate.append(round(drawers / max(time.process_time() - started, 1e-9)))
    return rates


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a tiny run for CI")
    parser.add_argument("--sizes", default="10000,100000", help="vault sizes, comma-separated")
    parser.add_argument("--queries", type=int, default=None, help="queries per size (default 200, 100 at 100k+)")
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    parser.add_argument("--locomo", default=None, help="LoCoMo JSON: run the golden mode instead")
    parser.add_argument("--arm", default="undercroft", choices=("undercroft", "undercroft-when"))
    parser.add_argument("--golden", default=None, help="golden mode: where the hit lists go")
    parser.add_argument("--limit-conversations", type=int, default=None)
    parser.add_argument("--repeat", type=int, default=1, help="repeat each (warm) search, keep the least")
    parser.add_argument("--synthetic", type=Path, default=None, help="gen_corpus.py output: CPU per query")
    parser.add_argument("--feed-ingest", action="store_true", help="ingest with and without the change feed")
    args = parser.parse_args(argv)
    if args.synthetic is not None:
        print(json.dumps(run_synthetic(args.synthetic)))
        return 0
    if args.feed_ingest:
        print(json.dumps(run_feed_ingest(1, 500) if args.smoke else run_feed_ingest()))
        if not args.smoke:
            return 0
    if args.locomo is not None:
        if args.golden is None:
            parser.error("--locomo needs --golden OUT")
        limit = [] if args.limit_conversations is None else ["--limit-conversations", str(args.limit_conversations)]
        return run_locomo(args.locomo, args.arm, args.golden, limit, max(1, args.repeat))
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    sizes = [500] if args.smoke else [int(size) for size in args.sizes.split(",")]
    for size in sizes:
        queries = 20 if args.smoke else args.queries or (200 if size < 100_000 else 100)
        figures = run(size, queries, clock, repeat=max(1, args.repeat))
        figures["clock"] = args.clock
        figures["openblas_threads"] = os.environ.get("OPENBLAS_NUM_THREADS", "default")
        print(json.dumps(figures), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
