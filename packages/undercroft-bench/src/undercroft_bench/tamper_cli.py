"""The `tamper` subcommand of `undercroft-bench`: its arguments and the run they drive.

    undercroft-bench tamper [--trials 1000] [--seed 0] [--json-share 0.5] [--level sealed|hmac-only]
        [--cli-every 50] [--json OUT]

Exit 0 when no trial is a defect (silent, exit1, crash) and every sampled `undercroft verify` agreed;
exit 1 otherwise, so the campaign can gate a CI job.
"""

from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import platform
import sys
from typing import Any

from undercroft_bench.tamper_campaign import DEFECTS, CampaignSettings, format_campaign, run_campaign

__all__ = ["add_tamper_parser", "run_tamper"]


def add_tamper_parser(commands: Any) -> None:
    """Register the `tamper` subcommand on the `add_subparsers()` object of the program's parser."""
    tamper = commands.add_parser("tamper", help="random single-bit flips in vault.db / vault.json, classified")
    tamper.add_argument("--trials", type=int, default=1000, help="flips, one per fresh copy (default 1000)")
    tamper.add_argument("--seed", type=int, default=0, help="seed of the flip positions (default 0)")
    tamper.add_argument("--json-share", type=float, default=0.5, help="share of trials on vault.json (default 0.5)")
    tamper.add_argument("--level", choices=("sealed", "hmac-only"), default="sealed", help="vault level")
    tamper.add_argument("--cli-every", type=int, default=50, help="run `undercroft verify` on every Nth (0: never)")
    tamper.add_argument("--json", type=pathlib.Path, default=None, metavar="OUT", help="write every trial")


def run_tamper(args: argparse.Namespace) -> int:
    """Run the campaign, print the table, write the JSON; 1 when any trial is a defect or the CLI disagreed."""
    settings = CampaignSettings(
        trials=args.trials, seed=args.seed, json_share=args.json_share, level=args.level, cli_every=args.cli_every
    )
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")  # when the run started
    report = run_campaign(settings)
    print(
        f"TAMPER_RUN date={now} host={platform.node()} python={platform.python_version()} argv={' '.join(sys.argv[1:])}"
    )
    for line in format_campaign(report):
        print(line)
    if args.json is not None:
        document = {"date": now, **report.to_dict()}
        args.json.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    defects = sum(report.counts()[name] for name in DEFECTS)
    disagreed = sum(1 for t in report.trials if t.cli_agrees is False)
    return 1 if defects or disagreed else 0
