"""Remote vector indexes against the local path: push throughput, search p50 and needle recall, same run.

    python benchmarks/bench_remote_index.py --smoke                 # 1,000 drawers (seconds)
    python benchmarks/bench_remote_index.py                         # 10k and 100k drawers
    python benchmarks/bench_remote_index.py --checkpoints 10000 --backends chroma --json out.json

One sealed vault (hash embedder, undercroft-bench's synthetic corpus with needles planted at each growth
step) is grown through the checkpoints. At each one, in the same run and from the same vault:

* ``local`` — the default full scan (decrypt-once cache warm), and ``pq`` (``UNDERCROFT_RETRIEVAL=pq``);
* each real backend that can run here — a Chroma server (``chroma run``, PyPI ``chromadb``), a Milvus Lite
  gRPC server (``milvus-lite server``), both on loopback, and a PostgreSQL with pgvector (PyPI ``pgserver``,
  on a Unix socket; the adapter creates no ANN index, so its answer is an exact scan server-side): the push
  (drawers/s, the whole vault, one ``egress/index-push`` record each) and then searches through the mirror
  (``search --backend``: candidate ids from the server, every one re-verified, decrypted and re-scored
  locally).

For every path: R@5 of every needle planted so far and the p50 of one search. A backend whose recall falls
below the local full scan's is reported as such (``below_local`` in the JSON, a line in the output): an ANN
server's recall is a finding, not an instrument failure. The run fails (exit 1) when the instrument is
broken: the local path misses a needle, or a backend finds none at all. A backend whose server package is
absent is skipped and says so. Qdrant and Weaviate cannot run here (no server), so they are not measured.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import ExitStack
from datetime import UTC, datetime
from pathlib import Path

from undercroft_bench.synth import write_step
from undercroft_bench.synth_corpus import Needle, SynthSpec
from undercroft_core import DrawerIds, HashEmbedder
from undercroft_index import open_backend
from undercroft_store import Palace, VaultStore
from undercroft_store.governance.index_push import push_mirror
from undercroft_store.kernel.mirror import Mirror
from undercroft_store.search import Searcher, SearchRequest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from remote_servers import (
    chroma_program,
    milvus_program,
    pgserver_available,
    serving_chroma,
    serving_milvus,
    serving_pgvector,
)

SMOKE = ["--checkpoints", "1000", "--needles", "4", "--batch", "500"]
K = 5


def _needle_figures(searcher: Searcher, needles: list[Needle], repeats: int, ids: DrawerIds) -> dict[str, float]:
    hits, timings = 0, []
    for _ in range(repeats):
        for needle in needles:
            started = time.perf_counter()
            result = searcher.search(SearchRequest(needle.query, limit=K))
            timings.append((time.perf_counter() - started) * 1000)
            wanted = ids.append(needle.wing, needle.room, needle.index)
            hits += any(hit.id == wanted for hit in result.hits)
    return {"recall": hits / max(1, repeats * len(needles)), "p50_ms": statistics.median(timings or [0.0])}


def _local(store: VaultStore, needles: list[Needle], repeats: int) -> dict[str, dict[str, float]]:
    embedder = HashEmbedder()
    full = Searcher(store, embedder)
    full.search(SearchRequest("warm the decrypt-once cache", limit=K))
    pq = Searcher(store, embedder, retrieval="pq")
    pq.search(SearchRequest("train or load the sealed codes", limit=K))
    ids = store.drawer_ids
    return {"local": _needle_figures(full, needles, repeats, ids), "pq": _needle_figures(pq, needles, repeats, ids)}


def _remote(store: VaultStore, name: str, url: str, needles: list[Needle], repeats: int) -> dict[str, float]:
    variable = "UNDERCROFT_PGVECTOR_DSN" if name == "pgvector" else f"UNDERCROFT_{name.upper()}_URL"
    backend = open_backend(name, url, variable=variable, timeout=60)
    try:
        mirror = Mirror.of(backend, store.name)
        started = time.perf_counter()
        report = push_mirror(store, mirror, surface="bench", batch=1000, drop=True)
        push_s = time.perf_counter() - started
        searcher = Searcher(store, HashEmbedder(), mirror=mirror)
        searcher.search(SearchRequest("check the mirror once", limit=K))
        figures = _needle_figures(searcher, needles, repeats, store.drawer_ids)
        return {"push_per_s": report.pushed / push_s, "pushed": report.pushed, **figures}
    finally:
        backend.close()


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="one tiny checkpoint: checks the instrument works")
    parser.add_argument("--checkpoints", default="10000,100000", help="comma list of vault sizes")
    parser.add_argument("--needles", type=int, default=10, help="needles planted per growth step")
    parser.add_argument("--batch", type=int, default=2000, help="drawers per write call")
    parser.add_argument("--repeats", type=int, default=3, help="times each needle query is timed")
    parser.add_argument("--backends", default="chroma,milvus,pgvector", help="comma list of real backends")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(SMOKE + [a for a in argv if a != "--smoke"] if "--smoke" in argv else argv)
    checkpoints = [int(part) for part in args.checkpoints.split(",")]
    spec = SynthSpec(needles_per_step=args.needles)
    began = time.perf_counter()
    report: dict[str, object] = {
        "command": "python benchmarks/bench_remote_index.py " + " ".join(argv),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "commit": _commit(),
        "checkpoints": [],
        "skipped": [],
    }
    failed = False
    with tempfile.TemporaryDirectory(prefix="undercroft-remote-") as scratch, ExitStack() as servers:
        root = Path(scratch)
        urls: dict[str, str] = {}
        for name in args.backends.split(","):
            if name == "pgvector":
                program = "pgserver" if pgserver_available() else None
            else:
                program = {"chroma": chroma_program, "milvus": milvus_program}[name]()
            if program is None:
                report["skipped"].append(name)  # type: ignore[attr-defined]
                print(f"{name}: its server package is not installed here; skipped", flush=True)
                continue
            if name == "pgvector":
                urls[name] = servers.enter_context(serving_pgvector())[0]
                continue
            (root / name).mkdir()
            serve = serving_chroma if name == "chroma" else serving_milvus
            urls[name] = servers.enter_context(serve(program, root / name))
        with Palace(root / "palace") as palace:
            palace.create_vault("bench", level="sealed")
            needles: list[Needle] = []
            written = 0
            for target in checkpoints:
                with palace.open_vault("bench", HashEmbedder()) as store:
                    _spent, planted = write_step(store, spec, written, target, len(needles), args.batch)
                    needles.extend(planted)
                    written = target
                    row: dict[str, object] = {"drawers": target, "needles": len(needles)}
                    row.update(_local(store, needles, args.repeats))
                    failed |= row["local"]["recall"] < 1.0  # type: ignore[index]
                    for name, url in urls.items():
                        figures = _remote(store, name, url, needles, args.repeats)
                        figures["below_local"] = figures["recall"] < row["local"]["recall"]  # type: ignore[index]
                        failed |= figures["recall"] == 0.0
                        row[name] = figures
                report["checkpoints"].append(row)  # type: ignore[attr-defined]
                print(_render(row), flush=True)
    report["wall_s"] = time.perf_counter() - began
    verdict = "FAILED: the local path or a backend found no needle" if failed else "instrument ok"
    print(f"wall: {report['wall_s']:.0f} s; commit {report['commit']}; {verdict}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 1 if failed else 0


def _render(row: dict[str, object]) -> str:
    lines = [f"== {row['drawers']:,} drawers ({row['needles']} needles)"]
    for path, figures in row.items():
        if not isinstance(figures, dict):
            continue
        push = f"  push {figures['push_per_s']:,.0f} drawers/s" if "push_per_s" in figures else ""
        below = "  RECALL BELOW LOCAL" if figures.get("below_local") else ""
        lines.append(f"  {path:<8} R@5 {figures['recall'] * 100:.0f}%  p50 {figures['p50_ms']:.1f} ms{push}{below}")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
