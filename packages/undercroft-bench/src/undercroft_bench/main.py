"""The `undercroft-bench` program's entry point: `locomo`, `longmemeval`, `vs`, `synth` (alias `scale`) and `tamper`."""

from __future__ import annotations

import argparse
import json
import pathlib
import sys
from collections.abc import Mapping

from undercroft_bench import __version__
from undercroft_bench._internal.jsonfile import sha256_of
from undercroft_bench.arms import ARMS
from undercroft_bench.chunking import CHUNKERS
from undercroft_bench.errors import Error
from undercroft_bench.locomo_data import load_locomo
from undercroft_bench.locomo_eval import UNITS, LocomoSettings, format_locomo, locomo_json, run_locomo
from undercroft_bench.longmemeval import format_longmemeval, load_longmemeval, longmemeval_json, run_longmemeval
from undercroft_bench.synth_cli import COMMANDS as SYNTH_COMMANDS
from undercroft_bench.synth_cli import add_synth_parser, run_synth
from undercroft_bench.tamper_cli import add_tamper_parser, run_tamper
from undercroft_bench.vs_cli import add_vs_parser, run_vs

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="undercroft-bench", description="Undercroft's benchmark and evaluation instruments."
    )
    parser.add_argument("--version", action="version", version=f"undercroft-bench {__version__}")
    commands = parser.add_subparsers(dest="command", metavar="COMMAND")

    locomo = commands.add_parser("locomo", help="LoCoMo session (and turn) recall at k")
    locomo.add_argument("file", type=pathlib.Path, help="LoCoMo JSON (upstream list or {conversations: [...]})")
    locomo.add_argument("-k", type=int, default=10, help="distinct sessions kept (default 10)")
    locomo.add_argument("--unit", choices=UNITS, default="session", help="headline unit (both are printed)")
    locomo.add_argument("--pool", type=int, default=50, help="chunks retrieved per question (default 50)")
    locomo.add_argument("--arm", choices=sorted(ARMS), default="bm25", help="retrieval system under test")
    locomo.add_argument("--chunking", choices=sorted(CHUNKERS), default="protocol", help="chunking arm")
    locomo.add_argument("--limit-conversations", type=int, default=None, metavar="N", help="first N only")
    locomo.add_argument("--seed", type=int, default=0, help="seed of randomised arms (default 0)")
    locomo.add_argument("--json", type=pathlib.Path, default=None, metavar="OUT", help="write the full report")

    lme = commands.add_parser("longmemeval", help="LongMemEval session recall at k per question type")
    lme.add_argument("file", type=pathlib.Path, help="LongMemEval JSON (upstream list or {examples: [...]})")
    lme.add_argument("-k", type=int, default=5, help="distinct sessions kept (default 5)")
    lme.add_argument("--pool", type=int, default=50, help="chunks retrieved per question (default 50)")
    lme.add_argument("--arm", choices=sorted(ARMS), default="bm25", help="retrieval system under test")
    lme.add_argument("--seed", type=int, default=0, help="seed of randomised arms (default 0)")
    lme.add_argument("--json", type=pathlib.Path, default=None, metavar="OUT", help="write the full report")

    add_vs_parser(commands)
    add_synth_parser(commands)
    add_tamper_parser(commands)
    return parser


def _source(path: pathlib.Path) -> dict[str, str]:
    return {"file": str(path), "sha256": sha256_of(path)}


def _write_json(path: pathlib.Path | None, document: Mapping[str, object]) -> None:
    if path is not None:
        path.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")


def _locomo(args: argparse.Namespace) -> None:
    settings = LocomoSettings(
        arm=args.arm,
        k=args.k,
        pool=args.pool,
        unit=args.unit,
        chunking=args.chunking,
        seed=args.seed,
        limit_conversations=args.limit_conversations,
    )
    settings.validate()
    conversations = load_locomo(args.file)
    report = run_locomo(conversations, settings)
    for line in format_locomo(report, args.file.name):
        print(line)
    _write_json(args.json, locomo_json(report, _source(args.file)))


def _longmemeval(args: argparse.Namespace) -> None:
    questions = load_longmemeval(args.file)
    report = run_longmemeval(questions, arm=args.arm, k=args.k, pool=args.pool, seed=args.seed)
    for line in format_longmemeval(report, args.file.name):
        print(line)
    _write_json(args.json, longmemeval_json(report, _source(args.file)))


def main(argv: list[str] | None = None) -> int:
    """Parse arguments and run one instrument (console-script entry point); exit 1 on a typed run failure."""
    parser = _parser()
    args = parser.parse_args(argv)
    try:
        if args.command == "locomo":
            _locomo(args)
        elif args.command == "longmemeval":
            _longmemeval(args)
        elif args.command == "vs":
            run_vs(args)
        elif args.command in SYNTH_COMMANDS:
            run_synth(args)
        elif args.command == "tamper":
            return run_tamper(args)
        else:
            parser.print_help()
    except Error as error:
        print(f"undercroft-bench: error: {error}", file=sys.stderr)
        return 1
    return 0
