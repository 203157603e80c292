"""What a search handle holds per drawer (issue 19's memory target), by tracemalloc.

    python benchmarks/bench_search_memory.py --size 100000
    python benchmarks/bench_search_memory.py --smoke          # 500 drawers (CI)

Builds a sealed vault of ``--size`` drawers (`bench_search.py`'s corpus, the writes of `bench_search_cost.py`),
reopens it, and traces the allocations a `Searcher` makes over its first search, `warm()` and 50 searches:
the bytes still held afterwards, per drawer, then the source files holding the most. tracemalloc sees every
Python and numpy allocation (the handle's own caches included, since they fill during those searches); it does
not see SQLite's page cache or libsodium's buffers.
"""

from __future__ import annotations

import argparse
import gc
import random
import sys
import tempfile
import tracemalloc
from pathlib import Path

from undercroft_core import HashEmbedder
from undercroft_store import Palace, Screen
from undercroft_store.search import Searcher, SearchRequest

sys.path.insert(0, str(Path(__file__).parent))
import bench_search
import bench_search_cost


def measure(size: int, top: int = 12) -> None:
    """Print the held bytes per drawer and the ``top`` source files by held bytes."""
    rng = random.Random(7)  # noqa: S311 - a reproducible synthetic corpus, not a secret
    texts = bench_search._texts(rng, bench_search._vocabulary(rng), size)
    embedder = HashEmbedder()
    with tempfile.TemporaryDirectory() as home, Palace(Path(home)) as palace:
        palace.create_vault("bench", level="sealed")
        with palace.open_vault("bench", embedder) as store:
            for first in range(0, size, bench_search_cost.BATCH):
                batch = texts[first : first + bench_search_cost.BATCH]
                store.write(bench_search_cost._writes(store.drawer_ids, batch, first), screening=Screen())
        asked = [" ".join(rng.sample(texts[rng.randrange(size)].rstrip(".").split(), 5)) for _ in range(50)]
        with palace.open_vault("bench", embedder) as store:
            gc.collect()
            tracemalloc.start()
            before = tracemalloc.get_traced_memory()[0]
            searcher = Searcher(store, embedder)
            searcher.search(SearchRequest(asked[0], limit=10))
            searcher.warm()
            for question in asked:
                searcher.search(SearchRequest(question, limit=10))
            gc.collect()
            held = tracemalloc.get_traced_memory()[0] - before
            print(f"{size} drawers: {held / size:.0f} bytes held per drawer ({held / 2**20:.1f} MiB)")
            for stat in tracemalloc.take_snapshot().statistics("filename")[:top]:
                print(f"  {stat}")


def main() -> int:
    """Parse the arguments and measure."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=10_000)
    parser.add_argument("--top", type=int, default=12)
    parser.add_argument("--smoke", action="store_true", help="500 drawers: the instrument runs, nothing more")
    args = parser.parse_args()
    measure(500 if args.smoke else args.size, args.top)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
