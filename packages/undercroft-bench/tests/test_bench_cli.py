"""The `undercroft-bench` program: the smoke path on the schema fixtures, the dev split, typed failures."""

import json
import pathlib
import re

import pytest
from undercroft_bench.main import main

# The evaluation data lives beside the repository, in ../shared/data (never committed here); the first ancestor
# holding it wins, so a worktree nested one level deeper measures instead of skipping.
_HERE = pathlib.Path(__file__).resolve()
DATA = next(
    (root / "shared" / "data" for root in _HERE.parents if (root / "shared" / "data").is_dir()),
    _HERE.parents[3].parent / "shared" / "data",
)
LOCOMO_FIXTURE = DATA / "schema-fixtures" / "locomo_sample.synthetic.json"
LME_FIXTURE = DATA / "schema-fixtures" / "longmemeval_sample.synthetic.json"
LOCOMO_DEV = DATA / "locomo" / "locomo-dev.json"


def _need(path: pathlib.Path) -> None:
    if not path.is_file():
        pytest.skip(f"data file not present: {path} (see ../shared/data/README.md)")


def _write(tmp_path: pathlib.Path, document: object) -> pathlib.Path:
    path = tmp_path / "data.json"
    path.write_text(json.dumps(document), encoding="utf-8")
    return path


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


def test_locomo_on_inline_data_prints_and_writes_json(tmp_path, capsys) -> None:
    out = tmp_path / "out.json"
    assert main(["locomo", str(_write(tmp_path, TINY)), "-k", "1", "--pool", "5", "--json", str(out)]) == 0
    printed = capsys.readouterr().out.splitlines()
    assert "category 1: session R@1 1/1 (100.00 %) | turn R@1 1/1 (100.00 %)" in printed
    assert "total (2 evaluable of 3): session R@1 2/2 (100.00 %) | turn R@1 2/2 (100.00 %)" in printed
    assert any(line.startswith("ingest: ") for line in printed)
    assert any(line.startswith("search: ") and "ms per query | 2 queries" in line for line in printed)
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["settings"]["k"] == 1 and document["settings"]["arm"] == "bm25"
    assert len(document["source"]["sha256"]) == 64
    assert [q["session_hit"] for q in document["questions"]] == [True, True, None]


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["-k", "0"], "-k must be at least 1, got 0"),
        (["--pool", "3"], r"--pool must be at least -k \(10\), got 3"),
    ],
)
def test_locomo_run_failures_exit_1(tmp_path, capsys, extra, message) -> None:
    assert main(["locomo", str(_write(tmp_path, TINY)), *extra]) == 1
    err = capsys.readouterr().err
    assert err.startswith("undercroft-bench: error: ")
    assert re.search(message, err), err


def test_missing_file_and_unknown_arm(tmp_path, capsys) -> None:
    assert main(["locomo", str(tmp_path / "absent.json")]) == 1
    assert "LoCoMo file not found" in capsys.readouterr().err
    with pytest.raises(SystemExit) as exited:
        main(["locomo", str(tmp_path / "absent.json"), "--arm", "nope"])
    assert exited.value.code == 2


def test_locomo_smoke_fixture_scores_every_evaluable_question(capsys) -> None:
    # No wall-clock bound here: a loaded machine fails it spuriously; RESULTS.md carries the timings.
    _need(LOCOMO_FIXTURE)
    assert main(["locomo", str(LOCOMO_FIXTURE)]) == 0
    printed = capsys.readouterr().out
    assert "category single-hop: session R@10 1/1" in printed
    assert "total (3 evaluable of 4)" in printed


def test_longmemeval_fixture(tmp_path, capsys) -> None:
    _need(LME_FIXTURE)
    out = tmp_path / "lme.json"
    assert main(["longmemeval", str(LME_FIXTURE), "--json", str(out)]) == 0
    assert "total (3 evaluable of 3): R@5" in capsys.readouterr().out
    assert json.loads(out.read_text(encoding="utf-8"))["session"]["total"] == 3


def test_locomo_dev_split_bm25_and_random(tmp_path, capsys) -> None:
    _need(LOCOMO_DEV)
    out = tmp_path / "dev.json"
    assert main(["locomo", str(LOCOMO_DEV), "--json", str(out)]) == 0
    printed = capsys.readouterr().out
    # Pinned: the dev split's counts, and bm25's exact figure under the protocol (a regression pin).
    assert "evaluable: 1155 of 1157 questions (2 without a parseable evidence session; 1 evidence tokens" in printed
    assert "total (1155 evaluable of 1157): session R@10 1093/1155 (94.63 %)" in printed
    document = json.loads(out.read_text(encoding="utf-8"))
    assert document["counts"]["chunks"] == 731
    assert sum(c["total"] for c in document["session"]["by_category"].values()) == 1155
    assert main(["locomo", str(LOCOMO_DEV), "--arm", "random", "--json", str(out)]) == 0
    floor = json.loads(out.read_text(encoding="utf-8"))["session"]
    assert 0.3 < floor["hits"] / floor["total"] < 0.6
