"""The writable open of a sealed vault: median of repeated opens on one Palace (master key derived once).

    python benchmarks/bench_vault_open.py --drawers 10000 --opens 30

Builds a sealed vault of ``--drawers`` API-save drawers with the vault's own id recipe (the public functions
on a build without ``store.drawer_ids``, so the same file drives an older checkout on ``PYTHONPATH``), then
times ``palace.open_vault`` + ``close`` ``--opens`` times and prints the median and the minimum.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_store import DrawerWrite, Palace, Screen


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--drawers", type=int, default=10_000)
    parser.add_argument("--opens", type=int, default=30)
    parser.add_argument("--smoke", action="store_true", help="200 drawers, 3 opens: the instrument runs")
    args = parser.parse_args()
    if args.smoke:
        args.drawers, args.opens = 200, 3
    with tempfile.TemporaryDirectory() as tmp, Palace(Path(tmp) / "home") as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            ids = getattr(store, "drawer_ids", None)  # absent on a build before keyed ids
            make = ids.append if ids is not None else append_drawer_id
            for first in range(0, args.drawers, 1000):
                batch = [
                    Drawer(
                        id=make("w", f"r{i % 20}", i),
                        content=f"memory number {i} about things",
                        wing="w",
                        room=f"r{i % 20}",
                        chunk_index=i,
                        id_recipe="append",
                        added_by="bench",
                        filed_at="2024-01-01T00:00:00Z",
                    )
                    for i in range(first, min(args.drawers, first + 1000))
                ]
                store.write([DrawerWrite(d) for d in batch], screening=Screen())
        times = []
        for _ in range(args.opens):
            started = time.perf_counter()
            store = palace.open_vault("default", HashEmbedder())
            times.append(time.perf_counter() - started)
            store.close()
    recipe = ids.recipe if ids is not None else "sha256-v1 (no drawer_ids)"
    median, fastest = statistics.median(times) * 1000, min(times) * 1000
    print(f"{recipe} drawers={args.drawers}: open median {median:.2f} ms, min {fastest:.2f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
