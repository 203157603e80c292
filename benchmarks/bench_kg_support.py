"""What ``support`` costs a fact read: ``timeline()`` with `support_of` beside the same ``timeline()`` without it.

    python benchmarks/bench_kg_support.py            # 2,000 facts, each citing a span of its own drawer
    python benchmarks/bench_kg_support.py --smoke    # a few seconds: checks the instrument works

Both legs read the same facts of the same vault in the same process, interleaved (the machine is shared and
noisy: the ratio is the figure). ``support_of`` reads each cited drawer once, verifies its tag, opens it (sealed
vault), recomputes the receipt fingerprint and converts the character span to UTF-8 bytes.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from undercroft_core import HashEmbedder
from undercroft_store import Palace
from undercroft_store.memory.kg.graph import FactInput, KnowledgeGraph
from undercroft_store.memory.kg.receipts import support_of


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--facts", type=int, default=2000)
    parser.add_argument("--reps", type=int, default=7)
    args = parser.parse_args()
    n, reps = (50, 2) if args.smoke else (args.facts, args.reps)
    with tempfile.TemporaryDirectory() as tmp:
        palace = Palace(Path(tmp) / "palace")
        palace.init()
        palace.create_vault("bench", level="sealed")
        with palace.open_vault("bench", HashEmbedder()) as store:
            notes = [f"Réunion 🦉 note {i}: Person{i} works at Company{i % 97}. More words follow." for i in range(n)]
            ids = [store.remember(note, wing="people", room="r", added_by="bench")[0].id for note in notes]
            inputs = []
            for i, (note, drawer) in enumerate(zip(notes, ids, strict=True)):
                cited = f"Person{i} works at Company{i % 97}."
                start = note.index(cited)
                inputs.append(
                    FactInput(f"Person{i}", "works_at", f"Company{i % 97}", source_drawer=drawer,
                              source_span=(start, start + len(cited)), grounding="stated")
                )  # fmt: skip
            graph = KnowledgeGraph(store)
            graph.add_many(inputs)
            bare, supported = [], []
            for _ in range(reps):
                began = time.perf_counter()
                facts = graph.timeline()
                bare.append(time.perf_counter() - began)
                began = time.perf_counter()
                facts = graph.timeline()
                support = support_of(store, facts)
                supported.append(time.perf_counter() - began)
            assert len(support) == n and all(s.receipt == "verified" and s.spans for s in support.values())
    b, s = statistics.median(bare), statistics.median(supported)
    print(f"facts {n}, sealed vault, {reps} interleaved reps (medians)")
    print(f"timeline() alone:            {b * 1000:9.1f} ms  ({n / b:,.0f} facts/s)")
    print(f"timeline() + support_of():   {s * 1000:9.1f} ms  ({n / s:,.0f} facts/s)")
    print(f"ratio with/without support:  {s / b:9.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
