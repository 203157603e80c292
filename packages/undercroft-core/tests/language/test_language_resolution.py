"""Language resolution: declared, then script, then a decisive function-word vote."""

import pytest
from undercroft_core.errors import InvalidInput
from undercroft_core.language import resolve_counts, resolve_language, term_counts


def test_declared_wins_over_everything() -> None:
    resolution = resolve_language("Der Hund und die Katze sind nicht hier", declared="nl")
    assert (resolution.language, resolution.source) == ("nl", "declared")


@pytest.mark.parametrize(
    ("text", "language", "approximate"),
    [
        ("Ο δρόμος είναι μακρύς", "el", False),
        ("ქალაქი დიდია", "ka", False),
        ("학교에서 공부했다", "ko", False),
        ("Бумаги лежат на столе", "ru", True),
        ("लड़के घर गए", "hi", True),
        # Arabic is the only Arabic-script table (Persian and Urdu share the script: approximate)
        ("هذا الكتاب مكتوب بخط جميل.", "ar", True),
    ],
)
def test_script_settles(text: str, language: str, approximate: bool) -> None:
    resolution = resolve_language(text)
    assert (resolution.language, resolution.source, resolution.approximate) == (language, "script", approximate)


def test_function_words_vote_decisively() -> None:
    resolution = resolve_language("Der Hund und die Katze sind nicht im Haus, aber der Vogel ist da.")
    assert (resolution.language, resolution.source) == ("de", "function_words")


def test_fewer_than_three_hits_say_nothing() -> None:
    resolution = resolve_language("Kinder und Hunde")
    assert (resolution.language, resolution.source) == (None, "none")


def test_an_even_vote_says_nothing() -> None:
    # three English and three German function words: no language has twice the runner-up
    resolution = resolve_language("the and was der und nicht")
    assert resolution.language is None
    assert dict(resolution.votes) == {"en": 3, "de": 3}


def test_a_settling_script_applies_to_its_own_tokens_in_any_drawer() -> None:
    resolution = resolve_language("The word was δρόμος and this is the road", declared=None)
    assert resolution.language == "en"
    assert resolution.language_for("greek") == "el"
    assert resolution.language_for("latin") == "en"
    assert resolution.language_for("arabic") == "ar"
    assert resolution.language_for("hebrew") is None


def test_unknown_declared_language_is_refused() -> None:
    with pytest.raises(InvalidInput, match="unknown language 'klingon'"):
        resolve_language("text", declared="klingon")


def test_counts_resolve_as_the_text_does() -> None:
    text = "Der Hund und die Katze sind nicht im Haus, aber der Vogel ist da."
    assert resolve_counts(*term_counts(text)) == resolve_language(text)
    assert resolve_counts({}, {}, declared="it").source == "declared"


def test_a_one_sentence_drawer_leans_only_when_asked_and_only_without_rival() -> None:
    words, scripts = term_counts("Die Kinder spielen im Garten.")
    assert resolve_counts(words, scripts).language is None  # one hit: the request-level rule says nothing
    leaning = resolve_counts(words, scripts, lean=True)
    assert (leaning.language, leaning.source, leaning.approximate) == ("de", "function_words", True)
    # three hits decide as before, not approximate
    decided = resolve_counts(*term_counts("Die Kinder spielen im Garten und der Hund schläft."), lean=True)
    assert (decided.language, decided.approximate) == ("de", False)
    # a tie (one English, one German word) leans nowhere
    assert resolve_counts(*term_counts("the Kinder und"), lean=True).language is None
    assert resolve_counts(*term_counts("lorem ipsum"), lean=True).language is None
