"""The cost of verify's structural legs and of the scoped-read index guard (issue 15, item 4).

    python benchmarks/bench_integrity.py            # 100k sealed drawers (about two minutes)
    python benchmarks/bench_integrity.py --n 10000
    python benchmarks/bench_integrity.py --smoke    # a few seconds: checks the instrument works
    python benchmarks/bench_integrity.py --flips 1000   # bit flips in the scope index: who sees a short read

One sealed vault of N drawers (hash embedder, 10 wings x 20 rooms, ~690 characters each), then, median of 3:
SQLite's ``quick_check`` and ``integrity_check`` alone and the scope-index check alone. Verify as shipped
(quick_check) and with ``deep`` (integrity_check) beside the same-run BASELINE — verify with its SQLite legs
(quick/integrity check, scope index) switched off, the verify they were added to — alternated in an order
rotated each round, median of 5 rounds. Then the scoped-read guard: the first ``list_drawers(wing=…,
limit=10)`` of a fresh handle (it runs the scope-index check once) against the second on the same handle;
and a write's chain-tail check against the head read alone.
The machine may be shared: compare each figure with its same-run baseline.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from undercroft_core import Drawer, HashEmbedder
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.integrity import verify as verify_module
from undercroft_store.kernel._internal import structure
from undercroft_store.kernel._internal.chain_append import committed_head, extendable_head

BATCH = 500
_WORDS = "the drawer holds the exact words a user saved verbatim never summarised about projects and people".split()


def _text(i: int) -> str:
    return f"memory {i}: " + " ".join(_WORDS[(i * 7 + k * 13) % len(_WORDS)] for k in range(110))


def _build(home: Path, n: int) -> None:
    with Palace(home) as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            for first in range(0, n, BATCH):
                batch = []
                for i in range(first, min(n, first + BATCH)):
                    wing, room = f"wing{i % 10}", f"room{i % 20}"
                    drawer = Drawer(
                        id=store.drawer_ids.append(wing, room, i),
                        content=_text(i),
                        wing=wing,
                        room=room,
                        chunk_index=i,
                        id_recipe="append",
                        added_by="bench",
                        filed_at="2026-05-01T09:00:00Z",
                    )
                    batch.append(DrawerWrite(drawer))
                store.write(batch, screening=Screen())


def _median(run: Callable[[], object], repeats: int = 3) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _baseline_verify(store: object) -> Callable[[], object]:
    """Verify with the SQLite check and the scope-index leg switched off (the verify they were added to)."""

    def run() -> object:
        saved = verify_module.sqlite_findings, verify_module.scope_index_findings
        verify_module.sqlite_findings = lambda connection, *, deep: []  # type: ignore[assignment]
        verify_module.scope_index_findings = lambda connection, named=None: []  # type: ignore[assignment]
        try:
            return store.verify()  # type: ignore[attr-defined]
        finally:
            verify_module.sqlite_findings, verify_module.scope_index_findings = saved

    return run


def run(n: int, root: Path) -> None:
    home = root / "palace"
    start = time.perf_counter()
    _build(home, n)
    print(f"--- {n} sealed drawers, built in {time.perf_counter() - start:.1f} s")
    with Palace(home) as palace:
        with palace.open_vault("default", HashEmbedder(), read_only=True) as store:
            connection = store._context.connection
            quick = _median(lambda: structure.sqlite_findings(connection, deep=False))
            full = _median(lambda: structure.sqlite_findings(connection, deep=True))
            scope = _median(lambda: structure.scope_index_findings(connection))
            assert store.verify(deep=True).ok  # also warms the page cache before anything is timed
            rounds: dict[str, list[float]] = {"baseline": [], "shipped": [], "deep": []}
            arms = {
                "baseline": _baseline_verify(store),
                "shipped": store.verify,
                "deep": lambda: store.verify(deep=True),
            }
            order = list(arms)
            for turn in range(5):  # alternated, the order rotated each round: a load change hits every arm alike
                for name in order[turn % 3 :] + order[: turn % 3]:
                    rounds[name].append(_median(arms[name], repeats=1))
            baseline, shipped, deep = (statistics.median(rounds[name]) for name in ("baseline", "shipped", "deep"))
        firsts, seconds = [], []
        for _ in range(3):
            with palace.open_vault("default", HashEmbedder(), read_only=True) as store:
                start = time.perf_counter()
                store.list_drawers(wing="wing3", limit=10)
                firsts.append(time.perf_counter() - start)
                start = time.perf_counter()
                store.list_drawers(wing="wing3", limit=10)
                seconds.append(time.perf_counter() - start)
        with palace.open_vault("default", HashEmbedder()) as store:
            context = store._context
            head_read = _median(lambda: [committed_head(context) for _ in range(1000)]) / 1000
            tail_check = _median(lambda: [extendable_head(context) for _ in range(1000)]) / 1000
    ms = 1000.0
    print(f"baseline verify (no SQLite legs)  {baseline * ms:9.1f} ms   (same run)")
    print(f"verify (quick_check + scope)      {shipped * ms:9.1f} ms   ({shipped / baseline:.3f}x baseline)")
    print(f"verify --deep (integrity_check)   {deep * ms:9.1f} ms   ({deep / baseline:.3f}x baseline)")
    print(f"  PRAGMA quick_check alone        {quick * ms:9.1f} ms")
    print(f"  PRAGMA integrity_check alone    {full * ms:9.1f} ms")
    print(f"  scope-index check alone         {scope * ms:9.1f} ms")
    first, second = statistics.median(firsts), statistics.median(seconds)
    print(f"scoped list, fresh handle         {first * ms:9.1f} ms   (runs the scope-index check once)")
    print(f"scoped list, same handle again    {second * ms:9.1f} ms   (baseline: guard cached)")
    print(f"write's head read                 {head_read * 1e6:9.1f} us   (baseline)")
    print(f"write's head read + tail check    {tail_check * 1e6:9.1f} us")


def flip_campaign(root: Path, flips: int, seed: int) -> None:
    """Random single-bit flips inside the drawers_scope index's pages of a 2,000-drawer vault: how many make
    a scoped seek answer short, and which check sees each (SQLite's two, and the scope-index check)."""
    home = root / "flips"
    _build(home, 2_000)
    db = home / "vaults" / "default" / "vault.db"
    with sqlite3.connect(db) as raw:
        raw.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        pages = [int(r[0]) for r in raw.execute("SELECT pageno FROM dbstat WHERE name = 'drawers_scope'")]
        size = int(raw.execute("PRAGMA page_size").fetchone()[0])
        pairs = {(w, r): n for w, r, n in raw.execute("SELECT wing, room, count(*) FROM drawers GROUP BY 1, 2")}
    wings: dict[str, int] = {}
    for (wing, _), count in pairs.items():
        wings[wing] = wings.get(wing, 0) + count
    original = db.read_bytes()
    rng = random.Random(seed)  # noqa: S311 - a reproducible campaign, not a secret
    tally = {"short": 0, "short_quick_ok": 0, "short_integrity_ok": 0, "short_scope_ok": 0, "read_malformed": 0}
    try:
        for _ in range(flips):
            data = bytearray(original)
            data[(rng.choice(pages) - 1) * size + rng.randrange(size)] ^= 1 << rng.randrange(8)
            db.write_bytes(bytes(data))
            raw = sqlite3.connect(db)
            try:
                try:
                    short = any(
                        raw.execute("SELECT count(*) FROM drawers WHERE wing = ?", (w,)).fetchone()[0] != n
                        for w, n in wings.items()
                    ) or any(
                        len(raw.execute("SELECT seq FROM drawers WHERE wing = ? AND room = ?", pair).fetchall()) != n
                        for pair, n in pairs.items()
                    )
                except sqlite3.DatabaseError:
                    short, tally["read_malformed"] = False, tally["read_malformed"] + 1  # a verdict, not silent
                if short:
                    tally["short"] += 1
                    tally["short_quick_ok"] += not structure.sqlite_findings(raw, deep=False)
                    tally["short_integrity_ok"] += not structure.sqlite_findings(raw, deep=True)
                    tally["short_scope_ok"] += not structure.scope_index_findings(raw)
            finally:
                raw.close()
    finally:
        db.write_bytes(original)
    print(f"--- {flips} single-bit flips in the drawers_scope pages of 2,000 drawers (seed {seed})")
    print(f"scoped seeks answering short       {tally['short']}")
    print(f"  of which quick_check passed      {tally['short_quick_ok']}")
    print(f"  of which integrity_check passed  {tally['short_integrity_ok']}")
    print(f"  of which the scope check passed  {tally['short_scope_ok']}   (a scoped read served short: must be 0)")
    print(f"scoped seeks raising 'malformed'   {tally['read_malformed']}   (exit 2 on every surface, not silent)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny run, checks the instrument only")
    parser.add_argument("--n", type=int, default=100_000, help="drawers (default 100000)")
    parser.add_argument("--flips", type=int, default=0, help="run only the bit-flip campaign, this many flips")
    parser.add_argument("--seed", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        if args.flips:
            flip_campaign(Path(scratch), args.flips, args.seed)
        else:
            run(300 if args.smoke else args.n, Path(scratch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
