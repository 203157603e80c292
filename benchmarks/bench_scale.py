"""Synthetic scale: one sealed vault (hash embedder) grown through checkpoints, beside raw baselines.

    python benchmarks/bench_scale.py            # 10k and 100k drawers, offsets check (minutes)
    python benchmarks/bench_scale.py --smoke    # 300 and 600 drawers (CI, seconds)
    python benchmarks/bench_scale.py --checkpoints 10000,100000,1000000 --json out.json   # any other run

A thin wrapper over `undercroft-bench synth` (alias `scale`): every option after the wrapper's own is passed
through. At each checkpoint it prints ingest rate beside a raw batched SQLite insert, open time, first
search, peak RSS, needle R@5 and p50/p95 latency unscoped, wing- and room-scoped beside a raw numpy float32
scan over as many 384-d vectors, and (--offsets) whether deep pages tile one ranking byte for byte.
"""

from __future__ import annotations

import sys

from undercroft_bench.main import main as bench_main

SMOKE = ["--checkpoints", "300,600", "--needles", "5", "--offsets", "2", "--batch", "300"]
FULL = ["--checkpoints", "10000,100000", "--offsets"]


def main(argv: list[str]) -> int:
    """Run the smoke or the full set; any other arguments go to `undercroft-bench synth` unchanged."""
    if argv[:1] == ["--smoke"]:
        return bench_main(["synth", *SMOKE, *argv[1:]])
    return bench_main(["synth", *(argv or FULL)])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
