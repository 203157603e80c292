"""The FDE candidate tier: float FDEs, PQ codes and IVF lists, beside the full scan, on one sealed vault.

    python benchmarks/bench_fde.py --smoke                # 1,000 drawers (seconds): checks the instrument
    python benchmarks/bench_fde.py --drawers 20000        # the RESULTS.md sitting
    python benchmarks/bench_fde.py --drawers 20000 --json out.json

No trained ColBERT model exists offline, so the late encoder here is a deterministic one: every word is a fixed
unit vector of ``--token-dim`` components (a seeded hash), a text's matrix is its words' vectors. That makes
MaxSim a soft word-overlap score — enough to measure what the tier costs and how much its PQ codes change what
stage 1 draws, not a retrieval-quality figure (docs/embedders.md has the real-model arms). The corpus is
undercroft-bench's synthetic instrument with planted needles (hash embedder, sealed vault, token matrices
stored at ingest). The FDE encoder runs with its own defaults (20 repetitions, 3 SimHash bits, 16-wide
projections: 2,560-wide FDEs).

Arms, each on a fresh handle in the same run, interleaved query by query:

* ``full-scan`` — no tier (the default);
* ``fde-float`` — the FDE tier uncompressed (``UNDERCROFT_FDE_PQ_MIN=off`` is not a declared value: the
  benchmark passes ``pq_min=None``);
* ``fde-pq`` — PQ codes in RAM (the default ``UNDERCROFT_FDE_PQ_MIN=256``);
* ``fde-ivf`` — PQ codes grouped in ⌈√N⌉ lists (``UNDERCROFT_FDE_IVF_MIN=1``), the default nprobe.

Reported per arm: the tier's build on the first search after the open (encode and persist on the first open,
load and code after), RAM per drawer of the tier, p50 of an unscoped and of a wing-scoped search, R@5 of every
needle, the share of needles stage 1 itself draws (before BM25 joiners rescue anything), and — for the
compressed arms — stage-1 overlap: of the float arm's stage-1 draw for each needle query, the fraction the
compressed arm also draws. A needle missed by any arm fails the run (exit 1).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
from numpy.typing import NDArray
from undercroft_bench.synth import write_step
from undercroft_bench.synth_corpus import Needle, SynthSpec
from undercroft_core import HashEmbedder
from undercroft_core.model_roles import DegradingLateEncoder
from undercroft_store import Palace, VaultStore
from undercroft_store.search import Searcher, SearchRequest, plan_pool
from undercroft_store.search.tiers import FdeOptions, FdeTier

ARMS: dict[str, FdeOptions | None] = {
    "full-scan": None,
    "fde-float": FdeOptions(pq_min=None),
    "fde-pq": FdeOptions(),
    "fde-ivf": FdeOptions(ivf_min=1),
}
K = 5


class WordVectors(DegradingLateEncoder):
    """A deterministic late encoder: one seeded unit vector per (lower-cased) word."""

    def __init__(self, dimension: int) -> None:
        super().__init__("bench-word-vectors", dimension)
        self._memo: dict[str, NDArray[np.float32]] = {}

    def _word(self, word: str) -> NDArray[np.float32]:
        found = self._memo.get(word)
        if found is None:
            seed = int.from_bytes(hashlib.blake2b(word.encode(), digest_size=8).digest(), "little")
            vector = np.random.default_rng(seed).normal(size=self.dimension).astype(np.float32)
            found = self._memo[word] = vector / np.linalg.norm(vector)
        return found

    def _encode_batch(self, texts: list[str], *, query: bool) -> list[NDArray[np.floating]]:
        return [np.stack([self._word(word) for word in (text.lower().split() or ["_"])]) for text in texts]


def _open(palace: Palace, dimension: int) -> VaultStore:
    store = palace.open_vault("bench", HashEmbedder())
    store.attach_late_encoder(WordVectors(dimension))
    return store


def _searcher(store: VaultStore, arm: str) -> Searcher:
    options = ARMS[arm]
    if options is None:
        return Searcher(store, HashEmbedder())
    return Searcher(store, HashEmbedder(), retrieval="fde", fde_options=options)


def _draw(searcher: Searcher, store: VaultStore, needle: Needle) -> set[int]:
    """The stage-1 draw of the needle's query over the whole vault, as the engine plans it."""
    tier = searcher.tier
    assert isinstance(tier, FdeTier)
    scope = store.scope_seqs()
    plan = plan_pool(len(scope), len(scope), K, 64)
    query = HashEmbedder().embed([needle.query])[0]
    drawn = tier.for_query(needle.query).candidates(query, scope, plan)
    return set(drawn.seqs.tolist())


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="1,000 drawers: checks the instrument works")
    parser.add_argument("--drawers", type=int, default=20_000, help="vault size")
    parser.add_argument("--needles", type=int, default=20, help="needles planted")
    parser.add_argument("--token-dim", type=int, default=32, help="width of the bench encoder's token vectors")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(argv)
    drawers, needles_wanted = (1_000, 4) if args.smoke else (args.drawers, args.needles)
    report: dict[str, object] = {
        "command": "python benchmarks/bench_fde.py " + " ".join(argv),
        "date": datetime.now(UTC).strftime("%Y-%m-%d %H:%MZ"),
        "commit": _commit(),
        "drawers": drawers,
    }
    began = time.perf_counter()
    failed = False
    with tempfile.TemporaryDirectory(prefix="undercroft-fde-") as scratch, Palace(Path(scratch) / "p") as palace:
        palace.create_vault("bench", level="sealed")
        spec = SynthSpec(needles_per_step=needles_wanted)
        with _open(palace, args.token_dim) as store:
            spent, needles = write_step(store, spec, 0, drawers, 0, 1000)
        report["ingest_per_s"] = drawers / spent
        report["needles"] = len(needles)
        print(f"== {drawers:,} drawers ({len(needles)} needles), ingest {drawers / spent:,.0f}/s with matrices")
        stores = {arm: _open(palace, args.token_dim) for arm in ARMS}
        searchers = {arm: _searcher(stores[arm], arm) for arm in ARMS}
        rows: dict[str, dict[str, object]] = {}
        for arm, searcher in searchers.items():  # the first search builds (or loads) the tier
            started = time.perf_counter()
            searcher.search(SearchRequest(needles[0].query, limit=K))
            tier = searcher.tier
            rows[arm] = {
                "first_search_ms": (time.perf_counter() - started) * 1000,
                "ram_b_per_drawer": tier.ram_bytes() / drawers if isinstance(tier, FdeTier) else None,
                "nlist": tier.codebook.nlist if isinstance(tier, FdeTier) and tier.codebook else None,
            }
        timings: dict[str, dict[str, list[float]]] = {arm: {"unscoped": [], "wing": []} for arm in ARMS}
        found = {arm: 0 for arm in ARMS}
        overlap: dict[str, list[float]] = {"fde-pq": [], "fde-ivf": []}
        drawn_needles = {arm: 0 for arm in ("fde-float", "fde-pq", "fde-ivf")}
        for needle in needles:
            for scope in ("unscoped", "wing"):
                request = SearchRequest(needle.query, limit=K, wing=needle.wing if scope == "wing" else None)
                for arm, searcher in searchers.items():
                    started = time.perf_counter()
                    result = searcher.search(request)
                    timings[arm][scope].append((time.perf_counter() - started) * 1000)
                    if scope == "unscoped":
                        wanted = stores[arm].drawer_ids.append(needle.wing, needle.room, needle.index)
                        found[arm] += any(hit.id == wanted for hit in result.hits)
            draws = {arm: _draw(searchers[arm], stores[arm], needle) for arm in drawn_needles}
            for arm, drawn in draws.items():
                wanted = stores[arm].drawer_ids.append(needle.wing, needle.room, needle.index)
                drawn_needles[arm] += wanted in {d.id for d in stores[arm].hydrate_many(sorted(drawn)).values()}
            for arm in overlap:
                overlap[arm].append(len(draws["fde-float"] & draws[arm]) / len(draws["fde-float"]))
        for arm in ARMS:
            rows[arm]["p50_unscoped_ms"] = statistics.median(timings[arm]["unscoped"])
            rows[arm]["p50_wing_ms"] = statistics.median(timings[arm]["wing"])
            rows[arm]["recall_at_5"] = found[arm] / len(needles)
            if arm in overlap:
                rows[arm]["stage1_overlap"] = statistics.mean(overlap[arm])
            if arm in drawn_needles:
                rows[arm]["stage1_needles"] = drawn_needles[arm] / len(needles)
            failed |= found[arm] < len(needles)
            stores[arm].close()
        report["arms"] = rows
    for arm, row in rows.items():
        ram = "" if row["ram_b_per_drawer"] is None else f"  RAM {row['ram_b_per_drawer']:,.0f} B/drawer"
        lists = "" if row["nlist"] is None else f"  nlist {row['nlist']}"
        share = "" if "stage1_needles" not in row else f"  needles drawn by stage 1 {row['stage1_needles']:.0%}"
        if "stage1_overlap" in row:
            share += f", overlap with fde-float's draw {row['stage1_overlap']:.1%}"
        print(
            f"  {arm:<9} first search {row['first_search_ms']:,.0f} ms{ram}{lists}  "
            f"p50 unscoped {row['p50_unscoped_ms']:.1f} ms  wing {row['p50_wing_ms']:.1f} ms  "
            f"R@5 {row['recall_at_5']:.0%}{share}"
        )
    report["wall_s"] = time.perf_counter() - began
    verdict = "FAILED: a needle was missed" if failed else "every needle found"
    print(f"wall: {report['wall_s']:.0f} s; commit {report['commit']}; {verdict}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
