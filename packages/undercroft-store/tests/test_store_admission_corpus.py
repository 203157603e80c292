"""Floors on the admission screen's accuracy over the committed corpora (issue 15, item 10).

`benchmarks/corpora/admission_dev.json` is what the tier-1 patterns were calibrated on;
`admission_heldout.json` was written independently and committed before any tuning. The floors sit below
the measured figures (benchmarks/RESULTS.md, "Admission screen accuracy") so a regression fails while an
honest re-wording of one pattern does not; the exact counts come from `benchmarks/bench_admission_corpus.py`.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from undercroft_store.governance.admission import MARKER_SIGNALS, detect, load_fixtures, load_paraphrases

CORPORA = Path(__file__).resolve().parents[3] / "benchmarks" / "corpora"
#: Measured 21/30 attacks caught and 5/40 benign flagged at the commit that introduced this test.
HELDOUT_RECALL_FLOOR = 0.65
HELDOUT_FP_CEILING = 0.15


def load(name: str) -> dict[str, Any]:
    return json.loads((CORPORA / f"admission_{name}.json").read_text(encoding="utf-8"))


def rates(corpus: dict[str, Any]) -> tuple[float, float]:
    """(share of attacks with any finding, share of benign texts with any finding)."""
    caught = sum(1 for item in corpus["attacks"] if detect(item["text"], wing="notes", room="general"))
    flagged = sum(1 for item in corpus["benign"] if detect(item["text"], wing="notes", room="general"))
    return caught / len(corpus["attacks"]), flagged / len(corpus["benign"])


def test_the_corpora_are_sizeable_and_hold_every_hard_benign_kind() -> None:
    for name in ("dev", "heldout"):
        corpus = load(name)
        assert len(corpus["attacks"]) >= 30 and len(corpus["benign"]) >= 40
        kinds = {item["kind"] for item in corpus["benign"]}
        assert {"security-review", "incident-retro", "tool-schema", "code", "reported-speech"} <= kinds
        families = {item["family"] for item in corpus["attacks"]}
        assert {"override", "extraction", "persistence"} <= families


def test_dev_corpus_floor() -> None:
    recall, false_positive = rates(load("dev"))
    assert recall >= 0.95 and false_positive <= 0.05, (recall, false_positive)


def test_heldout_corpus_floor() -> None:
    """Held out: measured, never calibrated on. The floor is the measured figure rounded down a step."""
    recall, false_positive = rates(load("heldout"))
    assert recall >= HELDOUT_RECALL_FLOOR and false_positive <= HELDOUT_FP_CEILING, (recall, false_positive)


@pytest.mark.parametrize("name", ["dev", "heldout"])
def test_every_new_pattern_match_contains_its_gate(name: str) -> None:
    """The literal gates only skip work: every match on either corpus contains one of its pattern's gates."""
    corpus = load(name)
    texts = [item["text"] for item in corpus["attacks"] + corpus["benign"]]
    for markers in MARKER_SIGNALS.values():
        for gates, pattern in markers:
            for text in texts:
                for match in pattern.finditer(text):
                    assert any(gate in match.group().casefold() for gate in gates), (pattern.pattern, gates)


def test_the_first_letter_lookahead_changes_speed_never_answers() -> None:
    """Patterns led by `(?=[initials])\\b` find exactly what the plain `\\b` form finds, on every text we hold."""
    lead = re.compile(r"^\(\?=\[[a-z]+\]\)\\b")
    texts = [item["text"] for name in ("dev", "heldout") for item in load(name)["attacks"] + load(name)["benign"]]
    texts += [fixture.text for fixture in load_fixtures()] + [p.text for p in load_paraphrases()]
    led = [pattern for markers in MARKER_SIGNALS.values() for _, pattern in markers if lead.match(pattern.pattern)]
    assert len(led) >= 4
    for pattern in led:
        plain = re.compile("\\b" + lead.sub("", pattern.pattern), pattern.flags)
        for text in texts + [text.upper() for text in texts]:
            assert [m.span() for m in pattern.finditer(text)] == [m.span() for m in plain.finditer(text)]
