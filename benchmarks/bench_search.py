"""Search latency on a sealed vault (hash embedder, full-scan tier), beside the raw numpy scan in the same run.

    python benchmarks/bench_search.py            # 10k and 100k drawers, 200 queries each
    python benchmarks/bench_search.py --smoke    # 500 drawers, 20 queries, and a 1,200-drawer --fts run (CI)
    python benchmarks/bench_search.py --fts      # hmac-only: FTS5 prefilter vs RAM postings, 20k and 100k

For each size: p50/p95 of `Searcher.search` (limit 10, unscoped) in two states, beside the raw cost of the
cosine scan alone (float32 matrix · query) and of hydrating the pool (320 candidates) through the store's
verified reads, per row (`hydrate`) and batched (`hydrate_many`), all measured in the same run:

* cold — the lexical cache dropped before every query (what the first search after a write pays for its
  pool; the embedding matrix stays warm);
* warm — after `Searcher.warm()` (every drawer verified and its lexical bag cached once, timed separately):
  a long-lived server's steady state;
* right after a write — one `remember`, then one search: an agent's save-then-search rhythm, which pays the
  rebuild of the RAM caches a write invalidates.

Synthetic corpus: Zipf-distributed pseudo-words, ~60 per drawer, 20 rooms; each query is five words drawn
from one drawer.

`--fts` (an hmac-only vault, same corpus plus planted needles — "<Name> keeps the <thing> in the <place>."
among Zipf words, asked "Where does <Name> keep the <thing>?"): two searchers over the same vault in the same
run, the FTS5 prefilter (`UNDERCROFT_FTS_PREFILTER_MIN` 2048) and the RAM-postings path (prefilter off). For
each: the first search of a fresh searcher (embedding matrix load, plus the postings build on that path),
warm p50/p95 over the five-word queries that follow, and needle recall@5 (unscoped, limit 5), beside the raw
numpy scan and the raw FTS5 query (every query term quoted, `ORDER BY bm25() LIMIT live/64`) of the same run.
"""

from __future__ import annotations

import argparse
import random
import sqlite3
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
from undercroft_core import Drawer, HashEmbedder
from undercroft_store import DrawerWrite, Palace, Screen
from undercroft_store.search import Searcher, SearchRequest

BATCH = 1000
FILED_AT = "2024-01-01T00:00:00Z"


def _vocabulary(rng: random.Random, size: int = 6000) -> list[str]:
    letters = "abcdefghijklmnopqrstuvwxyz"
    return ["".join(rng.choice(letters) for _ in range(rng.randint(3, 9))) for _ in range(size)]


def _texts(rng: random.Random, vocabulary: list[str], count: int) -> list[str]:
    weights = [1.0 / (rank + 1) for rank in range(len(vocabulary))]
    return [" ".join(rng.choices(vocabulary, weights, k=rng.randint(40, 80))) + "." for _ in range(count)]


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def run(size: int, queries: int, seed: int = 7) -> None:
    rng = random.Random(seed)  # noqa: S311 - a reproducible synthetic corpus, not a secret
    vocabulary = _vocabulary(rng)
    texts = _texts(rng, vocabulary, size)
    embedder = HashEmbedder()
    with tempfile.TemporaryDirectory() as home, Palace(Path(home)) as palace:
        palace.create_vault("bench", level="sealed")
        with palace.open_vault("bench", embedder) as store:
            started = time.perf_counter()
            for first in range(0, size, BATCH):
                batch = []
                for index in range(first, min(size, first + BATCH)):
                    room = f"room-{index % 20}"
                    batch.append(
                        DrawerWrite(
                            Drawer(
                                id=store.drawer_ids.append("bench", room, index),
                                content=texts[index],
                                wing="bench",
                                room=room,
                                chunk_index=index,
                                id_recipe="append",
                                added_by="bench",
                                filed_at=FILED_AT,
                            )
                        )
                    )
                store.write(batch, screening=Screen())
            ingest = time.perf_counter() - started
            searcher = Searcher(store, embedder)
            asked = [" ".join(rng.sample(texts[rng.randrange(size)].rstrip(".").split(), 5)) for _ in range(queries)]
            started = time.perf_counter()
            searcher.search(SearchRequest(asked[0]))
            first = time.perf_counter() - started
            cold = []
            for question in asked[: max(1, queries // 4)]:
                searcher.lexicon.clear()
                started = time.perf_counter()
                searcher.search(SearchRequest(question, limit=10))
                cold.append(time.perf_counter() - started)
            started = time.perf_counter()
            searcher.warm()
            warm = time.perf_counter() - started
            timings = []
            for question in asked:
                started = time.perf_counter()
                searcher.search(SearchRequest(question, limit=10))
                timings.append(time.perf_counter() - started)
            # A declared date window: the SQL scan for dated candidates alone (it names no drawer), and the
            # worst case (it names every drawer, so the dated joiners are cut back by cosine over all of them).
            windowed: dict[str, list[float]] = {}
            for label, when in (("naming no drawer", "2023-10-03"), ("naming every drawer", FILED_AT[:10])):
                windowed[label] = []
                for question in asked[: max(1, queries // 4)]:
                    started = time.perf_counter()
                    searcher.search(SearchRequest(question, limit=10, when=when))
                    windowed[label].append(time.perf_counter() - started)
            # An agent's rhythm: save one drawer, then search. The write moves the store's generation, so the
            # RAM caches (embeddings, lexical bags, postings) are rebuilt by the next search.
            after_write = []
            for round_index, question in enumerate(asked[: max(1, min(5, queries // 20))]):
                store.remember(f"{question} fresh note {round_index}", wing="bench", room="room-0", added_by="bench")
                started = time.perf_counter()
                searcher.search(SearchRequest(question, limit=10))
                after_write.append(time.perf_counter() - started)
            seqs, unit = searcher.cache.load(store)
            vectors = embedder.embed(asked)
            scans = []
            for vector in vectors:
                started = time.perf_counter()
                scores = unit @ vector
                np.argpartition(-scores, 319)[:320]
                scans.append(time.perf_counter() - started)
            hydrate_n = min(size, 320)
            sample = seqs[rng.sample(range(size), hydrate_n)].tolist()
            started = time.perf_counter()
            for seq in sample:
                store.hydrate([seq])
            per_row_ms = (time.perf_counter() - started) * 1000
            started = time.perf_counter()
            store.hydrate_many(sample)
            batched_ms = (time.perf_counter() - started) * 1000

    def _ms(values: list[float], share: float) -> str:
        return f"{_percentile(values, share) * 1000:.2f}"

    print(f"sealed vault, {size} drawers (hash embedder, full scan), {queries} queries, limit 10")
    print(f"  ingest: {ingest:.1f} s ({size / ingest:,.0f} drawers/s); first search (cache fill) {first * 1000:.1f} ms")
    print(f"  warm(): every drawer verified and its lexical bag cached in {warm:.2f} s")
    print(f"  search warm p50 {_ms(timings, 0.5)} ms | p95 {_ms(timings, 0.95)} ms")
    print(f"  search cold p50 {_ms(cold, 0.5)} ms | p95 {_ms(cold, 0.95)} ms ({len(cold)} queries, no lexical cache)")
    print(
        "  search with a declared window p50: "
        + " | ".join(f"{label} {_ms(spent, 0.5)} ms" for label, spent in windowed.items())
        + f" ({len(windowed['naming no drawer'])} queries each)"
    )
    print(
        f"  search right after a write p50 {_ms(after_write, 0.5)} ms | max {max(after_write) * 1000:.2f} ms"
        f" ({len(after_write)} rounds of one remember then one search: the caches rebuild)"
    )
    print(
        f"  raw numpy scan p50 {_ms(scans, 0.5)} ms | p95 {_ms(scans, 0.95)} ms"
        f" | raw verified hydration of {hydrate_n} drawers: per row {per_row_ms:.2f} ms, batched {batched_ms:.2f} ms"
    )
    print(
        f"  ratios: warm p50 / raw scan p50 {statistics.median(timings) / statistics.median(scans):.1f}x"
        f" | cold p50 / raw scan p50 {statistics.median(cold) / statistics.median(scans):.1f}x"
    )


_SYLLABLES = ("ka", "zu", "mi", "ro", "te", "vi", "lo", "sa", "ne", "fu", "qo", "xi", "pe", "ju", "wa", "gy")
_THINGS = ("lantern", "ledger", "compass", "kettle", "satchel", "spyglass")
_PLACES = ("attic", "cellar", "boathouse", "pantry", "workshop", "stable")


def _needle_name(index: int) -> str:
    """A two-word name of four syllables (spread over 16**4 so neighbours share no syllable pattern)."""
    value = (index * 7919) % len(_SYLLABLES) ** 4
    digits = []
    for _ in range(4):
        digits.append(_SYLLABLES[value % len(_SYLLABLES)])
        value //= len(_SYLLABLES)
    return f"{''.join(digits[:2]).capitalize()} {''.join(digits[2:]).capitalize()}"


def run_fts(size: int, queries: int, needles: int, minimum: int = 2048, seed: int = 11) -> None:
    """hmac-only: the FTS5 prefilter against the RAM postings on one vault, in the same run."""
    rng = random.Random(seed)  # noqa: S311 - a reproducible synthetic corpus, not a secret
    vocabulary = _vocabulary(rng)
    texts = _texts(rng, vocabulary, size)
    planted: dict[int, str] = {}
    for number, index in enumerate(sorted(rng.sample(range(size), needles))):
        name, thing = _needle_name(number), rng.choice(_THINGS)
        texts[index] = f"{name} keeps the {thing} in the {rng.choice(_PLACES)}. {texts[index]}"
        planted[index] = f"Where does {name} keep the {thing}?"
    embedder = HashEmbedder()
    figures: dict[str, dict[str, float]] = {}
    with tempfile.TemporaryDirectory() as home, Palace(Path(home)) as palace:
        palace.create_vault("fts", level="hmac-only")
        with palace.open_vault("fts", embedder) as store:
            started = time.perf_counter()
            for first in range(0, size, BATCH):
                batch = [
                    DrawerWrite(
                        Drawer(
                            id=store.drawer_ids.append("bench", f"room-{index % 20}", index),
                            content=texts[index],
                            wing="bench",
                            room=f"room-{index % 20}",
                            chunk_index=index,
                            id_recipe="append",
                            added_by="bench",
                            filed_at=FILED_AT,
                        )
                    )
                    for index in range(first, min(size, first + BATCH))
                ]
                store.write(batch, screening=Screen())
            ingest = time.perf_counter() - started
            asked = [" ".join(rng.sample(texts[rng.randrange(size)].rstrip(".").split(), 5)) for _ in range(queries)]
            for arm, floor in (("fts prefilter", minimum), ("ram postings", None)):
                searcher = Searcher(store, embedder, fts_prefilter_min=floor)
                started = time.perf_counter()
                searcher.search(SearchRequest(asked[0], limit=10))
                first_search = time.perf_counter() - started
                timings = []
                for question in asked[1:]:
                    started = time.perf_counter()
                    searcher.search(SearchRequest(question, limit=10))
                    timings.append(time.perf_counter() - started)
                found = 0
                needle_timings = []
                for index, question in planted.items():
                    started = time.perf_counter()
                    hits = searcher.search(SearchRequest(question, limit=5)).hits
                    needle_timings.append(time.perf_counter() - started)
                    found += any(
                        hit.id == store.drawer_ids.append("bench", f"room-{index % 20}", index) for hit in hits
                    )
                figures[arm] = {
                    "first": first_search,
                    "p50": _percentile(timings, 0.5),
                    "p95": _percentile(timings, 0.95),
                    "needle_p50": _percentile(needle_timings, 0.5),
                    "found": found,
                    "postings": float(searcher.postings is not None),
                }
            _, unit = Searcher(store, embedder).cache.load(store)
            scans = []
            for vector in embedder.embed(asked):
                started = time.perf_counter()
                np.argpartition(-(unit @ vector), 319)[:320]
                scans.append(time.perf_counter() - started)
            raw_fts = []
            with sqlite3.connect(palace.vault_dir("fts") / "vault.db") as raw:
                for question in asked:
                    quoted = " OR ".join(f'"{word}"' for word in question.split())
                    started = time.perf_counter()
                    raw.execute(
                        "SELECT rowid FROM drawers_fts WHERE drawers_fts MATCH ? ORDER BY bm25(drawers_fts) LIMIT ?",
                        (quoted, max(320, size // 64)),
                    ).fetchall()
                    raw_fts.append(time.perf_counter() - started)

    print(f"hmac-only vault, {size} drawers, {needles} needles (hash embedder), {queries} queries, limit 10")
    print(f"  ingest: {ingest:.1f} s ({size / ingest:,.0f} drawers/s)")
    for arm, got in figures.items():
        print(
            f"  {arm:13}: first search {got['first'] * 1000:.1f} ms | warm p50 {got['p50'] * 1000:.2f} ms"
            f" | p95 {got['p95'] * 1000:.2f} ms | needle R@5 {int(got['found'])}/{needles}"
            f" (p50 {got['needle_p50'] * 1000:.2f} ms) | postings built: {bool(got['postings'])}"
        )
    print(
        f"  raw numpy scan p50 {_percentile(scans, 0.5) * 1000:.2f} ms"
        f" | raw FTS5 bm25 query (all five terms) p50 {_percentile(raw_fts, 0.5) * 1000:.2f} ms"
    )
    fts, postings = figures["fts prefilter"], figures["ram postings"]
    print(
        f"  ratios: first search postings / fts {postings['first'] / fts['first']:.1f}x"
        f" | warm p50 fts / postings {fts['p50'] / postings['p50']:.2f}x"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--smoke", action="store_true", help="a tiny run for CI")
    parser.add_argument("--fts", action="store_true", help="hmac-only: FTS5 prefilter vs RAM postings")
    parser.add_argument("--sizes", default="20000,100000", help="--fts vault sizes, comma-separated")
    args = parser.parse_args(argv)
    if args.smoke:
        run(500, 20)
        run_fts(1_200, 10, 5, minimum=512)
    elif args.fts:
        for size in (int(part) for part in args.sizes.split(",")):
            run_fts(size, 200, 100)
    else:
        run(10_000, 200)
        run(100_000, 200)
    return 0


if __name__ == "__main__":
    sys.exit(main())
