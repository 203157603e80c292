"""What the served-row rule costs a read: verified hydration, listings and a warm search on one sealed vault.

    python benchmarks/bench_served_rows.py --build DIR          # a 10k-drawer sealed vault in DIR (once)
    python benchmarks/bench_served_rows.py --measure DIR        # time the reads against it (repeat, interleaved)
    python benchmarks/bench_served_rows.py --smoke              # a 600-drawer pass: the instrument works

The vault is built once and then measured by alternating processes (this checkout, then the previous code with
``PYTHONPATH`` pointing at its sources), so both read the very same rows under the same load. Each measurement:
`hydrate_many` of 320 random seqs (a search pool) and 500 (one batch), `get` of 100 ids one at a time,
`list_drawers(limit=200)`, and a warm unscoped search (limit 10, 50 queries), every figure a median of its
repeats. With ``--tombstones N`` the build deletes N drawers and writes their ids again, so the rule's label-guard
leg runs (the case of re-mined source files).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from undercroft_core import Drawer, DrawerIds, HashEmbedder
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.search import Searcher, SearchRequest

SIZE = 10_000
BATCH = 1000
FILED_AT = "2024-01-01T00:00:00Z"


def _texts(rng: random.Random, count: int) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    vocabulary = ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(6000)]
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    return [" ".join(rng.choices(vocabulary, weights, k=rng.randint(40, 80))) + "." for _ in range(count)]


def _drawer(ids: DrawerIds, index: int, text: str) -> Drawer:
    room = f"room-{index % 20}"
    return Drawer(
        id=ids.append("bench", room, index),
        content=text,
        wing="bench",
        room=room,
        chunk_index=index,
        id_recipe="append",
        added_by="bench",
        filed_at=FILED_AT,
    )


def build(home: Path, tombstones: int, size: int = SIZE) -> None:
    """A sealed vault of `size` drawers; `tombstones` of them deleted and written again."""
    texts = _texts(random.Random(7), size)  # noqa: S311 - a reproducible synthetic corpus, not a secret
    with Palace(home) as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            for first in range(0, size, BATCH):
                batch = [
                    DrawerWrite(_drawer(store.drawer_ids, i, texts[i])) for i in range(first, min(size, first + BATCH))
                ]
                store.write(batch, screening=Screen())
            for index in range(tombstones):
                store.delete(_drawer(store.drawer_ids, index, texts[index]).id)
                store.write(
                    [DrawerWrite(_drawer(store.drawer_ids, index, texts[index] + " again"))], screening=Screen()
                )


def _median_ms(action: object, repeats: int) -> float:
    spent = []
    for _ in range(repeats):
        started = time.perf_counter()
        action()  # type: ignore[operator]
        spent.append(time.perf_counter() - started)
    return statistics.median(spent) * 1000


def measure(home: Path) -> None:
    """Time the reads against the vault in `home` and print one line of medians."""
    rng = random.Random(11)  # noqa: S311 - reproducible draws
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder()) as store:
        seqs = store.scope_seqs().tolist()
        ids = [d.id for d in store.hydrate_many(rng.sample(seqs, 100)).values()]
        pool = [rng.sample(seqs, 320) for _ in range(30)]
        batch = [rng.sample(seqs, 500) for _ in range(30)]
        hydrate_320 = _median_ms(lambda: store.hydrate_many(pool[rng.randrange(30)]), 30)
        hydrate_500 = _median_ms(lambda: store.hydrate_many(batch[rng.randrange(30)]), 30)
        gets = _median_ms(lambda: [store.get(drawer_id) for drawer_id in ids], 5)
        listed = _median_ms(lambda: store.list_drawers(limit=200), 15)
        searcher = Searcher(store, HashEmbedder())
        searcher.warm()
        words = [d.content.split()[:5] for d in store.list_drawers(limit=50)]
        queries = iter([" ".join(w) for w in words] * 2)
        warm = _median_ms(lambda: searcher.search(SearchRequest(next(queries), limit=10)), 50)
    print(
        f"hydrate_many 320 {hydrate_320:.2f} ms | hydrate_many 500 {hydrate_500:.2f} ms | 100 gets {gets:.2f} ms"
        f" | list_drawers(200) {listed:.2f} ms | warm search p50 {warm:.2f} ms"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--build", type=Path, help="build the vault in this (new) directory")
    parser.add_argument("--measure", type=Path, help="measure the reads against this vault")
    parser.add_argument("--tombstones", type=int, default=0, help="drawers deleted and written again at build")
    parser.add_argument("--smoke", action="store_true", help="a 600-drawer pass in a temporary home")
    args = parser.parse_args(argv)
    if args.smoke:  # the instrument works end to end; the figures of a smoke run mean nothing
        with tempfile.TemporaryDirectory() as tmp:
            build(Path(tmp) / "home", tombstones=20, size=600)
            measure(Path(tmp) / "home")
        return 0
    if args.build is not None:
        build(args.build, args.tombstones)
    if args.measure is not None:
        measure(args.measure)
    return 0


if __name__ == "__main__":
    sys.exit(main())
