"""The `synth` subcommand of `undercroft-bench` (alias `scale`): its arguments and the run they drive.

    undercroft-bench synth [--checkpoints 10000,100000] [--seed 11] [--wings 8] [--rooms 12]
        [--vocabulary 5000] [--zipf 1.07] [--needles 50] [-k 5] [--batch 2000] [--level sealed|hmac-only]
        [--offsets [PAGES]] [--page-size 10] [--no-baseline] [--json OUT]

Every value is checked by the instrument, so a refused one exits 1 with a message naming the option.
"""

from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import platform
import sys
from typing import Any

from undercroft_bench.synth import ScaleSettings, parse_checkpoints, run_scale
from undercroft_bench.synth_corpus import SynthSpec
from undercroft_bench.synth_report import format_scale, scale_json

__all__ = ["COMMANDS", "add_synth_parser", "run_synth"]

#: The subcommand and its alias.
COMMANDS = ("synth", "scale")


def add_synth_parser(commands: Any) -> None:
    """Register `synth` (alias `scale`) on the `add_subparsers()` object of the program's parser."""
    synth = commands.add_parser(
        "synth", aliases=["scale"], help="synthetic scale: one sealed vault grown through checkpoints"
    )
    synth.add_argument("--checkpoints", default="10000,100000", help="drawer counts, e.g. 10000,100k,1m")
    synth.add_argument("--seed", type=int, default=11, help="corpus seed (default 11)")
    synth.add_argument("--wings", type=int, default=8, help="wings (default 8)")
    synth.add_argument("--rooms", type=int, default=12, help="rooms per wing (default 12)")
    synth.add_argument("--vocabulary", type=int, default=5000, help="pseudo-words (default 5000)")
    synth.add_argument("--zipf", type=float, default=1.07, help="Zipf exponent of word frequencies (default 1.07)")
    synth.add_argument("--needles", type=int, default=50, help="needles planted per growth step (default 50)")
    synth.add_argument("-k", type=int, default=5, help="search limit; a needle hit is within it (default 5)")
    synth.add_argument("--batch", type=int, default=2000, help="drawers per write batch (default 2000)")
    synth.add_argument("--level", default="sealed", help="vault level: sealed (default) or hmac-only")
    synth.add_argument(
        "--offsets", type=int, nargs="?", const=10, default=0, metavar="PAGES", help="check paging (10 pages)"
    )
    synth.add_argument("--page-size", type=int, default=10, help="page size of the offsets check (default 10)")
    synth.add_argument("--no-baseline", action="store_true", help="skip the raw numpy scan and SQLite insert")
    synth.add_argument("--json", type=pathlib.Path, default=None, metavar="OUT", help="write the full report")


def _settings(args: argparse.Namespace) -> ScaleSettings:
    spec = SynthSpec(
        seed=args.seed,
        wings=args.wings,
        rooms=args.rooms,
        vocabulary=args.vocabulary,
        zipf=args.zipf,
        needles_per_step=args.needles,
    )
    settings = ScaleSettings(
        checkpoints=parse_checkpoints(args.checkpoints),
        spec=spec,
        k=args.k,
        batch=args.batch,
        level=args.level,
        offsets=args.offsets,
        page_size=args.page_size,
        baseline=not args.no_baseline,
    )
    settings.validate()
    return settings


def _header() -> dict[str, str]:
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "host": platform.node(),
        "machine": platform.machine(),
        "python": platform.python_version(),
        "argv": " ".join(sys.argv[1:]),
    }


def run_synth(args: argparse.Namespace) -> None:
    """Validate, run, print the report (progress to stderr) and write ``--json``."""
    settings = _settings(args)
    header = _header()
    print(f"SYNTH_RUN date={header['date']} host={header['host']} python={header['python']}", flush=True)
    report = run_scale(settings, progress=lambda line: print(line, file=sys.stderr, flush=True))
    for line in format_scale(report):
        print(line)
    if args.json is not None:
        document = scale_json(report, header)
        args.json.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
