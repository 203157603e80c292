"""The `vs` subcommand of `undercroft-bench`: its arguments and the run they drive.

    undercroft-bench vs FILE --system undercroft|mempalace|bm25 [--python PATH] [--corpus locomo|synthetic]
        [-k 10] [--pool 50] [--limit-conversations N] [--mempalace-ingest add|mine] [--json OUT]

FILE is a LoCoMo JSON for `--corpus locomo` and the folder written by `gen_corpus.py OUT_DIR` for
`--corpus synthetic`. `--python` is MemPalace's interpreter (the venv of `tools/mempalace_env.sh`).
"""

from __future__ import annotations

import argparse
import datetime
import json
import pathlib
import platform
import sys
from typing import Any

from undercroft_bench._internal.jsonfile import sha256_of
from undercroft_bench.locomo_data import load_locomo
from undercroft_bench.locomo_eval import LocomoSettings, format_locomo, locomo_json
from undercroft_bench.vs import (
    CORPORA,
    format_vs_locomo,
    format_vs_synthetic,
    load_synthetic,
    run_vs_locomo,
    run_vs_synthetic,
    synthetic_json,
)
from undercroft_bench.vs_systems import INGEST_MODES, SYSTEMS, resolve_system

__all__ = ["add_vs_parser", "run_vs"]


def add_vs_parser(commands: Any) -> None:
    """Register the `vs` subcommand on the `add_subparsers()` object of the program's parser."""
    vs = commands.add_parser("vs", help="head-to-head: the same chunks and scorer through another system")
    vs.add_argument("file", type=pathlib.Path, help="LoCoMo JSON, or the gen_corpus.py output folder")
    vs.add_argument("--system", choices=SYSTEMS, required=True, help="system under test")
    vs.add_argument("--corpus", choices=CORPORA, default="locomo", help="protocol (default locomo)")
    vs.add_argument("--python", type=pathlib.Path, default=None, help="MemPalace's interpreter (its own venv)")
    vs.add_argument(
        "--mempalace-ingest",
        choices=INGEST_MODES,
        default=None,
        help="add: miner.add_drawer per chunk (locomo default); mine: chunks as files, miner.mine (synthetic)",
    )
    vs.add_argument("-k", type=int, default=10, help="LoCoMo: distinct sessions kept (default 10)")
    vs.add_argument("--pool", type=int, default=50, help="LoCoMo: chunks retrieved per question (default 50)")
    vs.add_argument("--limit-conversations", type=int, default=None, metavar="N", help="LoCoMo: first N only")
    vs.add_argument("--json", type=pathlib.Path, default=None, metavar="OUT", help="write the full report")


def _header(args: argparse.Namespace) -> str:
    now = datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    return (
        f"VS_RUN date={now} host={platform.node()} python={platform.python_version()} "
        f"argv={' '.join(sys.argv[1:]) or 'vs'} file={args.file}"
    )


def run_vs(args: argparse.Namespace) -> None:
    """Run one head-to-head from parsed `vs` arguments, printing the VS lines (and writing `--json`)."""
    ingest = args.mempalace_ingest or ("mine" if args.corpus == "synthetic" else "add")
    if args.corpus == "locomo":
        settings = LocomoSettings(
            arm=args.system, k=args.k, pool=args.pool, limit_conversations=args.limit_conversations
        )
        settings.validate()
        conversations = load_locomo(args.file)
    else:
        corpus = load_synthetic(args.file)
    print(_header(args), flush=True)
    system = resolve_system(args.system, python=args.python, ingest=ingest)
    try:
        document: dict[str, object]
        if args.corpus == "locomo":
            report, timings = run_vs_locomo(conversations, settings, system.factory)
            lines = format_locomo(report, args.file.name) + format_vs_locomo(
                system.name, system.configuration, report, timings
            )
            document = {
                **locomo_json(report, {"file": str(args.file), "sha256": sha256_of(args.file)}),
                "instrument": "vs",
                "system": system.name,
                "configuration": system.configuration,
                "latency": timings.summary(),
            }
        else:
            synthetic = run_vs_synthetic(corpus, system.name, system.factory)
            lines = format_vs_synthetic(system.name, system.configuration, synthetic)
            document = synthetic_json(
                synthetic,
                system.configuration,
                {"folder": str(args.file), "queries_sha256": sha256_of(args.file / "queries.json")},
            )
    finally:
        if system.driver is not None:
            system.driver.close()
    for line in lines:
        print(line)
    if args.json is not None:
        args.json.write_text(json.dumps(document, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
