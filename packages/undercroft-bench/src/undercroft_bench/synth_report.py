"""Rendering a synthetic-scale run: the printed table (raw figures beside the same-run baselines) and JSON."""

from __future__ import annotations

from dataclasses import asdict
from typing import Any

from undercroft_bench.synth import CheckpointFigures, OffsetFigures, ScaleReport

__all__ = ["format_scale", "scale_json"]


def _ratio(value: float, baseline: float) -> str:
    return f"{value / baseline:,.1f}x" if baseline > 0 else "n/a"


def _percent(hits: int, total: int) -> str:
    return f"{100.0 * hits / total:.2f} %" if total else "n/a"


def _pages(numbers: tuple[int, ...]) -> str:
    return ", ".join(str(n) for n in numbers)


def _offset_lines(figures: OffsetFigures) -> list[str]:
    depth = figures.pages * figures.page_size
    tile = "ok" if figures.tiled else f"FAILED (pages {_pages(figures.failed_tile)})"
    tail = "ok" if figures.tailed else f"FAILED (pages {_pages(figures.failed_tail)})"
    if figures.deep_hits == 0:
        tile = tail = "FAILED (the deep ranking is empty)"
    return [
        f"  offsets: {figures.pages} pages of {figures.page_size} at offsets 0..{depth - figures.page_size}, "
        f"ranked_at {figures.ranked_at}; deep call (limit {depth}) {figures.deep_hits} hits "
        f"in {figures.deep_ms:.1f} ms",
        f"    pages tile the single deep ranking byte for byte: {tile}",
        f"    each page is the tail of the call of its own depth byte for byte: {tail}",
        "    page ms by offset: " + " ".join(f"{ms:.1f}" for ms in figures.page_ms),
        "    own-depth call ms: " + " ".join(f"{ms:.1f}" for ms in figures.tail_ms),
    ]


def _checkpoint_lines(figures: CheckpointFigures, k: int) -> list[str]:
    base = figures.baseline
    insert = f"{figures.step:,} in {figures.ingest_s:.2f} s = {figures.ingest_rate:,.0f} drawers/s"
    if base is not None:
        faster = _ratio(base.insert_rate, figures.ingest_rate)
        insert += f" | raw SQLite batched insert {base.insert_rate:,.0f} rows/s ({faster} the store's rate)"
    lines = [
        f"checkpoint {figures.drawers:,} drawers",
        f"  ingest: {insert}",
        f"  open (close + reopen): {figures.open_ms:.1f} ms | first search (embedding cache fill): "
        f"{figures.first_search_ms:.1f} ms | peak RSS {figures.peak_rss_mb:,.0f} MB",
    ]
    for scope in figures.scopes:
        line = (
            f"  {scope.scope:<8} R@{k} {scope.hits}/{scope.total} ({_percent(scope.hits, scope.total)}) | "
            f"p50 {scope.p50_ms:.1f} ms p95 {scope.p95_ms:.1f} ms over {scope.total} queries"
        )
        if base is not None and scope.scope == "unscoped":
            line += (
                f" | raw numpy scan of {base.vectors:,} x 384 float32 p50 {base.scan_p50_ms:.3f} ms "
                f"p95 {base.scan_p95_ms:.3f} ms ({_ratio(scope.p50_ms, base.scan_p50_ms)} at p50)"
            )
        lines.append(line)
    if figures.offsets is not None:
        lines.extend(_offset_lines(figures.offsets))
    return lines


def format_scale(report: ScaleReport) -> list[str]:
    """The printed report: settings, then one block per checkpoint with exact hits/total and raw baselines."""
    settings, spec = report.settings, report.settings.spec
    lines = [
        f"synthetic scale: seed {spec.seed}, {spec.wings} wings x {spec.rooms} rooms, vocabulary {spec.vocabulary} "
        f"(zipf {spec.zipf}), {spec.needles_per_step} needles per growth step",
        f"vault: {settings.level}, hash embedder, batches of {settings.batch}; search limit {settings.k}; "
        "room scope = wing + room",
    ]
    for figures in report.checkpoints:
        lines.extend(_checkpoint_lines(figures, settings.k))
    lines.append(f"wall-clock: {report.wall_s:.1f} s")
    return lines


def _checkpoint_json(figures: CheckpointFigures) -> dict[str, Any]:
    out = asdict(figures)
    out["ingest_rate"] = figures.ingest_rate
    if figures.offsets is not None:
        out["offsets"]["tiled"] = figures.offsets.tiled
        out["offsets"]["tailed"] = figures.offsets.tailed
    return out


def scale_json(report: ScaleReport, header: dict[str, str]) -> dict[str, Any]:
    """The full report as JSON-ready data: the run header, settings and every raw figure."""
    settings = asdict(report.settings)
    return {
        "run": header,
        "settings": settings,
        "checkpoints": [_checkpoint_json(figures) for figures in report.checkpoints],
        "wall_s": report.wall_s,
    }
