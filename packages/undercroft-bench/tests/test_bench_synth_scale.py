"""The synthetic-scale instrument: needles found at a tiny scale, the paging check, the CLI and its refusals."""

import json
import re
from dataclasses import dataclass

import pytest
from undercroft_bench.errors import InvalidSetting
from undercroft_bench.main import main
from undercroft_bench.synth import ScaleSettings, measure_offsets, parse_checkpoints, run_scale
from undercroft_bench.synth_baseline import raw_insert_rate, raw_scan_ms
from undercroft_bench.synth_corpus import SynthSpec


def test_needles_are_found_and_pages_tile_on_a_tiny_vault() -> None:
    settings = ScaleSettings(
        checkpoints=(250, 500), spec=SynthSpec(needles_per_step=6), offsets=3, page_size=10, batch=200
    )
    report = run_scale(settings)
    assert [c.drawers for c in report.checkpoints] == [250, 500]
    assert [c.step for c in report.checkpoints] == [250, 250]
    for checkpoint, planted in zip(report.checkpoints, (6, 12), strict=True):
        assert [(s.scope, s.hits, s.total) for s in checkpoint.scopes] == [
            ("unscoped", planted, planted),
            ("wing", planted, planted),
            ("room", planted, planted),
        ]
        assert all(0 < s.p50_ms <= s.p95_ms for s in checkpoint.scopes)
        assert checkpoint.ingest_s > 0 and checkpoint.peak_rss_mb > 10
        assert checkpoint.baseline is not None and checkpoint.baseline.vectors == checkpoint.drawers
        assert checkpoint.baseline.rows == 250 and checkpoint.baseline.insert_rate > 0
        offsets = checkpoint.offsets
        assert offsets is not None and offsets.deep_hits == 30 and offsets.tailed
    # At 250 drawers the smallest pool (256) holds the whole vault: every page is a slice of one ranking.
    first = report.checkpoints[0].offsets
    assert first is not None and first.tiled and first.ranked_at == "2024-01-01T00:04:09Z"


@dataclass(frozen=True)
class _Hit:
    name: str

    def to_dict(self) -> dict[str, object]:
        return {"id": self.name}


@dataclass(frozen=True)
class _Result:
    hits: tuple[_Hit, ...]


class _DriftingSearcher:
    """Ranks 0..n-1, except that any page starting at offset 10 comes back with two hits swapped."""

    def search(self, request):  # type: ignore[no-untyped-def]
        names = [f"d{rank}" for rank in range(request.offset, request.offset + request.limit)]
        if request.offset == 10:
            names[0], names[1] = names[1], names[0]
        return _Result(tuple(_Hit(name) for name in names))


def test_offsets_check_names_the_pages_that_do_not_tile() -> None:
    figures = measure_offsets(_DriftingSearcher(), "q", drawers=100, pages=4, page_size=10)  # type: ignore[arg-type]
    assert figures.failed_tile == (1,) and figures.failed_tail == (1,)
    assert not figures.tiled and not figures.tailed
    assert figures.deep_hits == 40 and len(figures.page_ms) == 4 and figures.ranked_at == "2024-01-01T00:01:39Z"


def test_parse_checkpoints() -> None:
    assert parse_checkpoints("10000,100k, 1M") == (10_000, 100_000, 1_000_000)
    for text, message in [
        ("10k,abc", "'abc' is not a drawer count"),
        ("100,50", "strictly increasing"),
        ("5", "from 10 to 10,000,000"),
        ("20m", "from 10 to 10,000,000"),
        ("", "'' is not a drawer count"),
    ]:
        with pytest.raises(InvalidSetting, match=re.escape(message)):
            parse_checkpoints(text)


def test_raw_baselines_measure_what_they_say() -> None:
    assert len(raw_scan_ms(300, 4, seed=1)) == 4
    assert raw_insert_rate(500, 100) > 0


def test_cli_runs_prints_and_writes_json(tmp_path, capsys) -> None:
    out = tmp_path / "scale.json"
    argv = ["scale", "--checkpoints", "120", "--needles", "3", "--offsets", "2", "--json", str(out)]
    assert main(argv) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("SYNTH_RUN date=")
    assert "checkpoint 120 drawers" in printed
    assert any(line.startswith("  unscoped R@5 3/3 (100.00 %)") and "raw numpy scan of 120" in line for line in printed)
    assert "    pages tile the single deep ranking byte for byte: ok" in printed
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["settings"]["checkpoints"] == [120]
    [checkpoint] = document["checkpoints"]
    assert checkpoint["scopes"][2] == {**checkpoint["scopes"][2], "scope": "room", "hits": 3, "total": 3}
    assert checkpoint["offsets"]["tiled"] is True and checkpoint["baseline"]["rows"] == 120


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--checkpoints", "1k,500"], "--checkpoints must be strictly increasing positive counts, got '1k,500'"),
        (["--checkpoints", "ten"], "--checkpoints: 'ten' is not a drawer count"),
        (["--needles", "0"], "--needles must be at least 1"),
        (["-k", "0"], "-k must be an integer from 1 to 1000, got 0"),
        (["--batch", "20000"], "--batch must be an integer from 1 to 10000, got 20000"),
        (["--offsets", "-1"], "--offsets must be an integer from 0 to 1000, got -1"),
        (["--level", "plain"], "--level must be sealed or hmac-only, got 'plain'"),
        (["--wings", "0"], "--wings must be an integer of at least 1, got 0"),
        (["--zipf", "9"], "--zipf must be from 0.5 to 2.0, got 9.0"),
    ],
)
def test_cli_refusals_exit_1_with_a_message(capsys, extra, message) -> None:
    assert main(["synth", "--checkpoints", "100", *extra]) == 1
    captured = capsys.readouterr()
    assert captured.err.startswith("undercroft-bench: error: ")
    assert message in captured.err, captured.err
    assert "SYNTH_RUN" not in captured.out  # refused before anything ran
