"""What sealing the metadata costs (issue 29): sealed ingest, open, scoped and unscoped search, the migration.

    python benchmarks/bench_sealed_meta.py                # 10k and 100k drawers
    python benchmarks/bench_sealed_meta.py --sizes 10000  # one size
    python benchmarks/bench_sealed_meta.py --smoke        # 300 drawers, a few queries (CI)

Per size, on a fresh sealed vault (hash embedder, full-scan tier; 5 wings × 4 rooms, Zipf pseudo-words):

* ingest — drawers/s through `VaultStore.write` in 1,000-drawer batches (screened);
* open — the seconds a writable `open_vault` of the built vault takes, then the first `stats()` (taxonomy);
* search — warm p50 of `Searcher.search` (limit 10) unscoped, by wing, by room, by wing+room;
* migration — (only where this build has it) the rate at which a writable open seals the metadata of a vault
  written in the pre-issue-29 shape (the shape is produced by this build with the migration switched off and
  the ``metadata`` marker removed, which is exactly that write path).

For a same-run comparison with another commit, run this file against that commit's sources on ``PYTHONPATH``
(``git archive <commit> packages | tar -x -C /tmp/base`` and every ``packages/*/src`` on the path): the script
uses only APIs both sides have, and prints ``migration: n/a`` where the build has none.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import statistics
import sys
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


def _fill(home: Path, drawers: list[Drawer]) -> float:
    """Write `drawers` into a fresh sealed palace; returns drawers/s."""
    with Palace(home) as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            store.allocate_append_indices(len(drawers))
            keyed = [replace(d, id=d.expected_id(store.drawer_ids)) for d in drawers]  # the vault's recipe, untimed
            started = time.perf_counter()
            for first in range(0, len(keyed), BATCH):
                store.write([DrawerWrite(d) for d in keyed[first : first + BATCH]], screening=Screen())
            return len(drawers) / (time.perf_counter() - started)


def _p50(samples: list[float]) -> float:
    return statistics.median(samples) * 1000.0


def _search(home: Path, drawers: list[Drawer], queries: int) -> dict[str, float]:
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
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        searcher = Searcher(store, HashEmbedder())
        searcher.warm()
        for name, scope in scopes.items():
            searcher.search(SearchRequest(asks[0], **scope(picks[0])))  # the scope's memo and pool, once
            samples = []
            for drawer, ask in zip(picks, asks, strict=True):
                started = time.perf_counter()
                searcher.search(SearchRequest(ask, limit=10, **scope(drawer)))
                samples.append(time.perf_counter() - started)
            found[name] = _p50(samples)
    return found


def _open(home: Path) -> tuple[float, float]:
    started = time.perf_counter()
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        opened = time.perf_counter() - started
        store.stats()
        return opened, time.perf_counter() - started


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
            keyed = [replace(d, id=d.expected_id(store.drawer_ids)) for d in drawers]
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
        ingest = _fill(home, drawers)
        opened, with_stats = _open(home)
        search = _search(home, drawers, queries)
        migration = _migration(Path(scratch) / "legacy", drawers)
    return {
        "size": size,
        "ingest_per_s": round(ingest, 1),
        "open_s": round(opened, 3),
        "open_and_stats_s": round(with_stats, 3),
        "search_p50_ms": {k: round(v, 2) for k, v in search.items()},
        "migration_per_s": None if migration is None else round(migration, 1),
    }


def main(argv: list[str] | None = None) -> int:
    """Run the sizes asked for and print one JSON line per size."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--queries", type=int, default=60)
    parser.add_argument("--smoke", action="store_true", help="300 drawers, 5 queries (seconds; CI)")
    args = parser.parse_args(argv)
    sizes, queries = ([300], 5) if args.smoke else (args.sizes, args.queries)
    for size in sizes:
        print(json.dumps(run(size, queries)), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
