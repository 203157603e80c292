"""The vocabulary index: exact, morphological and typo channels, and the bad-input refusal."""

import pytest
from undercroft_core.errors import InvalidInput
from undercroft_core.language import VocabularyIndex, match_terms, resolve_language, terms, tokenize, typo_budget

DRAWER = "Yesterday the children were running to the market, and they have bought three books."


def test_matches_by_channel() -> None:
    index = VocabularyIndex(tokenize(DRAWER))
    resolution = resolve_language(DRAWER)
    matches = {m.query: m for m in match_terms(terms("child run market book buy"), index, resolution)}
    assert matches["market"].exact and not matches["market"].morph
    assert [(m.term, m.rule) for m in matches["child"].morph] == [("children", "irregular")]
    assert [(m.term, m.rule) for m in matches["run"].morph] == [("running", "suffix")]
    assert [(m.term, m.rule) for m in matches["book"].morph] == [("books", "suffix")]
    assert [(m.term, m.rule) for m in matches["buy"].morph] == [("bought", "irregular")]


def test_no_language_means_exact_only() -> None:
    index = VocabularyIndex(["running"])
    assert index.expand("run", None) == ()
    assert index.expand("run", "en")[0].term == "running"


def test_candidates_are_few() -> None:
    vocabulary = [f"w{i:05d}" for i in range(5000)] + ["running", "runs", "rung"]
    index = VocabularyIndex(vocabulary)
    assert index.candidates("run") == {"running", "runs", "rung"}
    assert {m.term for m in index.expand("run", "en")} == {"running", "runs"}


def test_typos() -> None:
    index = VocabularyIndex(["restaurant", "restaurants", "rest", "cat", "house"])
    assert index.typos("restuarant") == ("restaurant",)  # ten letters: two edits
    assert index.typos("restaurnt") == ("restaurant", "restaurants")
    assert index.typos("hosue") == ()  # five letters: one edit, and a transposition is two
    assert index.typos("cats") == ()  # short words get no budget
    assert [typo_budget(w) for w in ("cat", "house", "building", "restaurants")] == [0, 1, 1, 2]


def test_bad_vocabulary_entry_is_refused() -> None:
    with pytest.raises(InvalidInput, match="vocabulary entries must be str or Token, got int"):
        VocabularyIndex(["ok", 3])  # type: ignore[list-item]


def test_unknown_language_in_expand_is_refused() -> None:
    with pytest.raises(InvalidInput, match="unknown language 'zz'"):
        VocabularyIndex(["a"]).expand("a", "zz")
