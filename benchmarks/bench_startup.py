"""Start-up of the `undercroft` program: this checkout against a baseline commit, measured in the same run.

    python benchmarks/bench_startup.py [--smoke] [--runs 10] [--baseline REV] [--drawers 2000]

Each figure is the median wall time (and, in a second table, CPU time: less sensitive to a loaded machine) of
``--runs`` fresh processes (the console script this venv installs),
this checkout and the baseline interleaved run by run so the machine's load falls on both alike. The
baseline is the commit ``--baseline`` names (default: ``main``), checked out
into a temporary git worktree and put first on ``PYTHONPATH``, so the same interpreter and the same installed
third-party packages run both trees. Measured: ``--version``, ``--help``, ``stats`` on a fresh palace (a
command that opens the store: the cost a lazy start-up moves, not removes), and the readiness of
``serve-mcp`` (process start to its ``initialize`` answer), a cold ``search`` (a fresh process) on a vault of
``--drawers`` drawers (mined once per tree from generated notes, before any timing), and ``remember`` into a
fresh palace, plus two floors: the bare interpreter and ``import mcp`` (the SDK serve-mcp stands on). Every
process runs with bytecode caches, as an installed program has them:
``PYTHONDONTWRITEBYTECODE`` is dropped and each case runs once, untimed, before the timed rounds. Then the top
``python -X importtime`` costs of ``import undercroft_cli.main`` and of the ``search`` and ``remember`` command
modules in this checkout. ``--smoke`` runs each twice on 50 drawers and skips the baseline worktree.
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable

ROOT = pathlib.Path(__file__).resolve().parent.parent
PROGRAM = pathlib.Path(sys.executable).parent / "undercroft"
DEFAULT_BASELINE = "main"
_WORDS = (
    "alpha billing graphql postgres migration cache latency deploy rollback schema index vault audit token "
    "session gateway mobile payments invoice queue worker kafka redis tenant quota metrics dashboard alert"
).split()
QUERY = "graphql gateway latency"
INITIALIZE = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "bench", "version": "0"}},
}


def _env(home: pathlib.Path, tree: pathlib.Path | None) -> dict[str, str]:
    dropped = {"PYTHONPATH", "PYTHONDONTWRITEBYTECODE"}  # bytecode cached, as an installed program has it
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_") and k not in dropped}
    env["UNDERCROFT_HOME"] = str(home)
    if tree is not None:  # the baseline's sources shadow this checkout's editable installs
        env["PYTHONPATH"] = os.pathsep.join(str(p) for p in sorted((tree / "packages").glob("*/src")))
    return env


def _where(env: dict[str, str]) -> str:
    probe = "import undercroft_cli; print(undercroft_cli.__file__)"
    return subprocess.run([sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True).stdout


def _children_cpu() -> float:
    used = resource.getrusage(resource.RUSAGE_CHILDREN)
    return used.ru_utime + used.ru_stime


def _timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds) of one run of ``argv``."""
    cpu, start = _children_cpu(), time.perf_counter()
    subprocess.run(argv, env=env, capture_output=True, check=True, timeout=120)
    return time.perf_counter() - start, _children_cpu() - cpu


def _mcp_ready(env: dict[str, str]) -> tuple[float, float]:
    """Seconds from spawning ``serve-mcp`` to reading its answer to ``initialize``; and the server's CPU seconds
    from start to exit (it exits when its stdin closes, right after that answer)."""
    cpu, start = _children_cpu(), time.perf_counter()
    server = subprocess.Popen(
        [str(PROGRAM), "serve-mcp"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL
    )
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write((json.dumps(INITIALIZE) + "\n").encode())
    server.stdin.flush()
    answer = server.stdout.readline()
    elapsed = time.perf_counter() - start
    server.stdin.close()
    server.wait(timeout=30)
    if b'"result"' not in answer:
        raise RuntimeError(f"serve-mcp did not answer initialize: {answer[:200]!r}")
    return elapsed, _children_cpu() - cpu


def _notes(root: pathlib.Path, count: int) -> pathlib.Path:
    """``count`` generated notes (40 words each, a fixed seed) for ``mine`` to file as one drawer each."""
    import random

    chooser = random.Random(7)  # noqa: S311 - a fixed-seed corpus, not a secret
    root.mkdir(parents=True, exist_ok=True)
    for number in range(count):
        words = " ".join(chooser.choice(_WORDS) for _ in range(40))
        (root / f"note{number:05d}.md").write_text(f"# Note {number}\n\n{words}.\n", encoding="utf-8")
    return root


#: One timed run: (wall seconds, CPU seconds).
Measure = Callable[[], tuple[float, float]]


def _cases(env: dict[str, str], corpus_env: dict[str, str], drawers: int) -> dict[str, Measure]:
    return {
        "undercroft --version": lambda: _timed([str(PROGRAM), "--version"], env),
        "undercroft --help": lambda: _timed([str(PROGRAM), "--help"], env),
        "undercroft stats (fresh palace)": lambda: _timed([str(PROGRAM), "stats"], env),
        f"undercroft search (cold, {drawers:,} drawers)": lambda: _timed([str(PROGRAM), "search", QUERY], corpus_env),
        "undercroft remember": lambda: _timed([str(PROGRAM), "remember", "We chose GraphQL over REST"], env),
        "serve-mcp ready for initialize": lambda: _mcp_ready(env),
        # Floors, not commands: the interpreter alone, and the official MCP SDK's own import, which serve-mcp
        # cannot start without (`mcp.server.lowlevel` imports the whole `mcp` package: client, types, pydantic).
        "floor: python -c pass": lambda: _timed([sys.executable, "-c", "pass"], env),
        "floor: python -c 'import mcp'": lambda: _timed([sys.executable, "-c", "import mcp"], env),
    }


def _importtime(env: dict[str, str], top: int, module: str = "undercroft_cli.main") -> list[tuple[int, str]]:
    run = subprocess.run(
        [sys.executable, "-X", "importtime", "-c", f"import {module}"],
        env=env, capture_output=True, text=True, check=True,
    )  # fmt: skip
    rows = []
    for line in run.stderr.splitlines():
        parts = line.removeprefix("import time:").split("|")
        if len(parts) == 3 and parts[1].strip().isdigit():
            rows.append((int(parts[1]), parts[2].strip()))
    return sorted(rows, reverse=True)[:top]


def main() -> int:
    """Measure, print a markdown table of medians (ms) and ratios, and the top import costs."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="two runs each, no baseline worktree")
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="commit to compare against")
    parser.add_argument("--drawers", type=int, default=2000, help="drawers in the searched vault")
    args = parser.parse_args()
    runs = 2 if args.smoke else args.runs
    drawers = 50 if args.smoke else args.drawers
    commit = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                            text=True, check=True).stdout.strip()  # fmt: skip
    with tempfile.TemporaryDirectory(prefix="bench-startup-") as scratch:
        work = pathlib.Path(scratch)
        trees: dict[str, pathlib.Path | None] = {f"this checkout ({commit})": None}
        if not args.smoke:
            baseline = work / "baseline"
            # Resolved once, before the checkout: a moving branch (main) names the commit actually measured.
            resolved = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", args.baseline],
                                      capture_output=True, text=True, check=True).stdout.strip()  # fmt: skip
            subprocess.run(["git", "-C", str(ROOT), "worktree", "add", "--detach", "--quiet", str(baseline),
                            resolved], check=True)  # fmt: skip
            trees[f"baseline ({args.baseline} = {resolved})"] = baseline
        notes = _notes(work / "notes", drawers)
        try:
            cases: dict[str, dict[str, Measure]] = {}
            for label, tree in trees.items():
                home = work / f"home-{len(cases)}"
                env = _env(home, tree)
                corpus_env = _env(work / f"corpus-{len(cases)}", tree)
                print(f"{label}: undercroft_cli from {_where(env).strip()}", flush=True)
                subprocess.run([str(PROGRAM), "init"], env=env, capture_output=True, check=True)
                subprocess.run([str(PROGRAM), "init"], env=corpus_env, capture_output=True, check=True)
                subprocess.run([str(PROGRAM), "mine", str(notes), "--wing", "notes"], env=corpus_env,
                               capture_output=True, check=True, timeout=900)  # fmt: skip
                cases[label] = _cases(env, corpus_env, drawers)
                for measure in cases[label].values():  # untimed: writes the bytecode caches, warms the page cache
                    measure()
            samples: dict[tuple[str, str], list[tuple[float, float]]] = {}
            for _ in range(runs):  # interleaved: every case of every tree once per round
                for label, measured in cases.items():
                    for case, measure in measured.items():
                        samples.setdefault((label, case), []).append(measure())
        finally:
            if not args.smoke:
                subprocess.run(["git", "-C", str(ROOT), "worktree", "remove", "--force", str(work / "baseline")],
                               check=False)  # fmt: skip
                shutil.rmtree(work / "baseline", ignore_errors=True)
    labels = list(trees)
    print(f"\nmedian of {runs} runs, ms (load average {os.getloadavg()[0]:.1f} at the end)")
    for title, index in (("wall", 0), ("CPU (user + system of the process; serve-mcp: start to exit)", 1)):
        print(f"\n{title}\n")
        print("| command | " + " | ".join(labels) + (" | baseline ÷ this |" if len(labels) > 1 else " |"))
        print("| --- " * (len(labels) + 1 + (len(labels) > 1)) + "|")
        for case in cases[labels[0]]:
            medians = [statistics.median(run[index] for run in samples[(label, case)]) * 1000 for label in labels]
            ratio = f" | {medians[1] / medians[0]:.2f}" if len(medians) > 1 else ""
            print(f"| `{case}` | " + " | ".join(f"{m:.0f}" for m in medians) + ratio + " |")
    here = _env(pathlib.Path(tempfile.gettempdir()), None)
    for module in ("undercroft_cli.main", "undercroft_cli.commands.search", "undercroft_cli.commands.drawers"):
        print(f"\ntop `python -X importtime -c 'import {module}'` cumulative costs (this checkout):\n")
        for micros, name in _importtime(here, 8, module):
            print(f"- {name}: {micros / 1000:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
