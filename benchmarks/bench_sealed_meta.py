"""What sealing the metadata costs (issue 29): sealed ingest, open, scoped and unscoped search, the migration.

    python benchmarks/bench_sealed_meta.py                # 10k and 100k drawers
    python benchmarks/bench_sealed_meta.py --sizes 10000  # one size
    python benchmarks/bench_sealed_meta.py --smoke        # 300 drawers, a few queries (CI)
    python benchmarks/bench_sealed_meta.py --sizes 10000 --rounds 3 --base d887a70 --out /tmp/rounds
                                                          # base, head, base, head, ... one process each

Per size, on a fresh sealed vault (hash embedder, full-scan tier; 5 wings × 4 rooms, Zipf pseudo-words):

* ingest — drawers/s through `VaultStore.write` in 1,000-drawer batches (screened);
* open — the seconds a writable `open_vault` of the built vault takes, then the first `stats()` (taxonomy);
* search — warm p50 of `Searcher.search` (limit 10) unscoped, by wing, by room, by wing+room, both wall time
  and the searching process's CPU time (`time.process_time`: every thread of the process, BLAS's too); on a
  shared machine the wall figure carries the run queue, the CPU figure mostly does not;
* migration — (only where this build has it) the rate at which a writable open seals the metadata of a vault
  written in the pre-issue-29 shape (the shape is produced by this build with the migration switched off and
  the ``metadata`` marker removed, which is exactly that write path).

For a same-run comparison with another commit, run this file against that commit's sources on ``PYTHONPATH``
(``git archive <commit> packages | tar -x -C /tmp/base`` and every ``packages/*/src`` on the path): the script
uses only APIs both sides have, and prints ``migration: n/a`` where the build has none. ``--rounds N --base REV``
does exactly that N times per side and size, interleaved (base, head, base, head, ...), each round a fresh
process; ``--head`` defaults to ``HEAD`` (also archived, so both sides import the same way). Each round's JSON,
with the load average before and after it and the source the round imported, goes to ``--out``; the summary
printed at the end is each side's median over rounds, its spread and best round, and head/base.
``--blas-threads 1`` caps numpy's BLAS threads in the rounds: idle BLAS threads spin, so on a busy machine an
uncapped query's CPU time counts their waiting as well as its work.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import random
import sqlite3
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from dataclasses import replace
from pathlib import Path
from typing import Any

from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.search import Searcher, SearchRequest

BATCH = 1000
WINGS = ("work", "life", "travel", "health", "money")
ROOMS = ("notes", "plans", "people", "misc")


def _vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(size)]


def _drawers(count: int, seed: int = 7) -> list[Drawer]:
    rng = random.Random(seed)  # noqa: S311 - a reproducible synthetic corpus, not a secret
    vocabulary = _vocabulary(rng)
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    out = []
    for i in range(count):
        wing, room = WINGS[i % len(WINGS)], ROOMS[(i // len(WINGS)) % len(ROOMS)]
        out.append(
            Drawer(
                id=append_drawer_id(wing, room, i),
                content=" ".join(rng.choices(vocabulary, weights, k=rng.randint(40, 80))) + ".",
                wing=wing,
                room=room,
                chunk_index=i,
                id_recipe="append",
                added_by="bench",
                filed_at="2024-01-01T00:00:00.000000Z",
                content_date="2023-12-31",
            )
        )
    return out


def _keyed(store: Any, drawers: list[Drawer]) -> list[Drawer]:
    """The drawers under the vault's id recipe (a build without keyed ids has only the public one, as made)."""
    ids = getattr(store, "drawer_ids", None)
    return drawers if ids is None else [replace(d, id=d.expected_id(ids)) for d in drawers]


def _fill(home: Path, drawers: list[Drawer]) -> tuple[float, float]:
    """Write `drawers` into a fresh sealed palace; returns drawers per wall second and per CPU second."""
    with Palace(home) as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            store.allocate_append_indices(len(drawers))
            keyed = _keyed(store, drawers)  # untimed
            started, cpu = time.perf_counter(), time.process_time()
            for first in range(0, len(keyed), BATCH):
                store.write([DrawerWrite(d) for d in keyed[first : first + BATCH]], screening=Screen())
            wall, cpu = time.perf_counter() - started, time.process_time() - cpu
            return len(drawers) / wall, len(drawers) / cpu


def _p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000.0


def _search(home: Path, drawers: list[Drawer], queries: int) -> tuple[dict[str, float], dict[str, float]]:
    """Warm p50 per scope in ms: (wall, CPU of this process)."""
    rng = random.Random(11)  # noqa: S311 - reproducible query picks, not a secret
    picks = [drawers[rng.randrange(len(drawers))] for _ in range(queries)]
    asks = [" ".join(d.content.split()[:5]) for d in picks]
    scopes: dict[str, Any] = {
        "unscoped": lambda d: {},
        "wing": lambda d: {"wing": d.wing},
        "room": lambda d: {"room": d.room},
        "wing+room": lambda d: {"wing": d.wing, "room": d.room},
    }
    found: dict[str, float] = {}
    found_cpu: dict[str, float] = {}
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        searcher = Searcher(store, HashEmbedder())
        searcher.warm()
        for name, scope in scopes.items():
            searcher.search(SearchRequest(asks[0], **scope(picks[0])))  # the scope's memo and pool, once
            samples, cpu_samples = [], []
            for drawer, ask in zip(picks, asks, strict=True):
                started, cpu = time.perf_counter(), time.process_time()
                searcher.search(SearchRequest(ask, limit=10, **scope(drawer)))
                samples.append(time.perf_counter() - started)
                cpu_samples.append(time.process_time() - cpu)
            found[name] = _p50(samples)
            found_cpu[name] = _p50(cpu_samples)
    return found, found_cpu


def _open(home: Path) -> tuple[float, float, float]:
    """Seconds of a writable open, of the open plus the first `stats()`, and that pair's CPU seconds."""
    started, cpu = time.perf_counter(), time.process_time()
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        opened = time.perf_counter() - started
        store.stats()
        return opened, time.perf_counter() - started, time.process_time() - cpu


def _migration(home: Path, drawers: list[Drawer]) -> float | None:
    """Drawers/s of the metadata migration, or None when this build has none."""
    try:
        from undercroft_store import palace as palace_module
        from undercroft_store.kernel._internal import meta_migration  # noqa: F401 - presence is the question
    except ImportError:
        return None
    with Palace(home) as palace:
        palace.init()
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as raw:
        raw.execute("DELETE FROM meta WHERE key = 'metadata'")
    original = palace_module.migrate_metadata  # type: ignore[attr-defined]
    palace_module.migrate_metadata = lambda _context: None  # type: ignore[attr-defined]
    try:
        with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
            store.allocate_append_indices(len(drawers))
            keyed = _keyed(store, drawers)
            for first in range(0, len(keyed), BATCH):
                store.write([DrawerWrite(d) for d in keyed[first : first + BATCH]], screening=Screen())
    finally:
        palace_module.migrate_metadata = original  # type: ignore[attr-defined]
    started = time.perf_counter()
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        elapsed = time.perf_counter() - started
        if not store._context.metadata_sealed:  # type: ignore[attr-defined]
            raise SystemExit("the migration did not run")
    return len(drawers) / elapsed


def run(size: int, queries: int) -> dict[str, Any]:
    """Every figure for one vault size."""
    drawers = _drawers(size)
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "palace"
        ingest, ingest_cpu = _fill(home, drawers)
        opened, with_stats, with_stats_cpu = _open(home)
        search, search_cpu = _search(home, drawers, queries)
        migration = _migration(Path(scratch) / "legacy", drawers)
    return {
        "size": size,
        "queries": queries,
        "ingest_per_s": round(ingest, 1),
        "ingest_per_cpu_s": round(ingest_cpu, 1),
        "open_s": round(opened, 4),
        "open_and_stats_s": round(with_stats, 4),
        "open_and_stats_cpu_s": round(with_stats_cpu, 4),
        "search_p50_ms": {k: round(v, 2) for k, v in search.items()},
        "search_cpu_p50_ms": {k: round(v, 2) for k, v in search_cpu.items()},
        "migration_per_s": None if migration is None else round(migration, 1),
        "source": str(Path(sys.modules[Palace.__module__].__file__ or "?").parents[1]),  # which build ran
    }


def _flatten(result: dict[str, Any]) -> dict[str, float]:
    """The figures of one round as flat ``name: number`` pairs (nested per-scope dicts become ``name.scope``)."""
    flat: dict[str, float] = {}
    for key, value in result.items():
        if isinstance(value, dict):
            flat.update({f"{key}.{scope}": float(v) for scope, v in value.items()})
        elif isinstance(value, int | float) and key not in ("size", "queries"):
            flat[key] = float(value)
    return flat


def _archive(rev: str, into: Path) -> tuple[str, Path]:
    """`git archive` the packages/ of `rev` into `into`; returns (the short commit, the tree's root)."""
    repo = Path(__file__).resolve().parent.parent
    commit = subprocess.run(
        ["git", "-C", str(repo), "rev-parse", "--short", f"{rev}^{{commit}}"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    tar = subprocess.run(["git", "-C", str(repo), "archive", commit, "packages"], check=True, capture_output=True)
    root = into / commit
    root.mkdir(parents=True, exist_ok=True)
    with tarfile.open(fileobj=io.BytesIO(tar.stdout)) as archive:
        archive.extractall(root, filter="data")
    return commit, root


def _one_round(root: Path, size: int, queries: int, smoke: bool, blas_threads: int | None) -> dict[str, Any]:
    """One fresh process measuring one size against the sources under `root`."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(sorted(str(p) for p in (root / "packages").glob("*/src")))
    if blas_threads:  # BLAS helper threads spin while they wait: on a busy machine that is CPU time, not work
        env.update({name: str(blas_threads) for name in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")})
    argv = [sys.executable, str(Path(__file__).resolve())]
    argv += ["--smoke"] if smoke else ["--sizes", str(size), "--queries", str(queries)]
    done = subprocess.run(argv, env=env, check=True, stdout=subprocess.PIPE, text=True)  # stderr shows
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if not str(result["source"]).startswith(str(root)):  # an editable install shadowed the archive
        raise SystemExit(f"the round imported {result['source']}, not {root}")
    return result


def _rounds(args: argparse.Namespace) -> int:
    """Interleaved rounds per side and size; each round's JSON to --out; the summary to stdout."""
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    sizes, queries = ([300], 5) if args.smoke else (args.sizes, args.queries)
    summary: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as scratch:
        sides = {name: _archive(rev, Path(scratch)) for name, rev in (("base", args.base), ("head", args.head))}
        for size in sizes:
            per_side: dict[str, list[dict[str, float]]] = {"base": [], "head": []}
            for number in range(1, args.rounds + 1):
                for name, (commit, root) in sides.items():
                    load_before, started = os.getloadavg(), time.strftime("%H:%M:%SZ", time.gmtime())
                    result = _one_round(root, size, queries, args.smoke, args.blas_threads)
                    record = {
                        "side": name,
                        "commit": commit,
                        "round": number,
                        "started_utc": started,
                        "ended_utc": time.strftime("%H:%M:%SZ", time.gmtime()),
                        "load_before": [round(x, 2) for x in load_before],
                        "load_after": [round(x, 2) for x in os.getloadavg()],
                        "blas_threads": args.blas_threads,
                        **result,
                    }
                    (out / f"{result['size']}-r{number}-{name}.json").write_text(json.dumps(record, indent=1) + "\n")
                    print(json.dumps(record), flush=True)
                    per_side[name].append(_flatten(result))
            summary[str(size)] = _summarise(per_side)
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    print(json.dumps({"summary": summary}), flush=True)
    return 0


def _summarise(per_side: dict[str, list[dict[str, float]]]) -> dict[str, dict[str, float | None]]:
    """Per figure: each side's median over rounds, its spread ((max - min) / median), its best round, and
    head/base of the medians and of the bests."""
    figures: dict[str, dict[str, float | None]] = {}
    for key in per_side["head"][0]:
        row: dict[str, float | None] = {}
        for name, rounds in per_side.items():
            values = [r[key] for r in rounds if key in r]
            middle = statistics.median(values) if values else None
            row[f"{name}_median"] = None if middle is None else round(middle, 4)
            row[f"{name}_spread"] = round((max(values) - min(values)) / middle, 3) if values and middle else None
            # the round least disturbed by the machine: the highest rate, the lowest time
            row[f"{name}_best"] = (max if "_per_" in key else min)(values) if values else None
        base, head = row["base_median"], row["head_median"]
        row["head_over_base"] = round(head / base, 3) if base and head is not None else None
        base, head = row["base_best"], row["head_best"]
        row["best_head_over_base"] = round(head / base, 3) if base and head is not None else None
        figures[key] = row
    return figures


def main(argv: list[str] | None = None) -> int:
    """Run the sizes asked for and print one JSON line per size (or, with --rounds, drive both sides)."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--smoke", action="store_true", help="300 drawers, 5 queries (seconds; CI)")
    parser.add_argument("--rounds", type=int, default=0, help="interleaved rounds per side (needs --base, --out)")
    parser.add_argument("--base", help="the commit to compare against (git archive of its packages/)")
    parser.add_argument("--head", default="HEAD", help="the commit measured as head (default HEAD)")
    parser.add_argument("--out", help="the folder each round's JSON and summary.json are written to")
    parser.add_argument("--blas-threads", type=int, help="with --rounds: cap the rounds' BLAS/OpenMP threads")
    args = parser.parse_args(argv)
    if args.rounds < 0 or (args.rounds and not (args.base and args.out)):
        parser.error("--rounds N needs N >= 1, --base REV and --out DIR")
    if args.blas_threads is not None and args.blas_threads < 1:
        parser.error("--blas-threads needs N >= 1")
    if args.rounds:
        return _rounds(args)
    sizes, queries = ([300], 5) if args.smoke else (args.sizes, args.queries)
    for size in sizes:
        print(json.dumps(run(size, queries)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
