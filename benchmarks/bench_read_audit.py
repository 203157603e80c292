"""What ``UNDERCROFT_READ_AUDIT=chain`` costs per read, beside the same reads with auditing off.

    python benchmarks/bench_read_audit.py            # 2,000 drawers, 300 reads per door
    python benchmarks/bench_read_audit.py --smoke    # a few seconds: checks the instrument works

Figures (p50 per call, same vault, same run): `get`, `list_drawers(limit=20)` and a search with auditing
off (the baseline) and under ``chain`` (one keyed ``read/<op>`` record appended per call: BEGIN IMMEDIATE,
chain step, COMMIT with synchronous=FULL), plus a raw SQLite single-row INSERT+COMMIT on the same
filesystem — the floor a per-read durable append cannot go under.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from undercroft_core import HashEmbedder
from undercroft_store import Palace, VaultStore
from undercroft_store.search import Searcher, SearchRequest


def _p50(call: Callable[[], object], repeats: int) -> float:
    samples = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e3


def _doors(store: VaultStore, ids: list[str], repeats: int) -> dict[str, float]:
    searcher = Searcher(store, HashEmbedder())
    searcher.warm()
    cursor = iter(range(10**9))
    return {
        "get": _p50(lambda: store.get(ids[next(cursor) % len(ids)]), repeats),
        "list_drawers(limit=20)": _p50(lambda: store.list_drawers(limit=20), repeats),
        "search": _p50(lambda: searcher.search(SearchRequest("harbour lease meeting", limit=10)), max(repeats // 5, 5)),
    }


def _raw_append(directory: Path, repeats: int) -> float:
    connection = sqlite3.connect(directory / "raw.db", isolation_level=None)
    connection.execute("PRAGMA journal_mode=WAL")
    connection.execute("PRAGMA synchronous=FULL")
    connection.execute("CREATE TABLE audit (seq INTEGER PRIMARY KEY, record_id TEXT, tag BLOB, at TEXT)")

    def append() -> None:
        connection.execute("BEGIN IMMEDIATE")
        connection.execute("INSERT INTO audit (record_id, tag, at) VALUES ('read/get', zeroblob(32), 'now')")
        connection.execute("COMMIT")

    figure = _p50(append, repeats)
    connection.close()
    return figure


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args(argv)
    drawers, repeats = (200, 30) if args.smoke else (2000, 300)
    with tempfile.TemporaryDirectory() as tmp:
        home = Path(tmp) / "palace"
        with Palace(home, passphrase="bench") as palace:  # noqa: S106 - a throw-away benchmark palace
            palace.init()
            with palace.open_vault("default", HashEmbedder()) as store:
                ids: list[str] = []
                for i in range(drawers):
                    text = f"Note {i}: the harbour office lease meeting {i % 37} with team {i % 11}."
                    ids += [r.id for r in store.remember(text, wing=f"w{i % 5}", room="r", added_by="bench")]
            figures: dict[str, dict[str, float]] = {}
            for mode in ("off", "chain"):
                os.environ["UNDERCROFT_READ_AUDIT"] = mode
                with palace.open_vault("default", HashEmbedder()) as store:
                    figures[mode] = _doors(store, ids, repeats)
                    height = store.stats().chain_records
            os.environ.pop("UNDERCROFT_READ_AUDIT", None)
        raw = _raw_append(Path(tmp), repeats)
    print(f"read audit: {drawers} drawers, {repeats} reads per door (p50 ms per call)")
    for door in figures["off"]:
        off, chain = figures["off"][door], figures["chain"][door]
        print(f"  {door:<24} off {off:8.3f}   chain {chain:8.3f}   (+{chain - off:.3f} ms per audited read)")
    print(f"  raw SQLite INSERT+COMMIT (WAL, synchronous=FULL) baseline: {raw:.3f} ms")
    print(f"  chain height after the audited run: {height}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
