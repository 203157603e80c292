"""What telemetry costs the search hot path: warm searches under four arms, interleaved, in CPU time.

    python benchmarks/bench_telemetry.py                 # 5,000 drawers, 300 queries x 5 rounds
    python benchmarks/bench_telemetry.py --smoke         # 300 drawers, 20 queries x 1 round (CI)

Arms, run round-robin on the same warm searcher so the machine's drift lands on all of them alike:

* ``bare`` — the shim's span replaced by a bare ``nullcontext`` and the NullSink installed: the floor.
* ``default`` — what a default build runs: the shim validates every span and signal, the NullTracer and the
  NullSink drop them.
* ``broker`` — the telemetry build's sinks (PrometheusSink + the live Broker with one subscriber) installed.
* ``otlp`` — the above plus the OTLP tracer exporting to a loopback receiver this script runs.

Prints one JSON line: per-arm p50/p95 in ms and each arm's p50 as a ratio to ``bare``. Arms the telemetry extra
is needed for are skipped (and say so) when it is absent.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import random
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import undercroft_obs as obs
import undercroft_obs.tracing as tracing
from undercroft_core import HashEmbedder
from undercroft_store import Palace, Screen
from undercroft_store.search import Searcher, SearchRequest

sys.path.insert(0, str(Path(__file__).parent))
import bench_search
import bench_search_cost


class _Quiet(BaseHTTPRequestHandler):
    def do_POST(self) -> None:
        self.rfile.read(int(self.headers["Content-Length"]))
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *_args: object) -> None:
        pass


@contextlib.contextmanager
def _arm(name: str, receiver: str) -> Iterator[None]:
    if name == "bare":
        import undercroft_store.search.engine as engine

        real = engine.obs.span
        engine.obs.span = lambda *_a, **_k: contextlib.nullcontext(tracing._NullHandle())  # type: ignore[assignment]
        try:
            yield
        finally:
            engine.obs.span = real  # type: ignore[assignment]
        return
    if name == "default":
        yield
        return
    from undercroft_obs.broker import Broker
    from undercroft_obs.prometheus import PrometheusSink

    broker = Broker()
    broker.subscribe("bench", lambda _frame: None)
    with obs.sink_installed(obs.FanoutSink(PrometheusSink(), broker)):
        if name == "broker":
            yield
            return
        from undercroft_obs.telemetry.otlp import OtlpTracer

        tracer = OtlpTracer(receiver, schedule_delay_ms=200)
        previous = obs.install_tracer(tracer)
        try:
            yield
        finally:
            obs.install_tracer(previous)
            tracer.shutdown()


def run(size: int, queries: int, rounds: int, clock: Callable[[], float]) -> dict[str, Any]:
    """The figures of one run."""
    try:
        arms = ["bare", "default", "broker", "otlp"]
    except obs.Error:
        arms = ["bare", "default"]
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    receiver = f"http://127.0.0.1:{server.server_address[1]}"
    rng = random.Random(11)  # noqa: S311 - a reproducible synthetic corpus, not a secret
    texts = bench_search._texts(rng, bench_search._vocabulary(rng), size)
    asked = [" ".join(rng.sample(texts[rng.randrange(size)].rstrip(".").split(), 5)) for _ in range(queries)]
    embedder = HashEmbedder()
    timings: dict[str, list[float]] = {arm: [] for arm in arms}
    with tempfile.TemporaryDirectory() as home, Palace(Path(home)) as palace:
        palace.create_vault("bench", level="sealed")
        with palace.open_vault("bench", embedder) as store:
            for first in range(0, size, bench_search_cost.BATCH):
                chunk = texts[first : first + bench_search_cost.BATCH]
                store.write(bench_search_cost._writes(store.drawer_ids, chunk, first), screening=Screen())
            searcher = Searcher(store, embedder)
            searcher.warm()
            for question in asked[:10]:
                searcher.search(SearchRequest(question, limit=10))
            for _ in range(rounds):
                for arm in arms:
                    with _arm(arm, receiver):
                        for question in asked:
                            started = clock()
                            searcher.search(SearchRequest(question, limit=10))
                            timings[arm].append(clock() - started)
    server.shutdown()
    out: dict[str, Any] = {"size": size, "queries": queries, "rounds": rounds, "arms": arms}
    base = statistics.median(timings["bare"])
    for arm in arms:
        ordered = sorted(timings[arm])
        out[f"{arm}_p50_ms"] = round(statistics.median(ordered) * 1000, 3)
        out[f"{arm}_p95_ms"] = round(ordered[int(0.95 * (len(ordered) - 1))] * 1000, 3)
        out[f"{arm}_p50_ratio"] = round(statistics.median(ordered) / base, 3)
    return out


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print its JSON line."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="seconds-long run (CI)")
    parser.add_argument("--size", type=int, default=5000)
    parser.add_argument("--queries", type=int, default=300)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--clock", choices=("cpu", "wall"), default="cpu")
    args = parser.parse_args(argv)
    size, queries, rounds = (300, 20, 1) if args.smoke else (args.size, args.queries, args.rounds)
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    print(json.dumps(run(size, queries, rounds, clock)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
