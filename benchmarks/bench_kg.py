"""Knowledge-graph cost beside raw SQLite, measured in the same run.

    python benchmarks/bench_kg.py            # 100k facts
    python benchmarks/bench_kg.py --smoke    # a few seconds: checks the instrument works

Figures: sealed `add_many` ingest (facts/s, 1,000 per transaction: blind indexes, two seals, HMAC, audit
record, chain step each) beside a raw SQLite insert of the same triples as plain text (WAL,
synchronous=FULL, 1,000 per transaction); `query(entity)` and `query(entity, as_of=...)` latency (each fact
returned is HMAC-verified and opened) beside a raw indexed SELECT of the same rows; `rel(predicate)`.
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
        )
        for i in range(n)
    ]


def _raw(directory: Path, facts: list[FactInput], probes: list[str]) -> tuple[float, float]:
    connection = sqlite3.connect(directory / "raw.db", isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.execute("CREATE TABLE f (s TEXT, p TEXT, o TEXT, valid_from TEXT, valid_to TEXT)")
    connection.execute("CREATE INDEX fs ON f (s, valid_from)")
    connection.execute("CREATE INDEX fo ON f (o, valid_from)")
    start = time.perf_counter()
    for offset in range(0, len(facts), BATCH):
        connection.execute("BEGIN")
        connection.executemany(
            "INSERT INTO f VALUES (?, ?, ?, ?, NULL)",
            [(f.subject, f.predicate, f.object, f.valid_from) for f in facts[offset : offset + BATCH]],
        )
        connection.execute("COMMIT")
    insert_rate = len(facts) / (time.perf_counter() - start)
    timings = []
    for probe in probes:
        t = time.perf_counter()
        connection.execute("SELECT * FROM f WHERE s = ? OR o = ?", (probe, probe)).fetchall()
        timings.append(time.perf_counter() - t)
    connection.close()
    return insert_rate, statistics.median(timings) * 1000


def run(n: int) -> None:
    facts = _facts(n)
    probes = [f"person {(i * 37) % ENTITIES}" for i in range(50)]
    with tempfile.TemporaryDirectory() as tmp:
        raw_rate, raw_query_ms = _raw(Path(tmp), facts, probes)
        with Palace(Path(tmp) / "home") as palace:
            palace.init()
            with palace.open_vault("default", HashEmbedder()) as store:
                kg = KnowledgeGraph(store)
                start = time.perf_counter()
                for offset in range(0, n, BATCH):
                    kg.add_many(facts[offset : offset + BATCH])
                add_rate = n / (time.perf_counter() - start)
                query, as_of, returned = [], [], []
                for probe in probes:
                    t = time.perf_counter()
                    returned.append(len(kg.query(probe)))
                    query.append(time.perf_counter() - t)
                    t = time.perf_counter()
                    kg.query(probe, as_of="2010-06-01")
                    as_of.append(time.perf_counter() - t)
                t = time.perf_counter()
                rel = len(kg.rel(PREDICATES[0], as_of="2001-06-01"))
                rel_ms = (time.perf_counter() - t) * 1000
                stats = kg.stats()
    print(f"facts: {n:,} ({stats.entities:,} entities), sealed vault")
    print(f"  kg add_many:        {add_rate:>10,.0f} facts/s   | raw SQLite insert: {raw_rate:>10,.0f} rows/s")
    print(
        f"  kg query(entity):   {statistics.median(query) * 1000:>10.2f} ms median ({statistics.median(returned):.0f}"
        f" facts) | raw indexed SELECT: {raw_query_ms:.3f} ms"
    )
    print(f"  kg query(as_of):    {statistics.median(as_of) * 1000:>10.2f} ms median")
    print(f"  kg rel(predicate, as_of): {rel_ms:>8.1f} ms ({rel:,} facts)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny run, checks the instrument only")
    args = parser.parse_args()
    run(2000 if args.smoke else 100_000)
    return 0


if __name__ == "__main__":
    sys.exit(main())
