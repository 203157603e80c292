"""Stop words: every table's function words and more, never a topic word, and they never vote."""

from __future__ import annotations

import pytest
from undercroft_core.errors import InvalidInput
from undercroft_core.language import (
    LANGUAGES,
    content_words,
    function_words,
    resolve_language,
    stop_words,
    without_words,
)


@pytest.mark.parametrize("language", LANGUAGES)
def test_every_table_stops_at_least_its_function_words(language: str) -> None:
    assert function_words(language) <= stop_words(language)


def test_english_stops_the_shared_closed_class_and_the_clitic_pieces() -> None:
    english = stop_words("en")
    assert {"a", "an", "in", "on", "it", "is", "did", "how", "where", "why", "my", "her"} <= english
    assert {"s", "t", "d", "ll", "m", "re", "ve"} <= english  # it's, don't, I'd, we'll, I'm, you're, I've
    assert not {"turtles", "camping", "tournament", "march", "may", "will"} & (english - function_words("en"))
    assert english - function_words("en")  # the extension exists


def test_the_extension_does_not_vote() -> None:
    # Eight English stop words that are not function words: resolution still hears no decisive vote.
    assert resolve_language("a an it is in on my how").language is None
    assert resolve_language("the and of to was that with").language == "en"


def test_unknown_language_is_refused_with_the_known_ones() -> None:
    with pytest.raises(InvalidInput, match=r"unknown language 'xx': expected one of en, "):
        stop_words("xx")
    with pytest.raises(InvalidInput, match="unknown language 'EN'"):
        function_words("EN")


def test_content_words_keep_order_repeats_and_case() -> None:
    closed = stop_words("en")
    words = ["What", "did", "Nate", "win", "and", "win", "in", "January"]
    assert content_words(words, closed) == ["Nate", "win", "win", "January"]


def test_a_question_of_stop_words_only_stays_whole() -> None:
    words = ["what", "is", "it"]
    assert content_words(words, stop_words("en")) == words
    assert content_words([], stop_words("en")) == []


def test_without_words_cuts_only_the_closed_spans_and_keeps_the_rest_as_written() -> None:
    closed = function_words("en")
    assert without_words("What did Nate win at the tournament?", closed).split() == [
        "did",
        "Nate",
        "win",
        "at",
        "tournament?",
    ]
    # Han reads in overlapping bigrams: cutting by span keeps the run whole, re-joining tokens would not.
    assert "東京都" in without_words("the 東京都 office", closed)
    assert without_words("what was there", closed) == "what was there"  # nothing else: unchanged
    assert without_words("turtles and snakes", frozenset()) == "turtles and snakes"
