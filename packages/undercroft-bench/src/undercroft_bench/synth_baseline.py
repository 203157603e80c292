"""Raw baselines measured in the same run as the synthetic-scale checkpoints.

- **scan**: a float32 matrix of as many 384-d unit vectors as the vault holds, one matrix-vector product plus
  an ``argpartition`` for the top 256 per query: the floor under any full-scan candidate tier.
- **insert**: as many rows as the growth step wrote (id, ~700-byte text, 388-byte vector blob), inserted
  into a fresh SQLite file in WAL mode with ``synchronous=FULL`` (the store's pragmas), one transaction per
  batch: the floor under any batched write path, without sealing, tagging, embedding or the audit chain.
"""

from __future__ import annotations

import sqlite3
import statistics
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["DIMENSION", "SCAN_TOP", "BaselineFigures", "measure_baseline", "raw_insert_rate", "raw_scan_ms"]

#: The vector width of the hash embedder.
DIMENSION = 384
#: How many candidates the raw scan keeps per query (the store's smallest hydration pool).
SCAN_TOP = 256
_TEXT = ("lorem ipsum dolor sit amet " * 27)[:700]


@dataclass(frozen=True, slots=True)
class BaselineFigures:
    """The raw scan's p50/p95 over ``queries`` queries and the raw SQLite insert rate over ``rows`` rows."""

    vectors: int
    queries: int
    scan_p50_ms: float
    scan_p95_ms: float
    rows: int
    insert_rate: float


def raw_scan_ms(vectors: int, queries: int, seed: int) -> list[float]:
    """Per-query milliseconds of ``matrix @ q`` and a top-256 ``argpartition`` over ``vectors`` unit rows."""
    rng = np.random.default_rng(seed)
    matrix = rng.standard_normal((vectors, DIMENSION), dtype=np.float32)
    matrix /= np.linalg.norm(matrix, axis=1, keepdims=True)
    asked = rng.standard_normal((queries, DIMENSION), dtype=np.float32)
    top = min(SCAN_TOP, vectors) - 1
    timings = []
    for vector in asked:
        started = time.perf_counter()
        scores = matrix @ vector
        np.argpartition(-scores, top)[: top + 1]
        timings.append((time.perf_counter() - started) * 1000)
    return timings


def raw_insert_rate(rows: int, batch: int) -> float:
    """Rows per second inserting ``rows`` rows in ``batch``-row transactions into a fresh WAL SQLite file."""
    blob = bytes(range(256)) + bytes(132)
    with tempfile.TemporaryDirectory(prefix="undercroft-synth-sqlite-") as folder:
        connection = sqlite3.connect(Path(folder) / "raw.db", isolation_level=None)
        try:
            connection.execute("PRAGMA journal_mode=WAL")
            connection.execute("PRAGMA synchronous=FULL")
            connection.execute(
                "CREATE TABLE rows (seq INTEGER PRIMARY KEY, id TEXT UNIQUE, content BLOB, embedding BLOB) STRICT"
            )
            started = time.perf_counter()
            for low in range(0, rows, batch):
                connection.execute("BEGIN IMMEDIATE")
                connection.executemany(
                    "INSERT INTO rows (id, content, embedding) VALUES (?, ?, ?)",
                    ((f"drawer_{index:032x}", _TEXT.encode(), blob) for index in range(low, min(rows, low + batch))),
                )
                connection.execute("COMMIT")
            spent = time.perf_counter() - started
        finally:
            connection.close()
    return rows / spent if spent > 0 else float("inf")


def measure_baseline(vectors: int, rows: int, queries: int, batch: int, seed: int) -> BaselineFigures:
    """Both baselines: the scan over ``vectors`` rows (``queries`` queries) and the insert of ``rows`` rows."""
    timings = raw_scan_ms(vectors, max(1, queries), seed)
    return BaselineFigures(
        vectors=vectors,
        queries=len(timings),
        scan_p50_ms=statistics.median(timings),
        scan_p95_ms=sorted(timings)[min(len(timings) - 1, round(0.95 * (len(timings) - 1)))],
        rows=rows,
        insert_rate=raw_insert_rate(rows, batch),
    )
