"""The committed attack corpus: every fixture is flagged, and the similarity threshold is pinned from both sides."""

from __future__ import annotations

import json
from importlib import resources

import pytest
from undercroft_core.errors import InvalidInput
from undercroft_store.governance.admission import (
    FIXTURE_FAMILIES,
    MARKER_SIGNALS,
    SIMILARITY_THRESHOLD,
    FixtureIndex,
    Signal,
    default_fixture_index,
    detect,
    load_fixtures,
    load_paraphrases,
    parse_fixtures,
    parse_paraphrases,
    screen,
    word_windows,
)

FIXTURES = load_fixtures()
PARAPHRASES = load_paraphrases()
CLEAN = tuple(
    json.loads(
        resources.files("undercroft_store.governance.admission").joinpath("data").joinpath("clean.json").read_bytes()
    )["clean"]
)
MARKERS = {Signal.IMPERATIVE_INSTRUCTION, Signal.TOOL_CALL_SYNTAX, Signal.EXFILTRATION_MARKER, Signal.ENCODED_BLOB}


def test_corpus_is_large_and_varied() -> None:
    assert len(FIXTURES) >= 18
    assert {fixture.family for fixture in FIXTURES} == set(FIXTURE_FAMILIES)
    assert {fixture.language for fixture in FIXTURES} >= {"en", "de", "fr", "es", "it", "pt", "ru"}
    assert len(PARAPHRASES) >= 10


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda fixture: fixture.id)
def test_every_fixture_is_flagged_through_the_screen(fixture: object) -> None:
    decision = screen(fixture.text, wing="work", room="inbox", added_by="mcp")  # type: ignore[attr-defined]
    assert decision.flagged


@pytest.mark.parametrize("fixture", FIXTURES, ids=lambda fixture: fixture.id)
def test_every_fixture_trips_a_marker_even_without_its_own_corpus_entry(fixture: object) -> None:
    others = FixtureIndex([other for other in FIXTURES if other is not fixture])
    found = {f.signal for f in detect(fixture.text, wing="work", room="inbox", fixtures=others)}  # type: ignore[attr-defined]
    assert found & MARKERS


@pytest.mark.parametrize("paraphrase", PARAPHRASES, ids=lambda paraphrase: paraphrase.id)
def test_near_paraphrases_score_over_the_threshold(paraphrase: object) -> None:
    hit = default_fixture_index().best(paraphrase.text)  # type: ignore[attr-defined]
    assert hit is not None and hit.score >= SIMILARITY_THRESHOLD + 0.05


@pytest.mark.parametrize("paraphrase", PARAPHRASES, ids=lambda paraphrase: paraphrase.id)
def test_a_paraphrase_buried_in_a_benign_drawer_still_trips(paraphrase: object) -> None:
    benign = " ".join(CLEAN[:3])
    drawer = f"{benign}\n\n{paraphrase.text}\n\n{' '.join(CLEAN[3:6])}"  # type: ignore[attr-defined]
    found = {f.signal for f in detect(drawer, wing="work", room="inbox")}
    assert Signal.ATTACK_FIXTURE_SIMILARITY in found


def test_some_paraphrases_dodge_every_marker_and_only_similarity_catches_them() -> None:
    """Similarity still earns its place: some paraphrase trips it and no marker (issue 15 widened the
    markers to the paraphrased override shapes, so fewer paraphrases dodge them than the four of issue 9)."""
    dodgers = [
        p
        for p in PARAPHRASES
        if {f.signal for f in detect(p.text, wing="w", room="r")} == {Signal.ATTACK_FIXTURE_SIMILARITY}
    ]
    assert len(dodgers) >= 1


@pytest.mark.parametrize("text", CLEAN)
def test_clean_conversational_text_scores_under_the_threshold(text: str) -> None:
    hit = default_fixture_index().best(text)
    assert hit is not None and hit.score <= SIMILARITY_THRESHOLD - 0.05
    assert detect(text, wing="family", room="notes") == ()


def test_marker_gates_are_substrings_of_every_match() -> None:
    """The literal gates only skip work: every match of every pattern contains one of its gates."""
    texts = [f.text for f in FIXTURES] + [p.text for p in PARAPHRASES]
    checked = 0
    for markers in MARKER_SIGNALS.values():
        for gates, pattern in markers:
            for text in texts:
                for match in pattern.finditer(text):
                    assert any(gate in match.group().casefold() for gate in gates), (pattern.pattern, gates)
                    checked += 1
    assert checked > 40


def test_windows_cover_the_text_with_half_overlap() -> None:
    text = " ".join(f"w{i}" for i in range(60))
    spans = word_windows(text, 24)
    assert spans[0][0] == 0 and spans[-1][1] == len(text)
    assert len(spans) == 4
    assert word_windows("", 24) == [] and word_windows("one two", 24) == [(0, 7)]
    with pytest.raises(InvalidInput, match="window_words must be at least 2, got 1"):
        word_windows(text, 1)


@pytest.mark.parametrize(
    ("raw", "message"),
    [
        (b"\xff", "the fixture corpus is not UTF-8 JSON"),
        (b"[]", "must be an object with exactly the keys version and fixtures"),
        (b'{"version": 2, "fixtures": []}', "has version 2; this build reads version 1"),
        (b'{"version": 1, "fixtures": []}', "must list at least one entry under fixtures"),
        (b'{"version": 1, "fixtures": [{"id": "a"}]}', "entry 0 must have exactly the keys id, family, language, text"),
        (
            b'{"version": 1, "fixtures": [{"id": "a", "family": "x", "language": "en", "text": "t"}]}',
            "entry 0: unknown family 'x'",
        ),
        (
            b'{"version": 1, "fixtures": [{"id": "a", "family": "encoded", "language": "en", "text": " "}]}',
            "entry 0: text must be a non-empty string",
        ),
        (
            b'{"version": 1, "fixtures": [{"id": "a", "family": "encoded", "language": "en", "text": "t"},'
            b'{"id": "a", "family": "encoded", "language": "en", "text": "u"}]}',
            "repeats the id 'a'",
        ),
    ],
)
def test_malformed_fixture_documents_are_refused(raw: bytes, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        parse_fixtures(raw)


def test_a_paraphrase_of_an_unknown_fixture_is_refused() -> None:
    raw = b'{"version": 1, "paraphrases": [{"id": "p", "of": "nope", "text": "t"}]}'
    with pytest.raises(InvalidInput, match="paraphrases unknown fixture 'nope'"):
        parse_paraphrases(raw, FIXTURES)


def test_index_refuses_bad_construction() -> None:
    with pytest.raises(InvalidInput, match="a fixture index needs at least one fixture"):
        FixtureIndex([])
    with pytest.raises(InvalidInput, match=r"similarity threshold must be in \(0, 1\], got 1.5"):
        FixtureIndex(FIXTURES, threshold=1.5)
