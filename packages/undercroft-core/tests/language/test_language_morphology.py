"""The five pairwise rules, the keys, and the refusal of unknown languages."""

import pytest
from undercroft_core.errors import InvalidInput
from undercroft_core.language import LANGUAGES, lexeme_keys, normalize_term, same_lexeme


def _rule(first: str, second: str, language: str) -> str | None:
    return same_lexeme(normalize_term(first), normalize_term(second), language)


@pytest.mark.parametrize(
    ("first", "second", "language", "rule"),
    [
        ("run", "running", "en", "suffix"),
        ("Kind", "Kinder", "de", "suffix"),
        ("libro", "libri", "it", "substitutive"),
        ("бумага", "бумаги", "ru", "substitutive"),
        ("كتب", "مكتوب", "ar", "root"),
        ("ev", "evlerimizden", "tr", "agglutinative"),
        ("talo", "taloissa", "fi", "agglutinative"),
        ("go", "went", "en", "irregular"),
        ("child", "children", "en", "irregular"),
        ("Haus", "Häuser", "de", "suffix"),
    ],
)
def test_each_rule_admits_its_pairs(first: str, second: str, language: str, rule: str) -> None:
    assert _rule(first, second, language) == rule
    assert _rule(second, first, language) == rule


@pytest.mark.parametrize(
    ("first", "second", "language"),
    [
        ("πολύ", "πόλη", "el"),  # the false friend Snowball Greek merges
        ("schon", "schön", "de"),  # an umlaut is read only on an inflected form
        ("run", "rung", "en"),
        ("is", "i", "en"),
        ("كتب", "كلب", "ar"),
    ],
)
def test_false_friends_stay_apart(first: str, second: str, language: str) -> None:
    assert _rule(first, second, language) is None


def test_identical_terms_are_the_exact_channel_not_morphology() -> None:
    assert same_lexeme("run", "run", "en") is None


def test_the_table_decides_not_the_words() -> None:
    assert _rule("flow", "flower", "de") == "suffix"
    assert _rule("flow", "flower", "en") is None


def test_unknown_language_is_refused_with_the_supported_list() -> None:
    with pytest.raises(InvalidInput, match=r"unknown language 'xx': expected one of en, de"):
        same_lexeme("a", "b", "xx")


def test_nineteen_languages() -> None:
    assert len(LANGUAGES) == 19
    assert set(LANGUAGES) >= {"en", "de", "nl", "it", "es", "fr", "pt", "tr", "ru", "el", "hi", "ka", "ko", "ar"}


def test_a_morphological_pair_shares_a_key() -> None:
    for first, second in [("running", "run"), ("كتب", "مكتوب"), ("went", "go"), ("häuser", "haus")]:
        assert lexeme_keys(first) & lexeme_keys(second)
