"""LoCoMo session R@10 under the head-to-head protocol: every registered arm beside the random floor.

    python benchmarks/bench_locomo_baseline.py            # the dev split (6 conversations), all arms
    python benchmarks/bench_locomo_baseline.py --smoke    # the schema fixture: seconds, measures nothing

Each arm runs through the same instrument as `undercroft-bench locomo` (same chunks, same scorer); the
`random` arm, measured in the same run, is the raw baseline each figure is printed beside. Data is read from
../shared/data (never copied into the repository; the first ancestor holding ``shared/data`` wins, so a worktree
nested deeper finds the same files). A missing file is a failed run (exit 1), never a silent skip: a smoke
that lost its data has checked nothing.
"""

from __future__ import annotations

import argparse
import pathlib
import sys

from undercroft_bench.arms import ARMS
from undercroft_bench.locomo_data import load_locomo
from undercroft_bench.locomo_eval import LocomoSettings, run_locomo

_HERE = pathlib.Path(__file__).resolve().parent
DATA = next(
    (root / "shared" / "data" for root in _HERE.parents if (root / "shared" / "data").is_dir()),
    _HERE.parent.parent / "shared" / "data",
)


def main() -> int:
    """Run every arm on the chosen file and print session R@10 and timings beside the random floor."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="tiny schema fixture, finishes in seconds")
    parser.add_argument("--data", type=pathlib.Path, default=DATA, help="the shared data directory")
    args = parser.parse_args()
    name = "schema-fixtures/locomo_sample.synthetic.json" if args.smoke else "locomo/locomo-dev.json"
    path = args.data / name
    if not path.is_file():
        print(f"bench_locomo_baseline: {path} is not present: lay ../shared beside the checkout", file=sys.stderr)
        return 1
    conversations = load_locomo(path)
    # The model arms need a model on this disk (UNDERCROFT_ONNX_MODEL): bench_embedders.py measures them.
    arms = ["random", *sorted(arm for arm in ARMS if arm not in ("random", "undercroft-onnx", "undercroft-ort"))]
    reports = {arm: run_locomo(conversations, LocomoSettings(arm=arm)) for arm in arms}
    floor = reports["random"].session_total
    print(f"LoCoMo session R@10, protocol chunking, pool 50 | {name} | {len(conversations)} conversations")
    for arm, report in reports.items():
        tally = report.session_total
        lift = (tally.percent() or 0.0) - (floor.percent() or 0.0)
        per_query = 1000.0 * report.search_seconds / report.queries if report.queries else 0.0
        print(
            f"{arm:>8}: session R@10 {tally.describe()} | turn R@10 {report.turn_total.describe()} | "
            f"{lift:+.2f} pts over random {floor.hits}/{floor.total} | ingest {report.ingest_seconds:.3f} s | "
            f"search {per_query:.3f} ms/query"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
