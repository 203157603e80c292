"""The synthetic-scale instrument: one sealed vault grown through checkpoints, measured at each.

At every checkpoint: the growth step's ingest rate (the store's batched ``write`` calls only; generating the
text is not the store's cost), the time to close and reopen the vault, the first search (the decrypt-once
embedding cache fill), peak RSS, R@k of every needle planted so far and p50/p95 latency of those needle
questions unscoped, wing-scoped and room-scoped (room with its wing), and optionally (``offsets``) whether
pages at offsets 0, s, 2s, … pinned with one ``ranked_at`` tile the single deep ranking byte for byte.
Beside them, measured in the same run (`undercroft_bench.synth_baseline`): a raw numpy float32 scan over as
many 384-d vectors and a raw batched SQLite insert of as many rows.
"""

from __future__ import annotations

import json
import re
import resource
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path

from undercroft_core import Drawer, HashEmbedder
from undercroft_core.ids import PUBLIC_DRAWER_IDS, DrawerIds
from undercroft_store import DrawerWrite, Palace, Screen, VaultStore
from undercroft_store.search import Searcher, SearchRequest

from undercroft_bench.errors import InvalidSetting
from undercroft_bench.synth_baseline import BaselineFigures, measure_baseline
from undercroft_bench.synth_corpus import FILED_BASE, Needle, SynthSpec, needle_positions, synth_drawer

__all__ = [
    "SCOPES",
    "CheckpointFigures",
    "OffsetFigures",
    "ScaleReport",
    "ScaleSettings",
    "ScopeFigures",
    "measure_offsets",
    "measure_scopes",
    "paging_query",
    "parse_checkpoints",
    "run_scale",
    "write_step",
]

#: The three query shapes measured at every checkpoint.
SCOPES = ("unscoped", "wing", "room")
_VAULT = "synth"
_CHECKPOINT = re.compile(r"(\d+)([km]?)")
_MAX_DRAWERS = 10_000_000


def parse_checkpoints(text: str) -> tuple[int, ...]:
    """``"10000,100k,1m"`` → ``(10000, 100000, 1000000)``: strictly increasing drawer counts ≥ 10."""
    values = []
    for part in text.split(","):
        match = _CHECKPOINT.fullmatch(part.strip().lower())
        if match is None:
            raise InvalidSetting(f"--checkpoints: {part.strip()!r} is not a drawer count (e.g. 10000, 100k, 1m)")
        values.append(int(match[1]) * {"": 1, "k": 1000, "m": 1_000_000}[match[2]])
    for low, high in zip([0, *values], values, strict=False):
        if high <= low:
            raise InvalidSetting(f"--checkpoints must be strictly increasing positive counts, got {text!r}")
    if values[0] < 10 or values[-1] > _MAX_DRAWERS:
        raise InvalidSetting(f"--checkpoints must lie from 10 to {_MAX_DRAWERS:,} drawers, got {text!r}")
    return tuple(values)


@dataclass(frozen=True, slots=True)
class ScaleSettings:
    """What one run measures: checkpoints, corpus shape, k, write batch, vault level and the offsets check."""

    checkpoints: tuple[int, ...]
    spec: SynthSpec = field(default_factory=SynthSpec)
    k: int = 5
    batch: int = 2000
    level: str = "sealed"
    offsets: int = 0
    page_size: int = 10
    baseline: bool = True

    def validate(self) -> None:
        """Refuse settings before anything is written, naming the option."""
        self.spec.validate()
        if not self.checkpoints:
            raise InvalidSetting("--checkpoints names no checkpoint")
        for name, value, low, high in (
            ("-k", self.k, 1, 1000),
            ("--batch", self.batch, 1, 10_000),
            ("--offsets", self.offsets, 0, 1000),
            ("--page-size", self.page_size, 1, 1000),
        ):
            if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
                raise InvalidSetting(f"{name} must be an integer from {low} to {high}, got {value!r}")
        if self.level not in ("sealed", "hmac-only"):
            raise InvalidSetting(f"--level must be sealed or hmac-only, got {self.level!r}")
        if self.spec.needles_per_step < 1:
            raise InvalidSetting("--needles must be at least 1: recall and latency are measured on the needles")


@dataclass(frozen=True, slots=True)
class ScopeFigures:
    """One query shape at one checkpoint: needle hits out of needles, and latency over those queries."""

    scope: str
    hits: int
    total: int
    p50_ms: float
    p95_ms: float


@dataclass(frozen=True, slots=True)
class OffsetFigures:
    """The paging check, hit by hit in bytes, under one ``ranked_at``.

    ``failed_tile``: pages that differ from their slice of the single deep ranking (offset 0, all pages'
    depth). ``failed_tail``: pages that differ from the tail of the call of their own depth (offset 0,
    limit = offset + page size), the weaker property that holds while the pool is sized from the depth.
    """

    pages: int
    page_size: int
    ranked_at: str
    deep_hits: int
    deep_ms: float
    page_ms: tuple[float, ...]
    tail_ms: tuple[float, ...]
    failed_tile: tuple[int, ...]
    failed_tail: tuple[int, ...]

    @property
    def tiled(self) -> bool:
        """True when every page is its slice of the single deep ranking (and that ranking filled a page)."""
        return not self.failed_tile and self.deep_hits > 0

    @property
    def tailed(self) -> bool:
        """True when every page is the tail of the call of its own depth."""
        return not self.failed_tail and self.deep_hits > 0


@dataclass(frozen=True, slots=True)
class CheckpointFigures:
    """Everything measured at one checkpoint."""

    drawers: int
    step: int
    ingest_s: float
    open_ms: float
    first_search_ms: float
    peak_rss_mb: float
    scopes: tuple[ScopeFigures, ...]
    offsets: OffsetFigures | None
    baseline: BaselineFigures | None

    @property
    def ingest_rate(self) -> float:
        """Drawers per second over this growth step's writes."""
        return self.step / self.ingest_s if self.ingest_s > 0 else float("inf")


@dataclass(frozen=True, slots=True)
class ScaleReport:
    """A run: its settings, the checkpoints reached, and its wall-clock."""

    settings: ScaleSettings
    checkpoints: tuple[CheckpointFigures, ...]
    wall_s: float


def _peak_rss_mb() -> float:
    # ru_maxrss is KiB on Linux, bytes on macOS.
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def _percentile(values: list[float], share: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(share * (len(ordered) - 1)))]


def write_step(
    store: VaultStore, spec: SynthSpec, start: int, stop: int, first: int, batch: int
) -> tuple[float, list[Needle]]:
    """Generate and write drawers ``[start, stop)`` in batches; returns the seconds spent in ``write``."""
    needles = needle_positions(spec, start, stop, first)
    planted: list[Needle] = []
    spent = 0.0
    for low in range(start, stop, batch):
        items = []
        for index in range(low, min(stop, low + batch)):
            drawer = synth_drawer(spec, index, needles.get(index))
            if drawer.needle is not None:
                planted.append(drawer.needle)
            items.append(
                DrawerWrite(
                    Drawer(
                        id=store.drawer_ids.append(drawer.wing, drawer.room, index),
                        content=drawer.text,
                        wing=drawer.wing,
                        room=drawer.room,
                        chunk_index=index,
                        id_recipe="append",
                        added_by="bench",
                        filed_at=drawer.filed_at,
                    )
                )
            )
        started = time.perf_counter()
        store.write(items, screening=Screen())
        spent += time.perf_counter() - started
    return spent, planted


def _request(needle: Needle, scope: str, k: int) -> SearchRequest:
    wing = None if scope == "unscoped" else needle.wing
    room = needle.room if scope == "room" else None
    return SearchRequest(needle.query, limit=k, wing=wing, room=room)


def measure_scopes(
    searcher: Searcher, needles: list[Needle], k: int, ids: DrawerIds = PUBLIC_DRAWER_IDS
) -> tuple[ScopeFigures, ...]:
    """R@k of ``needles`` (a hit: the needle's drawer among the first k) and latency, for each of `SCOPES`."""
    figures = []
    for scope in SCOPES:
        hits, timings = 0, []
        for needle in needles:
            request = _request(needle, scope, k)
            started = time.perf_counter()
            result = searcher.search(request)
            timings.append((time.perf_counter() - started) * 1000)
            wanted = ids.append(needle.wing, needle.room, needle.index)  # the vault's recipe (store.drawer_ids)
            hits += any(hit.id == wanted for hit in result.hits)
        figures.append(ScopeFigures(scope, hits, len(needles), statistics.median(timings), _percentile(timings, 0.95)))
    return tuple(figures)


def paging_query(spec: SynthSpec) -> str:
    """A query of frequent vocabulary words: lexical evidence admits a deep ranking to tile."""
    words = spec.words
    return " ".join(words[rank] for rank in (2, 7, 19, 43))


def _hit_bytes(hit: object) -> bytes:
    to_dict: Callable[[], dict[str, object]] = hit.to_dict  # type: ignore[attr-defined]
    return json.dumps(to_dict(), sort_keys=True, ensure_ascii=False).encode()


def _timed(searcher: Searcher, request: SearchRequest) -> tuple[list[bytes], float]:
    started = time.perf_counter()
    result = searcher.search(request)
    return [_hit_bytes(hit) for hit in result.hits], (time.perf_counter() - started) * 1000


def measure_offsets(searcher: Searcher, query: str, drawers: int, pages: int, page_size: int) -> OffsetFigures:
    """Pages at offsets 0, s, 2s, … pinned at the last drawer's filing time, checked two ways (`OffsetFigures`)."""
    ranked_at = FILED_BASE + timedelta(seconds=drawers - 1)
    deep, deep_ms = _timed(searcher, SearchRequest(query, limit=pages * page_size, ranked_at=ranked_at))
    page_ms, tail_ms, failed_tile, failed_tail = [], [], [], []
    for number in range(pages):
        offset = number * page_size
        got, spent = _timed(searcher, SearchRequest(query, limit=page_size, offset=offset, ranked_at=ranked_at))
        page_ms.append(spent)
        own, spent = _timed(searcher, SearchRequest(query, limit=offset + page_size, ranked_at=ranked_at))
        tail_ms.append(spent)
        if got != deep[offset : offset + page_size]:
            failed_tile.append(number)
        if got != own[offset:]:
            failed_tail.append(number)
    return OffsetFigures(
        pages=pages,
        page_size=page_size,
        ranked_at=_iso(ranked_at),
        deep_hits=len(deep),
        deep_ms=deep_ms,
        page_ms=tuple(page_ms),
        tail_ms=tuple(tail_ms),
        failed_tile=tuple(failed_tile),
        failed_tail=tuple(failed_tail),
    )


def _iso(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%dT%H:%M:%SZ")


def run_scale(
    settings: ScaleSettings,
    *,
    home: Path | None = None,
    progress: Callable[[str], None] | None = None,
) -> ScaleReport:
    """Grow one vault through ``settings.checkpoints`` and measure each (a temporary palace unless ``home``)."""
    settings.validate()
    say = progress or (lambda _line: None)
    began = time.perf_counter()
    embedder = HashEmbedder()
    with tempfile.TemporaryDirectory(prefix="undercroft-synth-") as scratch:
        palace = Palace(home or Path(scratch) / "palace")
        with palace:
            palace.create_vault(_VAULT, level="hmac-only" if settings.level == "hmac-only" else "sealed")
            store = palace.open_vault(_VAULT, embedder)
            needles: list[Needle] = []
            reached: list[CheckpointFigures] = []
            written = 0
            try:
                for target in settings.checkpoints:
                    say(f"synth: writing drawers {written:,}..{target:,}")
                    spent, planted = write_step(store, settings.spec, written, target, len(needles), settings.batch)
                    needles.extend(planted)
                    step, written = target - written, target
                    store.close()
                    started = time.perf_counter()
                    store = palace.open_vault(_VAULT, embedder)
                    open_ms = (time.perf_counter() - started) * 1000
                    searcher = Searcher(store, embedder)
                    started = time.perf_counter()
                    searcher.search(SearchRequest(paging_query(settings.spec), limit=settings.k))
                    first_ms = (time.perf_counter() - started) * 1000
                    say(f"synth: {target:,} drawers written ({step / spent:,.0f}/s); searching {len(needles)} needles")
                    scopes = measure_scopes(searcher, needles, settings.k, store.drawer_ids)
                    offsets = None
                    if settings.offsets:
                        query = paging_query(settings.spec)
                        offsets = measure_offsets(searcher, query, target, settings.offsets, settings.page_size)
                    peak = _peak_rss_mb()  # before the baseline allocates its own matrix
                    baseline = None
                    if settings.baseline:
                        say("synth: raw baselines (numpy scan, SQLite insert)")
                        baseline = measure_baseline(target, step, len(needles), settings.batch, settings.spec.seed)
                    reached.append(
                        CheckpointFigures(target, step, spent, open_ms, first_ms, peak, scopes, offsets, baseline)
                    )
            finally:
                store.close()
    return ScaleReport(settings=settings, checkpoints=tuple(reached), wall_s=time.perf_counter() - began)
