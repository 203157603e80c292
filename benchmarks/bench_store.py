"""Store throughput beside the raw primitives, measured in the same run.

    python benchmarks/bench_store.py            # 10k drawers
    python benchmarks/bench_store.py --large    # 10k and 100k drawers (a few minutes)
    python benchmarks/bench_store.py --smoke    # a few seconds: checks the instrument works

Figures: sealed ingest (drawers/s, 500 per transaction, hash embedder, admission screen off — the default)
beside a raw SQLite batched insert of the same row count (WAL, synchronous=FULL, 500 per transaction) and
raw seal+HMAC per drawer, each with its ratio; the same ingest with the admission screen on (reported
apart, not a target); open time of the vault (manifest MAC, rotation check, chain reconcile); verify rate
(records/s) beside raw tag + two opens per record (the crypto floor of its drawer leg).
Targets: ingest >= 5,000 drawers/s; open of 100k sealed <= 3 s; verify >= 20,000 records/s.
The machine may be shared: compare ratios to the same-run baselines, and take the median of 3 runs.
"""

from __future__ import annotations

import argparse
import os
import sqlite3
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from undercroft_config.values import Admission
from undercroft_core import Drawer, HashEmbedder, append_drawer_id
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.governance.admission import AdmissionPolicy
from undercroft_store.governance.quarantine import install_gate
from undercroft_vault import Domain, Sealer, SecretBytes, compute_tag, derive_vault_keys

BATCH = 500
_WORDS = "the drawer holds the exact words a user saved verbatim never summarised about projects and people".split()


def _text(i: int) -> str:
    picked = [_WORDS[(i * 7 + k * 13) % len(_WORDS)] for k in range(110)]
    return f"memory {i}: " + " ".join(picked)


def _drawers(n: int) -> list[Drawer]:
    return [
        Drawer(
            id=append_drawer_id("bench", f"room{i % 20}", i),
            content=_text(i),
            wing="bench",
            room=f"room{i % 20}",
            chunk_index=i,
            id_recipe="append",
            added_by="bench",
            filed_at="2026-05-01T09:00:00Z",
            kind="note",
        )
        for i in range(n)
    ]


def raw_sqlite(path: Path, n: int) -> float:
    connection = sqlite3.connect(path, isolation_level=None)
    connection.execute("PRAGMA journal_mode = WAL")
    connection.execute("PRAGMA synchronous = FULL")
    connection.execute(
        "CREATE TABLE t (seq INTEGER PRIMARY KEY, id TEXT UNIQUE, meta BLOB, content BLOB, emb BLOB, tag BLOB)"
    )
    blob, emb, tag = os.urandom(700), os.urandom(430), os.urandom(32)
    start = time.perf_counter()
    for first in range(0, n, BATCH):
        connection.execute("BEGIN IMMEDIATE")
        connection.executemany(
            "INSERT INTO t (id, meta, content, emb, tag) VALUES (?, ?, ?, ?, ?)",
            [(f"d{i}", b"{}" * 200, blob, emb, tag) for i in range(first, min(n, first + BATCH))],
        )
        connection.execute("COMMIT")
    elapsed = time.perf_counter() - start
    connection.close()
    return n / elapsed


def raw_seal_hmac(drawers: list[Drawer]) -> float:
    keys = derive_vault_keys(SecretBytes(os.urandom(32)), "bench", os.urandom(32))
    sealer = Sealer(keys)
    start = time.perf_counter()
    for drawer in drawers:
        sealed = sealer.seal(Domain.content(drawer.id), drawer.content.encode())
        compute_tag(keys, drawer.id, b"{}", sealed)
    return len(drawers) / (time.perf_counter() - start)


def raw_tag_open(drawers: list[Drawer]) -> float:
    """Per record: HMAC tag check, then open the sealed content and the sealed embedding (verify's floor)."""
    keys = derive_vault_keys(SecretBytes(os.urandom(32)), "bench", os.urandom(32))
    sealer = Sealer(keys)
    # Real packed hash embeddings (they compress, so opening one inflates it, as in a vault).
    codes = HashEmbedder().embed_int8([d.content for d in drawers[:64]])
    scales = codes.scales.astype("<f4")
    packed = [scales[i].tobytes() + codes.codes[i].tobytes() for i in range(len(scales))]
    rows = [
        (
            d.id,
            sealer.seal(Domain.content(d.id), d.content.encode()),
            sealer.seal(Domain.embedding(d.id), packed[i % len(packed)]),
        )
        for i, d in enumerate(drawers)
    ]
    start = time.perf_counter()
    for drawer_id, content, sealed_embedding in rows:
        compute_tag(keys, drawer_id, b"{}", content)
        sealer.open(Domain.content(drawer_id), content)
        sealer.open(Domain.embedding(drawer_id), sealed_embedding)
    return len(rows) / (time.perf_counter() - start)


def ingest(home: Path, drawers: list[Drawer], *, screen_on: bool) -> float:
    """Drawers/s through `VaultStore.write`, BATCH per transaction, into a fresh palace at `home`."""
    with Palace(home) as palace:
        palace.init()
        with palace.open_vault("default", HashEmbedder()) as store:
            install_gate(store, AdmissionPolicy(mode=Admission.QUARANTINE if screen_on else Admission.OFF))
            keyed = [replace(d, id=d.expected_id(store.drawer_ids)) for d in drawers]  # the vault's recipe, untimed
            start = time.perf_counter()
            for first in range(0, len(keyed), BATCH):
                store.write([DrawerWrite(d) for d in keyed[first : first + BATCH]], screening=Screen())
            return len(drawers) / (time.perf_counter() - start)


def run(n: int, root: Path) -> None:
    drawers = _drawers(n)
    home = root / f"palace{n}"
    ingest_rate = ingest(home, drawers, screen_on=False)
    sqlite_rate = raw_sqlite(root / f"raw{n}.db", n)
    seal_rate = raw_seal_hmac(drawers[: min(n, 20_000)])
    screened_rate = ingest(root / f"screened{n}", drawers, screen_on=True)
    floor_rate = raw_tag_open(drawers[: min(n, 20_000)])
    with Palace(home) as palace:
        palace.open_vault("default", HashEmbedder()).close()  # master key read once, outside the timing
        start = time.perf_counter()
        store = palace.open_vault("default", HashEmbedder())
        open_seconds = time.perf_counter() - start
        start = time.perf_counter()
        report = store.verify()
        verify_rate = report.records_checked / (time.perf_counter() - start)
        start = time.perf_counter()
        matrix = store.iter_embeddings()
        embeddings_seconds = time.perf_counter() - start
        store.close()
    assert report.ok and report.records_checked == n and len(matrix.ids) == n
    print(f"--- {n} sealed drawers (~{len(drawers[0].content)} chars each)")
    print(f"sealed ingest         {ingest_rate:10.0f} drawers/s   (target >= 5000; admission screen off)")
    print(f"  raw sqlite batched  {sqlite_rate:10.0f} rows/s      (same run, WAL + FULL, {BATCH}/txn)")
    print(f"  raw seal+HMAC       {seal_rate:10.0f} drawers/s   (same run, per drawer)")
    print(
        f"  ratios              {ingest_rate / sqlite_rate:10.3f} of sqlite, {ingest_rate / seal_rate:.3f} of seal+HMAC"
    )
    print(f"  screen on           {screened_rate:10.0f} drawers/s   (admission quarantine on: not a target)")
    print(f"open (reconcile)      {open_seconds * 1000:10.1f} ms          (target <= 3000 at 100k)")
    print(f"verify                {verify_rate:10.0f} records/s   (target >= 20000)")
    print(f"  raw tag+2 opens     {floor_rate:10.0f} records/s   (same run, per record)")
    print(f"  ratios              {verify_rate / floor_rate:10.3f} of floor, {verify_rate / seal_rate:.3f} of seal")
    print(f"iter_embeddings       {embeddings_seconds * 1000:10.1f} ms          (decrypt-once load)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--smoke", action="store_true", help="tiny run, checks the instrument only")
    parser.add_argument("--large", action="store_true", help="also run 100k drawers")
    args = parser.parse_args()
    sizes = [300] if args.smoke else [10_000] + ([100_000] if args.large else [])
    with tempfile.TemporaryDirectory() as scratch:
        for n in sizes:
            run(n, Path(scratch))
    return 0


if __name__ == "__main__":
    sys.exit(main())
