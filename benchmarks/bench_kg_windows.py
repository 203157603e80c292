"""Sealed knowledge-graph windows (issue 29): what sealing each fact's window costs, measured in one run.

    python benchmarks/bench_kg_windows.py                  # 10k and 100k facts
    python benchmarks/bench_kg_windows.py --sizes 100000
    python benchmarks/bench_kg_windows.py --smoke          # 500 facts: checks the instrument works

Per size, two sealed vaults built from the same facts: one as a build before sealed windows left it (no
``kg_windows`` marker, its open migration unwired while it is written: clear windows, SQL as-of filter), one
created now (sealed windows). Figures: ``add_many`` ingest (facts/s, 1,000 per transaction) of each; the
migrating writable open of the clear vault (facts/s; the whole open, VACUUM included); ``query(entity,
as_of)`` median over 50 probes and ``rel(predicate, as_of)`` median of 5 (after a warm call each), on the
clear vault, then on the same vault once migrated, then on the new one. Ratios are sealed / clear (> 1:
sealed is slower).
"""

from __future__ import annotations

import argparse
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

from undercroft_core import HashEmbedder
from undercroft_store import Palace
from undercroft_store.kernel import seams
from undercroft_store.memory.kg.graph import FactInput, KnowledgeGraph

BATCH = 1000
ENTITIES = 5000
PREDICATES = ("works_at", "lives_in", "knows", "owns", "prefers", "manages", "uses", "reports_to")


def _facts(n: int) -> list[FactInput]:
    return [
        FactInput(
            f"person {i % ENTITIES}",
            PREDICATES[i % len(PREDICATES)],
            f"thing {(i * 7919) % (ENTITIES * 4)}",
            valid_from=f"{2000 + i % 24}-01-01",
            valid_to=f"{2001 + i % 24}-06-30" if i % 3 == 0 else None,
        )
        for i in range(n)
    ]


def _add(palace: Palace, facts: list[FactInput]) -> float:
    with palace.open_vault("default", HashEmbedder()) as store:
        graph = KnowledgeGraph(store)
        start = time.perf_counter()
        for offset in range(0, len(facts), BATCH):
            graph.add_many(facts[offset : offset + BATCH])
        return len(facts) / (time.perf_counter() - start)


def _queries(palace: Palace) -> tuple[float, float]:
    probes = [f"person {(i * 37) % ENTITIES}" for i in range(50)]
    with palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        graph = KnowledgeGraph(store)
        graph.query(probes[0], as_of="2010-06-01")  # warm
        timings = []
        for probe in probes:
            started = time.perf_counter()
            graph.query(probe, as_of="2010-06-01")
            timings.append(time.perf_counter() - started)
        graph.rel(PREDICATES[0], as_of="2001-06-01")  # warm
        rels = []
        for _ in range(5):
            started = time.perf_counter()
            graph.rel(PREDICATES[0], as_of="2001-06-01")
            rels.append(time.perf_counter() - started)
    return statistics.median(timings) * 1000, statistics.median(rels) * 1000


def run(n: int) -> dict[str, float]:
    facts = _facts(n)
    with tempfile.TemporaryDirectory() as tmp:
        clear_home, sealed_home = Path(tmp) / "clear", Path(tmp) / "sealed"
        with Palace(clear_home) as palace:
            palace.init()
            with sqlite3.connect(clear_home / "vaults" / "default" / "vault.db") as connection:
                connection.execute("DELETE FROM meta WHERE key = 'kg_windows'")
            registered = seams.open_migration("kg_windows")
            seams._open_migrations["kg_windows"] = lambda _context: None  # as the build before: no migration
            try:
                clear_add = _add(palace, facts)
                clear_query, clear_rel = _queries(palace)
            finally:
                seams._open_migrations["kg_windows"] = registered
            started = time.perf_counter()
            with palace.open_vault("default", HashEmbedder()) as store:
                migrate_s = time.perf_counter() - started
                healed = [line for line in store.healed if "validity windows" in line]
                assert healed and store.verify().ok, "the migration did not run clean"
            migrated_query, migrated_rel = _queries(palace)
        with Palace(sealed_home) as palace:
            palace.init()
            sealed_add = _add(palace, facts)
            sealed_query, sealed_rel = _queries(palace)
    return {
        "clear_add": clear_add,
        "sealed_add": sealed_add,
        "migrate_per_s": n / migrate_s,
        "migrate_s": migrate_s,
        "clear_query": clear_query,
        "migrated_query": migrated_query,
        "sealed_query": sealed_query,
        "clear_rel": clear_rel,
        "migrated_rel": migrated_rel,
        "sealed_rel": sealed_rel,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[10_000, 100_000])
    parser.add_argument("--smoke", action="store_true", help="500 facts: checks the instrument only")
    args = parser.parse_args()
    for n in [500] if args.smoke else args.sizes:
        f = run(n)
        print(f"facts: {n:,}")
        print(
            f"  add_many:  clear {f['clear_add']:>9,.0f}/s   sealed {f['sealed_add']:>9,.0f}/s   "
            f"ratio {f['clear_add'] / f['sealed_add']:.2f}x (clear rate / sealed rate)"
        )
        print(f"  migration: {f['migrate_per_s']:>9,.0f} facts/s ({f['migrate_s']:.2f} s, the whole writable open)")
        print(
            f"  query(entity, as_of) p50: clear {f['clear_query']:.2f} ms   migrated {f['migrated_query']:.2f} ms   "
            f"new sealed {f['sealed_query']:.2f} ms   ratio {f['sealed_query'] / f['clear_query']:.2f}x"
        )
        print(
            f"  rel(predicate, as_of):    clear {f['clear_rel']:.1f} ms   migrated {f['migrated_rel']:.1f} ms   "
            f"new sealed {f['sealed_rel']:.1f} ms   ratio {f['sealed_rel'] / f['clear_rel']:.2f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
