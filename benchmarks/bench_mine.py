"""`undercroft mine` / `sweep` throughput beside raw baselines measured in the same run.

    python benchmarks/bench_mine.py            # 1,000 documents (~3 chunks each) and a 5,000-message transcript
    python benchmarks/bench_mine.py --smoke    # a few seconds: checks the instrument works

Figures: planning (walk + read + normalise + chunk, files/s) beside a raw walk-and-read of the same tree;
filing a mine plan through the store (drawers/s, 500 per transaction, sealed, hash embedder) beside a raw
SQLite batched insert of the same rows (WAL, synchronous=FULL, 500 per transaction); a re-mine of the
unchanged tree (every drawer deduped); a sweep and an idempotent re-sweep of a Claude Code session.
"""

from __future__ import annotations

import argparse
import json
import os
import sqlite3
import tempfile
import time
from pathlib import Path

from undercroft_cli._internal.filing import file_plans
from undercroft_cli.mining import plan_mine, plan_sweep
from undercroft_core import HashEmbedder
from undercroft_store import Palace

_WORDS = "we chose the gateway because typed schemas catch drift early and the team owns the billing queue".split()


def _paragraph(i: int, k: int) -> str:
    return " ".join(_WORDS[(i * 7 + k * 3 + j) % len(_WORDS)] for j in range(60)) + f" (note {i}.{k})"


def _tree(root: Path, files: int) -> None:
    for i in range(files):
        folder = root / f"d{i % 20}"
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"n{i}.md").write_text("\n\n".join(_paragraph(i, k) for k in range(6)) + "\n")


def _session(path: Path, messages: int) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as handle:
        for i in range(messages):
            role = "user" if i % 2 == 0 else "assistant"
            record = {
                "type": role,
                "message": {"role": role, "content": _paragraph(i, 0)},
                "uuid": f"u{i}",
                "sessionId": "bench",
                "timestamp": f"2026-05-01T09:{(i // 60) % 60:02d}:{i % 60:02d}Z",
            }
            handle.write(json.dumps(record) + "\n")


def _raw_read(root: Path) -> int:
    total = 0
    for dirpath, _, names in os.walk(root):
        for name in sorted(names):
            total += len(Path(dirpath, name).read_bytes().decode("utf-8"))
    return total


def _raw_insert(path: Path, contents: list[str]) -> None:
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = FULL")
    connection.execute("CREATE TABLE t (seq INTEGER PRIMARY KEY, id TEXT UNIQUE, content BLOB, emb BLOB)")
    emb = os.urandom(388)
    for start in range(0, len(contents), 500):
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany(
            "INSERT INTO t (id, content, emb) VALUES (?, ?, ?)",
            [(f"r{start + i}", c.encode(), emb) for i, c in enumerate(contents[start : start + 500])],
        )
        connection.execute("COMMIT")
    connection.close()


def _timed(label: str, count: int, unit: str, seconds: float, baseline: float | None = None) -> None:
    rate = count / seconds if seconds > 0 else float("inf")
    line = f"{label:<34} {count:>7} {unit:<9} {seconds:8.3f} s  {rate:>10,.0f} {unit}/s"
    if baseline is not None:
        line += f"   (raw: {count / baseline:,.0f} {unit}/s, x{seconds / baseline:.1f})"
    print(line)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true")
    args = parser.parse_args()
    files, messages = (40, 200) if args.smoke else (1000, 5000)
    with tempfile.TemporaryDirectory() as scratch:
        base = Path(scratch)
        docs = base / "docs"
        _tree(docs, files)
        _raw_read(docs)  # warm the page cache so both readers see the same disk
        t0 = time.perf_counter()
        _raw_read(docs)
        raw_read = time.perf_counter() - t0
        t0 = time.perf_counter()
        plan = plan_mine(docs, wing="bench")
        planning = time.perf_counter() - t0
        _timed("plan mine (walk+read+chunk)", len(plan.files), "files", planning, raw_read)
        t0 = time.perf_counter()
        _raw_insert(base / "raw.db", [d.content for d in plan.drawers])
        raw_insert = time.perf_counter() - t0
        with Palace(base / "palace") as palace:
            palace.init()
            with palace.open_vault("default", HashEmbedder()) as store:
                t0 = time.perf_counter()
                report = file_plans(store, plan.drawers, added_by="cli")
                filing = time.perf_counter() - t0
                assert report.created == len(plan.drawers)
                _timed("mine: file plan (sealed)", len(plan.drawers), "drawers", filing, raw_insert)
                t0 = time.perf_counter()
                again = file_plans(store, plan_mine(docs, wing="bench").drawers, added_by="cli")
                _timed("re-mine unchanged (plan+dedup)", len(plan.drawers), "drawers", time.perf_counter() - t0)
                assert again.unchanged == len(plan.drawers)
                session = base / "projects" / "p" / "s.jsonl"
                _session(session, messages)
                t0 = time.perf_counter()
                swept = file_plans(store, plan_sweep(session.parent.parent, wing="claude-code").drawers, added_by="cli")
                _timed("sweep (plan+file)", swept.created, "messages", time.perf_counter() - t0)
                t0 = time.perf_counter()
                resweep = file_plans(
                    store, plan_sweep(session.parent.parent, wing="claude-code").drawers, added_by="cli"
                )
                _timed("re-sweep (all already filed)", resweep.unchanged, "messages", time.perf_counter() - t0)


if __name__ == "__main__":
    main()
