"""The head-to-head instrument `undercroft-bench vs`: the same chunks and the same scorer through each system.

LoCoMo (`--corpus locomo`): exactly the `locomo` instrument's protocol and scorer (`run_locomo`), with the
system's factory wrapped so every search is timed on its own. Synthetic (`--corpus synthetic`): the corpus of
`../shared/tools/gen_corpus.py` (a folder holding `corpus/` and `queries.json`), every paragraph file one chunk
whose id is its path under `corpus/`, one scope for the whole corpus, each query verbatim; R@5 and R@10 of the
target file. Both print `VS_RAW` lines (exact numerators and denominators) and a `VS_TIMING` line: ingest
wall-clock, search total, median and p95 per query, and disk bytes where the system reports them.
"""

from __future__ import annotations

import math
import pathlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

from undercroft_bench._internal.jsonfile import read_json
from undercroft_bench.chunking import Chunk
from undercroft_bench.errors import DataError, InvalidSetting
from undercroft_bench.locomo_data import LocomoConversation
from undercroft_bench.locomo_eval import LocomoReport, LocomoSettings, run_locomo
from undercroft_bench.retriever import ArmContext, ArmFactory, Retriever
from undercroft_bench.scoring import Tally, category_order, checked_ranking

__all__ = [
    "CORPORA",
    "SyntheticCorpus",
    "SyntheticQuery",
    "SyntheticReport",
    "TimedRetriever",
    "Timings",
    "format_vs_locomo",
    "format_vs_synthetic",
    "load_synthetic",
    "percentile",
    "run_vs_locomo",
    "run_vs_synthetic",
    "synthetic_json",
]

CORPORA = ("locomo", "synthetic")


def percentile(values: Sequence[float], fraction: float) -> float:
    """Nearest-rank percentile (`fraction` in (0, 1]) of `values`; 0.0 for no values. Median = 0.5."""
    if not 0.0 < fraction <= 1.0:
        raise InvalidSetting(f"percentile fraction must be in (0, 1], got {fraction}")
    if not values:
        return 0.0
    ordered = sorted(values)
    # The smallest value with at least `fraction` of the values at or below it (epsilon absorbs 0.95 * 20).
    rank = max(1, math.ceil(fraction * len(ordered) - 1e-9))
    return ordered[rank - 1]


@dataclass
class Timings:
    """Wall-clock of one run: every `index` and every `search`, in seconds, and disk bytes reported."""

    index_seconds: list[float] = field(default_factory=list)
    search_seconds: list[float] = field(default_factory=list)
    disk_bytes: list[int] = field(default_factory=list)
    retrievers: list[Retriever] = field(default_factory=list)

    def reported(self, name: str) -> float | None:
        """The sum of a per-retriever figure the system measures itself (e.g. MemPalace's in-driver
        `driver_search_seconds`, without the pipe), or None when no retriever reports it."""
        values = [getattr(retriever, name) for retriever in self.retrievers if hasattr(retriever, name)]
        return float(sum(values)) if values else None

    def summary(self) -> dict[str, float | int | None]:
        """Totals, median and p95 per query in ms, summed disk bytes, and the system's own seconds where it
        reports them (None when it does not)."""
        searches = self.search_seconds
        return {
            "system_index_seconds": self.reported("driver_index_seconds"),
            "system_search_seconds": self.reported("driver_search_seconds"),
            "index_seconds": sum(self.index_seconds),
            "search_seconds": sum(searches),
            "queries": len(searches),
            "median_ms": 1000.0 * percentile(searches, 0.5),
            "p95_ms": 1000.0 * percentile(searches, 0.95),
            "mean_ms": 1000.0 * sum(searches) / len(searches) if searches else 0.0,
            "disk_bytes": sum(self.disk_bytes) if self.disk_bytes else None,
        }


class TimedRetriever:
    """A pass-through wrapper recording the wall-clock of `index` and of each `search` into shared `Timings`."""

    def __init__(self, inner: Retriever, timings: Timings, clock: Callable[[], float] = time.perf_counter) -> None:
        """Wrap `inner`; durations are read from `clock` (injectable so tests are exact)."""
        self._inner = inner
        self._timings = timings
        self._clock = clock
        timings.retrievers.append(inner)

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Index through the inner retriever, timed; then record its disk bytes if it reports them."""
        started = self._clock()
        self._inner.index(chunks)
        self._timings.index_seconds.append(self._clock() - started)
        disk = getattr(self._inner, "disk_bytes", None)
        if callable(disk):
            self._timings.disk_bytes.append(int(disk()))

    def search(self, question: str, k: int) -> list[str]:
        """Search through the inner retriever, timed; the answer is returned untouched."""
        started = self._clock()
        answer = self._inner.search(question, k)
        self._timings.search_seconds.append(self._clock() - started)
        return answer


def timed_factory(factory: ArmFactory, timings: Timings, clock: Callable[[], float]) -> ArmFactory:
    """Wrap every retriever `factory` builds in a `TimedRetriever` feeding `timings`."""

    def build(context: ArmContext) -> Retriever:
        return TimedRetriever(factory(context), timings, clock)

    return build


def run_vs_locomo(
    conversations: Sequence[LocomoConversation],
    settings: LocomoSettings,
    factory: ArmFactory,
    *,
    clock: Callable[[], float] = time.perf_counter,
) -> tuple[LocomoReport, Timings]:
    """The LoCoMo protocol through `factory` (the `locomo` instrument's loop and scorer), with per-query timings."""
    timings = Timings()
    report = run_locomo(conversations, settings, factory=timed_factory(factory, timings, clock), clock=clock)
    return report, timings


@dataclass(frozen=True)
class SyntheticQuery:
    """One synthetic query verbatim and the path (under `corpus/`) of the file that answers it."""

    query: str
    target: str


@dataclass(frozen=True)
class SyntheticCorpus:
    """The generated corpus: one chunk per paragraph file (id = its path under `corpus/`), and the queries."""

    root: pathlib.Path
    chunks: tuple[Chunk, ...]
    queries: tuple[SyntheticQuery, ...]


def load_synthetic(root: pathlib.Path) -> SyntheticCorpus:
    """Load a folder written by `gen_corpus.py OUT_DIR`; refuse a missing part or a target that is not a file."""
    corpus = root / "corpus"
    if not corpus.is_dir():
        raise DataError(f"synthetic corpus folder not found: {corpus} (generate it: gen_corpus.py {root})")
    chunks = tuple(
        Chunk(chunk_id=rel, text=path.read_text(encoding="utf-8"), session_id=rel, turn_ids=())
        for path in sorted(corpus.rglob("*.md"))
        for rel in (path.relative_to(corpus).as_posix(),)
    )
    if not chunks:
        raise DataError(f"synthetic corpus folder holds no .md file: {corpus}")
    raw = read_json(root / "queries.json", "synthetic queries")
    if not isinstance(raw, list):
        raise DataError(f"synthetic queries must be a JSON list: {root / 'queries.json'}")
    known = {chunk.chunk_id for chunk in chunks}
    queries: list[SyntheticQuery] = []
    for position, item in enumerate(raw):
        if (
            not isinstance(item, Mapping)
            or not isinstance(item.get("query"), str)
            or not isinstance(item.get("target"), str)
        ):
            raise DataError(f"synthetic query {position} needs string 'query' and 'target': {item!r}")
        if item["target"] not in known:
            raise DataError(f"synthetic query {position} targets {item['target']!r}, which is not in {corpus}")
        queries.append(SyntheticQuery(item["query"], item["target"]))
    return SyntheticCorpus(root, chunks, tuple(queries))


@dataclass
class SyntheticReport:
    """Exact R@5 / R@10 of the target file, counts, timings and each query's top ranking."""

    system: str
    chunks: int
    at5: Tally = field(default_factory=Tally)
    at10: Tally = field(default_factory=Tally)
    ingest_seconds: float = 0.0
    timings: Timings = field(default_factory=Timings)
    rankings: list[tuple[str, str, tuple[str, ...]]] = field(default_factory=list)


def run_vs_synthetic(
    corpus: SyntheticCorpus,
    system: str,
    factory: ArmFactory,
    *,
    clock: Callable[[], float] = time.perf_counter,
) -> SyntheticReport:
    """Index every chunk in one fresh scope, ask each query for 10 chunks, score R@5 and R@10 of its target."""
    timings = Timings()
    by_id = {chunk.chunk_id: chunk for chunk in corpus.chunks}
    report = SyntheticReport(system=system, chunks=len(corpus.chunks), timings=timings)
    started = clock()
    retriever = timed_factory(factory, timings, clock)(ArmContext(scope_id="synthetic"))
    retriever.index(corpus.chunks)
    report.ingest_seconds = clock() - started
    for query in corpus.queries:
        ranking = checked_ranking(retriever.search(query.query, 10), by_id, 10, system)
        report.at5.add(query.target in ranking[:5])
        report.at10.add(query.target in ranking[:10])
        report.rankings.append((query.query, query.target, tuple(ranking)))
    return report


def _timing_line(system: str, corpus: str, ingest_seconds: float, timings: Timings) -> str:
    summary = timings.summary()
    disk = summary["disk_bytes"]
    return (
        f"VS_TIMING system={system} corpus={corpus} ingest_s={ingest_seconds:.3f} "
        f"search_s={summary['search_seconds']:.3f} queries={summary['queries']} "
        f"median_ms={summary['median_ms']:.1f} p95_ms={summary['p95_ms']:.1f} mean_ms={summary['mean_ms']:.1f} "
        f"disk_bytes={'n/a' if disk is None else disk}"
    )


def format_vs_locomo(system: str, configuration: str, report: LocomoReport, timings: Timings) -> list[str]:
    """VS lines for a LoCoMo run: configuration, one VS_RAW per category and the total, VS_TIMING."""
    k = report.settings.k
    lines = [f"VS_CONFIG system={system} corpus=locomo k={k} pool={report.settings.pool} | {configuration}"]
    for category in sorted(report.session_by_category, key=category_order):
        tally = report.session_by_category[category]
        lines.append(
            f"VS_RAW system={system} corpus=locomo unit=session k={k} category={category} "
            f"hits={tally.hits} total={tally.total} ({tally.describe()})"
        )
    total = report.session_total
    lines.append(
        f"VS_RAW system={system} corpus=locomo unit=session k={k} category=total "
        f"hits={total.hits} total={total.total} ({total.describe()})"
    )
    lines.append(_timing_line(system, "locomo", report.ingest_seconds, timings))
    return lines


def format_vs_synthetic(system: str, configuration: str, report: SyntheticReport) -> list[str]:
    """VS lines for a synthetic run: configuration, VS_RAW for R@5 and R@10 of the target file, VS_TIMING."""
    lines = [
        f"VS_CONFIG system={system} corpus=synthetic chunks={report.chunks} queries={report.at5.total} | "
        f"{configuration}"
    ]
    for k, tally in ((5, report.at5), (10, report.at10)):
        lines.append(
            f"VS_RAW system={system} corpus=synthetic unit=file k={k} "
            f"hits={tally.hits} total={tally.total} ({tally.describe()})"
        )
    lines.append(_timing_line(system, "synthetic", report.ingest_seconds, report.timings))
    return lines


def synthetic_json(report: SyntheticReport, configuration: str, source: Mapping[str, str]) -> dict[str, object]:
    """The machine-readable synthetic report: configuration, raw tallies, timings, every query's ranking."""
    return {
        "instrument": "vs",
        "corpus": "synthetic",
        "system": report.system,
        "configuration": configuration,
        "source": dict(source),
        "chunks": report.chunks,
        "r_at_5": {"hits": report.at5.hits, "total": report.at5.total},
        "r_at_10": {"hits": report.at10.hits, "total": report.at10.total},
        "timing": {"ingest_seconds": report.ingest_seconds, **report.timings.summary()},
        "queries": [
            {"query": query, "target": target, "ranking": list(ranking)} for query, target, ranking in report.rankings
        ],
    }
