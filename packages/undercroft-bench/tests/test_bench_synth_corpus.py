"""The synthetic corpus: same seed, same bytes (golden digest); text shape; needles unique and placed."""

import re

import pytest
from undercroft_bench.errors import InvalidSetting
from undercroft_bench.synth_corpus import (
    FILED_BASE,
    SynthSpec,
    corpus_digest,
    filed_at,
    needle_positions,
    synth_drawer,
)

# Pinned: a change to the vocabulary, the Zipf sampler, the needle text or the placement changes these bytes,
# and with them every figure measured on the corpus. Change it only on purpose, and say so in RESULTS.md.
GOLDEN_200 = "4e35e4807dcbd76ba04d4cb9a8d2ef4a89528188b5d4bedc87a7c9ad2b602a02"
GOLDEN_200_SEED_12 = "b0eb036d42bd0331dcae59e5ee238c5248426a24481e64105d5d58194d84db64"


def test_golden_digest_and_seed_sensitivity() -> None:
    assert corpus_digest(SynthSpec(), 200) == GOLDEN_200
    assert corpus_digest(SynthSpec(seed=12), 200) == GOLDEN_200_SEED_12
    assert corpus_digest(SynthSpec(zipf=1.2), 200) != GOLDEN_200


def test_drawer_is_a_pure_function_of_spec_and_index() -> None:
    spec = SynthSpec()
    first = [synth_drawer(spec, index) for index in (5, 999_999, 17)]
    again = [synth_drawer(SynthSpec(), index) for index in (17, 5, 999_999)]
    assert first == [again[1], again[2], again[0]]
    assert synth_drawer(spec, 0).text.startswith("Beaceankis beaceankis damraim beaceankis cinsoutsean")
    assert (synth_drawer(spec, 0).wing, synth_drawer(spec, 0).room) == ("wing-07", "room-06")


def test_text_is_600_to_800_characters_of_sentences_with_zipf_frequencies() -> None:
    spec = SynthSpec()
    needles = needle_positions(spec, 0, 400)
    drawers = [synth_drawer(spec, index, needles.get(index)) for index in range(400)]
    assert all(600 <= len(drawer.text) <= 800 for drawer in drawers)
    assert all(drawer.text.endswith(".") and drawer.text[0].isupper() for drawer in drawers)
    counts: dict[str, int] = {}
    for drawer in drawers:
        for word in re.findall(r"[a-z]+", drawer.text.lower()):
            counts[word] = counts.get(word, 0) + 1
    ranked = [counts.get(word, 0) for word in spec.words[:50]]
    # Zipf: the most frequent word is several times the tenth, which is several times the fiftieth.
    assert ranked[0] > 3 * ranked[9] > 0
    assert ranked[9] > 2 * ranked[49]


def test_filing_time_grows_with_the_index() -> None:
    assert filed_at(0) == "2024-01-01T00:00:00Z" and FILED_BASE.year == 2024
    assert filed_at(86_401) == "2024-01-02T00:00:01Z"
    assert synth_drawer(SynthSpec(), 3).filed_at == filed_at(3)


def test_needles_are_unique_placed_round_robin_and_carried_verbatim() -> None:
    spec = SynthSpec(wings=3, rooms=2, needles_per_step=12)
    first = needle_positions(spec, 0, 1000)
    second = needle_positions(spec, 1000, 3000, first=len(first))
    assert len(first) == 12 and len(second) == 12
    assert all(0 <= index < 1000 for index in first) and all(1000 <= index < 3000 for index in second)
    assert sorted(first.values()) == list(range(12)) and sorted(second.values()) == list(range(12, 24))
    needles = [synth_drawer(spec, index, number).needle for index, number in {**first, **second}.items()]
    assert all(needle is not None for needle in needles)
    names = {" ".join(n.query.split()[2:4]) for n in needles if n is not None}
    assert len(names) == 24
    vocabulary = set(spec.words)
    assert not any(part.lower() in vocabulary for name in names for part in name.split())
    placed = {(n.wing, n.room) for n in needles if n is not None}
    assert placed == {(f"wing-{w:02d}", f"room-{r:02d}") for w in range(3) for r in range(2)}
    for index, number in first.items():
        drawer = synth_drawer(spec, index, number)
        assert drawer.needle is not None and drawer.needle.fact in drawer.text
        assert (drawer.wing, drawer.room) == (drawer.needle.wing, drawer.needle.room)
        assert 600 <= len(drawer.text) <= 800


def test_needle_positions_refuse_an_empty_step_and_are_seeded() -> None:
    spec = SynthSpec()
    assert needle_positions(spec, 0, 500) == needle_positions(SynthSpec(), 0, 500)
    assert needle_positions(spec, 0, 500) != needle_positions(SynthSpec(seed=2), 0, 500)
    assert len(needle_positions(spec, 0, 7)) == 7  # a step smaller than needles_per_step: every drawer
    with pytest.raises(InvalidSetting, match=r"0 <= start < stop, got \[10, 10\)"):
        needle_positions(spec, 10, 10)


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        (SynthSpec(wings=0), "--wings must be an integer of at least 1, got 0"),
        (SynthSpec(rooms=-1), "--rooms must be an integer of at least 1, got -1"),
        (SynthSpec(vocabulary=10), "--vocabulary must be an integer of at least 100, got 10"),
        (SynthSpec(needles_per_step=-2), "--needles must be an integer of at least 0, got -2"),
        (SynthSpec(zipf=3.0), "--zipf must be from 0.5 to 2.0, got 3.0"),
    ],
)
def test_spec_refusals_name_the_setting(spec: SynthSpec, message: str) -> None:
    with pytest.raises(InvalidSetting, match=re.escape(message)):
        spec.validate()
