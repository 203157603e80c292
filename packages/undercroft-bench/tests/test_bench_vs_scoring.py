"""`undercroft-bench vs`: timing capture, the synthetic loader and scorer, the LoCoMo pass-through, the CLI."""

import json
import pathlib

import pytest
from undercroft_bench import arms
from undercroft_bench.bm25 import make_bm25
from undercroft_bench.chunking import Chunk
from undercroft_bench.errors import ArmUnavailable, DataError, InvalidSetting, RetrieverFault
from undercroft_bench.locomo_data import parse_locomo
from undercroft_bench.locomo_eval import LocomoSettings, run_locomo
from undercroft_bench.main import main
from undercroft_bench.retriever import ArmContext
from undercroft_bench.vs import (
    TimedRetriever,
    Timings,
    format_vs_synthetic,
    load_synthetic,
    percentile,
    run_vs_locomo,
    run_vs_synthetic,
)
from undercroft_bench.vs_systems import resolve_system


class Ticks:
    """A clock advancing by the given steps, one per reading, so every duration is known exactly."""

    def __init__(self, *steps: float) -> None:
        self.now = 0.0
        self.steps = list(steps)

    def __call__(self) -> float:
        value = self.now
        if self.steps:
            self.now += self.steps.pop(0)
        return value


class Scripted:
    """A fake system: answers from a script of rankings keyed by question, reports a disk size."""

    def __init__(self, answers: dict[str, list[str]], disk: int | None = 4096) -> None:
        self.answers = answers
        self.indexed: list[str] = []
        if disk is not None:
            self.disk_bytes = lambda: disk

    def index(self, chunks) -> None:
        self.indexed = [chunk.chunk_id for chunk in chunks]

    def search(self, question: str, k: int) -> list[str]:
        return self.answers.get(question, [])[:k]


def test_percentile_is_nearest_rank() -> None:
    values = [float(v) for v in range(1, 21)]  # 1..20
    assert percentile(values, 0.5) == 10.0
    assert percentile(values, 0.95) == 19.0
    assert percentile(values, 1.0) == 20.0
    assert percentile([3.0, 1.0, 2.0], 0.5) == 2.0
    assert percentile([7.0], 0.95) == 7.0
    assert percentile([], 0.5) == 0.0
    with pytest.raises(InvalidSetting, match=r"percentile fraction must be in \(0, 1\], got 0"):
        percentile(values, 0)


def test_timed_retriever_records_each_call_exactly_and_passes_answers_through() -> None:
    timings = Timings()
    inner = Scripted({"q": ["b", "a"]})
    # readings: index start/end (2.0), search start/end (0.25), search start/end (0.75)
    timed = TimedRetriever(inner, timings, Ticks(2.0, 1.0, 0.25, 1.0, 0.75, 1.0))
    timed.index([Chunk("a", "x", "1", ()), Chunk("b", "y", "1", ())])
    assert timed.search("q", 5) == ["b", "a"]
    assert timed.search("other", 5) == []
    assert timings.index_seconds == [2.0]
    assert timings.search_seconds == [0.25, 0.75]
    assert timings.disk_bytes == [4096]
    summary = timings.summary()
    assert summary["search_seconds"] == 1.0 and summary["queries"] == 2
    assert summary["median_ms"] == 250.0 and summary["p95_ms"] == 750.0 and summary["mean_ms"] == 500.0
    assert summary["disk_bytes"] == 4096
    assert inner.indexed == ["a", "b"]


def test_disk_bytes_are_none_when_the_system_reports_none() -> None:
    timings = Timings()
    TimedRetriever(Scripted({}, disk=None), timings).index([])
    assert timings.summary()["disk_bytes"] is None


def _corpus(tmp_path: pathlib.Path, queries: object) -> pathlib.Path:
    for rel, text in {"a/one.md": "alpha", "a/two.md": "beta", "b/three.md": "gamma"}.items():
        path = tmp_path / "corpus" / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (tmp_path / "corpus" / "ignored.txt").write_text("not markdown")
    (tmp_path / "queries.json").write_text(json.dumps(queries))
    return tmp_path


QUERIES = [
    {"query": "q1", "target": "a/one.md"},
    {"query": "q2", "target": "a/two.md"},
    {"query": "q3", "target": "b/three.md"},
]


def test_load_synthetic_makes_one_chunk_per_markdown_file(tmp_path) -> None:
    corpus = load_synthetic(_corpus(tmp_path, QUERIES))
    assert [chunk.chunk_id for chunk in corpus.chunks] == ["a/one.md", "a/two.md", "b/three.md"]
    assert corpus.chunks[0].text == "alpha" and corpus.chunks[0].session_id == "a/one.md"
    assert [query.target for query in corpus.queries] == ["a/one.md", "a/two.md", "b/three.md"]


@pytest.mark.parametrize(
    ("queries", "message"),
    [
        ({"query": "q"}, "synthetic queries must be a JSON list"),
        ([{"query": "q1"}], "synthetic query 0 needs string 'query' and 'target'"),
        ([{"query": "q1", "target": "a/missing.md"}], "synthetic query 0 targets 'a/missing.md', which is not in"),
    ],
)
def test_load_synthetic_refuses_bad_queries(tmp_path, queries, message) -> None:
    with pytest.raises(DataError, match=message):
        load_synthetic(_corpus(tmp_path, queries))


def test_load_synthetic_refuses_a_folder_without_a_corpus(tmp_path) -> None:
    with pytest.raises(DataError, match=r"synthetic corpus folder not found: .*corpus"):
        load_synthetic(tmp_path)
    (tmp_path / "corpus").mkdir()
    with pytest.raises(DataError, match=r"synthetic corpus folder holds no \.md file"):
        load_synthetic(tmp_path)


def test_synthetic_scorer_counts_r5_and_r10_exactly(tmp_path) -> None:
    corpus = load_synthetic(_corpus(tmp_path, QUERIES))
    # q1: target first (hit at 5 and 10); q2: target absent; q3: target present but only the three exist
    fake = Scripted({"q1": ["a/one.md"], "q2": ["a/one.md", "b/three.md"], "q3": ["a/two.md", "b/three.md"]})
    report = run_vs_synthetic(corpus, "fake", lambda context: fake, clock=Ticks(*([0.5] * 20)))
    assert (report.at5.hits, report.at5.total, report.at10.hits, report.at10.total) == (2, 3, 2, 3)
    assert report.rankings[1] == ("q2", "a/two.md", ("a/one.md", "b/three.md"))
    # readings: outer start, index start, index end, outer end -> construction + index = 3 steps
    assert report.ingest_seconds == 1.5
    assert report.timings.index_seconds == [0.5]
    lines = format_vs_synthetic("fake", "a fake", report)
    assert "VS_RAW system=fake corpus=synthetic unit=file k=5 hits=2 total=3 (2/3 (66.67 %))" in lines
    assert lines[-1].startswith("VS_TIMING system=fake corpus=synthetic ingest_s=1.500 search_s=1.500 queries=3")
    assert lines[-1].endswith("disk_bytes=4096")


def test_synthetic_rank_position_decides_r5_against_r10(tmp_path) -> None:
    names = [f"d/{i:02d}.md" for i in range(12)]
    for name in names:
        path = tmp_path / "corpus" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(name)
    (tmp_path / "queries.json").write_text(json.dumps([{"query": "q", "target": names[6]}]))
    fake = Scripted({"q": names[:10]})
    report = run_vs_synthetic(load_synthetic(tmp_path), "fake", lambda context: fake)
    assert (report.at5.hits, report.at10.hits) == (0, 1)


def test_synthetic_scorer_refuses_an_id_never_given(tmp_path) -> None:
    corpus = load_synthetic(_corpus(tmp_path, QUERIES))
    fake = Scripted({"q1": ["?unmapped:/x.md"]})
    with pytest.raises(RetrieverFault, match=r"arm 'fake' returned chunk id '\?unmapped:/x.md'"):
        run_vs_synthetic(corpus, "fake", lambda context: fake)


TINY = [
    {
        "sample_id": "c1",
        "conversation": {
            "session_1": [{"speaker": "A", "text": "I adopted a dog named Rex", "dia_id": "D1:1"}],
            "session_2": [{"speaker": "B", "text": "The kitchen is blue now", "dia_id": "D2:1"}],
        },
        "qa": [
            {"question": "Which dog did A adopt?", "answer": "Rex", "evidence": ["D1:1"], "category": 1},
            {"question": "Kitchen colour?", "adversarial_answer": "red", "evidence": ["D2:1"], "category": 5},
            {"question": "Unanswerable?", "answer": "x", "evidence": [], "category": 3},
        ],
    }
]


def test_vs_locomo_is_the_locomo_instrument_plus_per_query_timings() -> None:
    conversations = parse_locomo(TINY)
    settings = LocomoSettings(arm="bm25", k=1, pool=5)
    report, timings = run_vs_locomo(conversations, settings, make_bm25)
    plain = run_locomo(conversations, settings)
    assert (report.session_total.hits, report.session_total.total) == (2, 2)
    assert [r.ranking for r in report.results] == [r.ranking for r in plain.results]
    assert len(timings.search_seconds) == 2  # the unevaluable question is not searched
    assert len(timings.index_seconds) == 1


def test_resolve_system_finds_arms_by_name_at_run_time(monkeypatch) -> None:
    assert resolve_system("bm25").factory is make_bm25
    monkeypatch.setitem(arms.ARMS, "undercroft", make_bm25)
    assert resolve_system("undercroft").factory is make_bm25
    monkeypatch.delitem(arms.ARMS, "undercroft")
    with pytest.raises(ArmUnavailable, match=r"needs the 'undercroft' arm in undercroft_bench\.arms\.ARMS"):
        resolve_system("undercroft")


def test_cli_vs_bm25_on_locomo_prints_raw_lines_and_writes_json(tmp_path, capsys) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(TINY))
    out = tmp_path / "vs.json"
    assert main(["vs", str(data), "--system", "bm25", "-k", "1", "--pool", "5", "--json", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("VS_RUN date=")
    assert "VS_RAW system=bm25 corpus=locomo unit=session k=1 category=total hits=2 total=2 (2/2 (100.00 %))" in printed
    assert any(line.startswith("VS_TIMING system=bm25 corpus=locomo ingest_s=") for line in printed)
    document = json.loads(out.read_text())
    assert document["system"] == "bm25" and document["session"]["hits"] == 2
    assert document["latency"]["queries"] == 2


def test_cli_vs_bm25_on_synthetic(tmp_path, capsys) -> None:
    folder = _corpus(tmp_path, [{"query": "alpha please", "target": "a/one.md"}])
    out = tmp_path / "vs.json"
    assert main(["vs", str(folder), "--system", "bm25", "--corpus", "synthetic", "--json", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert "VS_RAW system=bm25 corpus=synthetic unit=file k=5 hits=1 total=1 (1/1 (100.00 %))" in printed
    document = json.loads(out.read_text())
    assert document["r_at_10"] == {"hits": 1, "total": 1}
    assert document["queries"][0]["ranking"] == ["a/one.md"]
    assert len(document["source"]["queries_sha256"]) == 64


def test_cli_vs_refusals_are_typed_and_precise(tmp_path, capsys) -> None:
    data = tmp_path / "tiny.json"
    data.write_text(json.dumps(TINY))
    assert main(["vs", str(data), "--system", "mempalace"]) == 1
    assert "error: --system mempalace needs --python PATH" in capsys.readouterr().err
    assert main(["vs", str(data), "--system", "bm25", "-k", "0"]) == 1
    assert "error: -k must be at least 1, got 0" in capsys.readouterr().err
    assert main(["vs", str(tmp_path), "--system", "bm25", "--corpus", "synthetic"]) == 1
    assert "error: synthetic corpus folder not found" in capsys.readouterr().err


def test_arm_context_is_what_the_factory_receives() -> None:
    seen: list[ArmContext] = []

    def factory(context: ArmContext) -> Scripted:
        seen.append(context)
        return Scripted({})

    run_vs_locomo(parse_locomo(TINY), LocomoSettings(arm="fake", k=1, pool=5), factory)
    assert [context.scope_id for context in seen] == ["c1"]


def test_system_reported_seconds_are_summed_when_present() -> None:
    timings = Timings()
    first, second = Scripted({}), Scripted({})
    first.driver_search_seconds, second.driver_search_seconds = 0.25, 0.5
    first.driver_index_seconds = 2.0
    TimedRetriever(first, timings)
    TimedRetriever(second, timings)
    summary = timings.summary()
    assert summary["system_search_seconds"] == 0.75
    assert summary["system_index_seconds"] == 2.0
    assert Timings().summary()["system_search_seconds"] is None
