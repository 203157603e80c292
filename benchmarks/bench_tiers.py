"""Candidate tiers at scale: one sealed vault grown through checkpoints, the PQ/IVF tier beside the full scan.

    python benchmarks/bench_tiers.py --smoke                       # 1,500 and 3,000 drawers (seconds)
    python benchmarks/bench_tiers.py                               # 10k, 25k, 50k (about ten minutes here)
    python benchmarks/bench_tiers.py --checkpoints 100000,1000000 --needles 20 --json out.json

The corpus is undercroft-bench's synthetic instrument (`undercroft_bench.synth_corpus`: Zipf vocabulary,
8 wings × 12 rooms, needles planted at each growth step). At every checkpoint the vault is closed and opened
again, then for each tier — ``full-scan`` (the default) and ``pq`` (``UNDERCROFT_RETRIEVAL=pq``, IVF above
``UNDERCROFT_IVF_MIN``) — it reports, from the same handle state and in the same run:

* R@5 of every needle planted so far, unscoped, wing-, room- and wing+room-scoped, and p50 latency of each;
* open-to-first-result (open, a fresh searcher, one search) and the tier's own load (the decrypt-once cache
  for the full scan; the sealed codebook and code rows for pq, trained and encoded the first time);
* RAM per drawer of the tier's index (full scan: the float32 matrix; pq: codes, ids, marks, seqs and codebook,
  and beside it the one query's exact rows its second stage opened — every pq query is timed cold);
* the cost of keeping pq in step: a batch of new drawers written, then the next search's incremental coding;
* with ``--offsets 0,100,990``, at the last checkpoint, deep pages: each page (``limit`` 10 at that offset, the
  ranking's clock pinned) timed cold, then beside the single deeper call whose tail it must equal hit for hit,
  then again warm (the deeper call's exact rows cached, as when a reader pages on), with the rows hydrated and
  the cost per hydrated row of the cold page. A page that is not that slice fails the run.

A needle missed by any tier, scope or checkpoint is a failed run (exit 1).
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import UTC, datetime
from pathlib import Path

from undercroft_bench.synth import write_step
from undercroft_bench.synth_corpus import Needle, SynthSpec
from undercroft_core import DrawerIds, HashEmbedder
from undercroft_store import Palace, VaultStore
from undercroft_store.search import Searcher, SearchRequest
from undercroft_store.search.request import MAX_LIMIT
from undercroft_store.search.tiers import PQTier, TierOptions

SCOPES = ("unscoped", "wing", "room", "wing+room")
TIERS = ("full-scan", "pq")
SMOKE = ["--checkpoints", "1500,3000", "--needles", "4", "--batch", "500", "--maintain", "200", "--offsets", "0,40"]
K = 5


def _request(needle: Needle, scope: str) -> SearchRequest:
    wing = needle.wing if scope in ("wing", "wing+room") else None
    room = needle.room if scope in ("room", "wing+room") else None
    return SearchRequest(needle.query, limit=K, wing=wing, room=room)


def _searcher(store: VaultStore, tier: str, options: TierOptions) -> Searcher:
    embedder = HashEmbedder()
    return Searcher(store, embedder, retrieval=None if tier == "full-scan" else tier, tier_options=options)


def _scopes(searcher: Searcher, needles: list[Needle], ids: DrawerIds) -> dict[str, dict[str, float]]:
    figures: dict[str, dict[str, float]] = {}
    for scope in SCOPES:
        hits, timings = 0, []
        for needle in needles:
            if isinstance(searcher.tier, PQTier):
                searcher.tier.drop_exact_rows()  # cold: every query opens its own candidates' embeddings
            started = time.perf_counter()
            result = searcher.search(_request(needle, scope))
            timings.append((time.perf_counter() - started) * 1000)
            wanted = ids.append(needle.wing, needle.room, needle.index)
            hits += any(hit.id == wanted for hit in result.hits)
        figures[scope] = {"recall": hits / max(1, len(needles)), "p50_ms": statistics.median(timings or [0.0])}
    return figures


def _offsets(searcher: Searcher, needles: list[Needle], offsets: list[int]) -> list[dict[str, float]]:
    """Deep pages of a few needle queries: each page timed, and checked against the one deeper call's slice."""
    pinned = datetime(2030, 1, 1, tzinfo=UTC)
    rows: list[dict[str, float]] = []
    for offset in offsets:
        page_ms, deep_ms, warm_ms, pools, tiled = [], [], [], [], True
        for needle in needles[:3]:
            if isinstance(searcher.tier, PQTier):
                searcher.tier.drop_exact_rows()
            started = time.perf_counter()
            page = searcher.search(SearchRequest(needle.query, limit=10, offset=offset, ranked_at=pinned))
            page_ms.append((time.perf_counter() - started) * 1000)
            if isinstance(searcher.tier, PQTier):
                searcher.tier.drop_exact_rows()
            started = time.perf_counter()
            deep = searcher.search(SearchRequest(needle.query, limit=offset + 10, ranked_at=pinned))
            deep_ms.append((time.perf_counter() - started) * 1000)
            started = time.perf_counter()  # the same page again, warm: the deeper call's exact rows are cached
            again = searcher.search(SearchRequest(needle.query, limit=10, offset=offset, ranked_at=pinned))
            warm_ms.append((time.perf_counter() - started) * 1000)
            tiled &= again.hits == page.hits
            pools.append(page.pool)
            tiled &= [hit.to_dict() for hit in page.hits] == [hit.to_dict() for hit in deep.hits[offset:]]
        page_p50 = statistics.median(page_ms)
        pool = statistics.median(pools)
        rows.append(
            {
                "offset": offset,
                "page_p50_ms": page_p50,
                "deep_p50_ms": statistics.median(deep_ms),
                "warm_p50_ms": statistics.median(warm_ms),
                "hydrated": pool,
                "us_per_hydrated_row": page_p50 * 1000 / max(pool, 1),
                "tiled": float(tiled),
            }
        )
    return rows


def _ram_per_drawer(searcher: Searcher, drawers: int) -> float:
    tier = searcher.tier
    if isinstance(tier, PQTier):
        return tier.ram_bytes() / drawers
    seqs, unit = searcher.cache.load(searcher._store)
    return (unit.nbytes + seqs.nbytes) / drawers


def _checkpoint(
    palace: Palace, needles: list[Needle], drawers: int, options: TierOptions, offsets: list[int]
) -> dict[str, object]:
    embedder = HashEmbedder()
    row: dict[str, object] = {"drawers": drawers}
    for tier in TIERS:
        started = time.perf_counter()
        store = palace.open_vault("bench", embedder)
        searcher = _searcher(store, tier, options)
        loaded = time.perf_counter()
        searcher._drawing_tier()  # the tier's own load: decrypt-once cache, or sealed codes (built the first time)
        tier_ms = (time.perf_counter() - loaded) * 1000
        searcher.search(_request(needles[0], "unscoped"))
        first_ms = (time.perf_counter() - started) * 1000
        row[tier] = {
            "open_to_first_ms": first_ms,
            "tier_load_ms": tier_ms,
            "ram_b_per_drawer": _ram_per_drawer(searcher, drawers),
            "scopes": _scopes(searcher, needles, store.drawer_ids),
        }
        if offsets:
            row[tier]["offsets"] = _offsets(searcher, needles, offsets)  # type: ignore[index]
        if isinstance(searcher.tier, PQTier):  # after the last needle search: one query's exact rows
            row[tier]["exact_cache_b_per_drawer"] = searcher.tier.exact_bytes() / drawers  # type: ignore[index]
        if isinstance(searcher.tier, PQTier):
            row[tier]["nlist"] = searcher.tier.nlist  # type: ignore[index]
            row[tier]["generation"] = searcher.tier.generation  # type: ignore[index]
        store.close()
        # Open again: the pq tier now loads its sealed rows instead of training (the full scan decrypts again).
        started = time.perf_counter()
        with palace.open_vault("bench", embedder) as store:
            searcher = _searcher(store, tier, options)
            searcher.search(_request(needles[0], "unscoped"))
            row[tier]["reopen_to_first_ms"] = (time.perf_counter() - started) * 1000  # type: ignore[index]
    return row


def _maintain(palace: Palace, spec: SynthSpec, start: int, count: int, options: TierOptions) -> dict[str, float]:
    """Write ``count`` drawers, then time the pq tier's incremental coding of them on the next search."""
    embedder = HashEmbedder()
    with palace.open_vault("bench", embedder) as store:
        searcher = _searcher(store, "pq", options)
        searcher._drawing_tier()
        spent, _ = write_step(store, spec, start, start + count, 10**9, count)
        tier = searcher.tier
        assert isinstance(tier, PQTier)
        before = tier.encoded
        started = time.perf_counter()
        searcher._drawing_tier()
        coded = time.perf_counter() - started
        return {
            "written": count,
            "write_per_s": count / spent,
            "coded": tier.encoded - before,
            "code_per_s": count / coded,
        }


def _commit() -> str:
    done = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=False)
    return done.stdout.strip() or "unknown"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--smoke", action="store_true", help="tiny checkpoints: checks the instrument works")
    parser.add_argument("--checkpoints", default="10000,25000,50000", help="comma list of vault sizes")
    parser.add_argument("--needles", type=int, default=10, help="needles planted per growth step")
    parser.add_argument("--batch", type=int, default=2000, help="drawers per write call")
    parser.add_argument("--maintain", type=int, default=1000, help="drawers written to time incremental coding")
    parser.add_argument("--ivf-min", type=int, default=8192, help="UNDERCROFT_IVF_MIN for the pq tier")
    parser.add_argument("--offsets", default="", help="comma list of page offsets timed at the last checkpoint")
    parser.add_argument("--json", type=Path, help="also write the figures here")
    args = parser.parse_args(SMOKE + [a for a in argv if a != "--smoke"] if "--smoke" in argv else argv)
    checkpoints = [int(part) for part in args.checkpoints.split(",")]
    offsets = [int(part) for part in args.offsets.split(",") if part]
    if any(offset < 0 or offset + 10 > MAX_LIMIT for offset in offsets):
        parser.error(f"--offsets: each must be 0 to {MAX_LIMIT - 10} (the deeper call asks for offset + 10 hits)")
    spec = SynthSpec(needles_per_step=args.needles)
    options = TierOptions(ivf_min=args.ivf_min)
    began = time.perf_counter()
    report: dict[str, object] = {
        "command": "python benchmarks/bench_tiers.py " + " ".join(argv),
        "date": datetime.now(UTC).strftime("%Y-%m-%d"),
        "commit": _commit(),
        "checkpoints": [],
    }
    failed = False
    with tempfile.TemporaryDirectory(prefix="undercroft-tiers-") as scratch, Palace(Path(scratch) / "p") as palace:
        palace.create_vault("bench", level="sealed")
        needles: list[Needle] = []
        written = 0
        for target in checkpoints:
            with palace.open_vault("bench", HashEmbedder()) as store:
                spent, planted = write_step(store, spec, written, target, len(needles), args.batch)
            needles.extend(planted)
            rate = (target - written) / spent
            written = target
            row = _checkpoint(palace, needles, target, options, offsets if target == checkpoints[-1] else [])
            row["ingest_per_s"] = rate
            row["needles"] = len(needles)
            report["checkpoints"].append(row)  # type: ignore[attr-defined]
            print(_render(row), flush=True)
            for tier in TIERS:
                scopes = row[tier]["scopes"]  # type: ignore[index]
                failed |= any(figures["recall"] < 1.0 for figures in scopes.values())
                failed |= any(page["tiled"] < 1.0 for page in row[tier].get("offsets", []))  # type: ignore[attr-defined]
        maintain = _maintain(palace, spec, written, args.maintain, options)
        report["maintain"] = maintain
        print(
            f"maintain: {maintain['written']:.0f} drawers written at {maintain['write_per_s']:,.0f}/s; "
            f"pq coded them on the next search at {maintain['code_per_s']:,.0f}/s",
            flush=True,
        )
    report["wall_s"] = time.perf_counter() - began
    verdict = "FAILED: a needle was missed or a page did not tile" if failed else "every needle found, every page tiled"
    print(f"wall: {report['wall_s']:.0f} s; commit {report['commit']}; {verdict}")
    if args.json:
        args.json.write_text(json.dumps(report, indent=2) + "\n", encoding="utf-8")
    return 1 if failed else 0


def _render(row: dict[str, object]) -> str:
    lines = [f"== {row['drawers']:,} drawers ({row['needles']} needles), ingest {row['ingest_per_s']:,.0f}/s"]
    for tier in TIERS:
        figures = row[tier]
        assert isinstance(figures, dict)
        scopes = "  ".join(
            f"{scope} R@5 {f['recall'] * 100:.0f}% p50 {f['p50_ms']:.0f} ms" for scope, f in figures["scopes"].items()
        )
        extra = ""
        if "nlist" in figures:
            extra = (
                f" (+ exact-row cache {figures['exact_cache_b_per_drawer']:,.0f} B/drawer)"
                f" nlist {figures['nlist']} gen {figures['generation']}"
            )
        lines.append(
            f"  {tier:<9} open→first {figures['open_to_first_ms']:,.0f} ms"
            f" (tier load {figures['tier_load_ms']:,.0f} ms;"
            f" reopened {figures['reopen_to_first_ms']:,.0f} ms)"
            f"  RAM {figures['ram_b_per_drawer']:,.0f} B/drawer{extra}\n    {scopes}"
        )
        for page in figures.get("offsets", []):
            lines.append(
                f"    offset {page['offset']:,.0f}: page p50 {page['page_p50_ms']:,.0f} ms"
                f" (warm {page['warm_p50_ms']:,.0f} ms; the deeper call {page['deep_p50_ms']:,.0f} ms),"
                f" {page['hydrated']:,.0f} rows hydrated,"
                f" {page['us_per_hydrated_row']:,.1f} µs/row, {'tiled' if page['tiled'] else 'NOT TILED'}"
            )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
