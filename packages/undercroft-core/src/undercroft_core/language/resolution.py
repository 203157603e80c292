"""Which language's table applies: declared, else settled by script, else voted by function words.

Three sources, strongest first. A declaration on the request is a statement about the corpus
and wins. A script used by one language apiece (Greek, Georgian, Hangul) settles it; Cyrillic,
Devanagari and Arabic get the table of the one language among the nineteen written in them
(Russian, Hindi, Arabic), labelled approximate because other languages share the script.
Otherwise the drawer's own closed-class function words vote, decisively only: at least three
hits and twice the runner-up, else nothing. Nothing is derived from the shape of a word.

:func:`resolve_counts` is the same resolution over counts a caller already holds (a search
cache's bag of terms); with ``lean=True`` a drawer too short for three hits may still lean.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, Literal

from undercroft_core.language._internal.language_table import TABLES
from undercroft_core.language.morphology import require_language
from undercroft_core.language.tokens import Token, term_counts

__all__ = [
    "MIN_VOTES",
    "SCRIPT_LANGUAGES",
    "LanguageResolution",
    "ResolutionSource",
    "resolve_counts",
    "resolve_language",
]

ResolutionSource = Literal["declared", "script", "function_words", "none"]

#: Scripts that settle the table by themselves: (language, approximate).
SCRIPT_LANGUAGES: Final[dict[str, tuple[str, bool]]] = {
    "greek": ("el", False),
    "georgian": ("ka", False),
    "hangul": ("ko", False),
    "cyrillic": ("ru", True),
    "devanagari": ("hi", True),
    # The only Arabic-script table; Persian and Urdu share the script, hence approximate.
    "arabic": ("ar", True),
}

#: A function-word vote is decisive from this many hits (and twice the runner-up).
MIN_VOTES: Final = 3

_LETTERED: Final = frozenset(
    {"latin", "greek", "cyrillic", "arabic", "hebrew", "devanagari", "georgian", "hangul", "han", "thai", "other"}
)
_VOTERS: Final[dict[str, tuple[str, ...]]] = {}
for _code, _table in TABLES.items():
    for _word in _table.function_words:
        _VOTERS[_word] = (*_VOTERS.get(_word, ()), _code)


_VOTER_WORDS: Final = frozenset(_VOTERS)


@dataclass(frozen=True, slots=True)
class LanguageResolution:
    """The language a drawer (or request) resolved to, where it came from, and the vote."""

    language: str | None
    source: ResolutionSource
    approximate: bool = False
    votes: tuple[tuple[str, int], ...] = ()

    def language_for(self, script: str) -> str | None:
        """The table that applies to a token written in ``script`` (None: exact matching only).

        A script that settles its language always does, so a Greek token in a German drawer is
        still read as Greek; otherwise the drawer's language applies if it is written in that
        script.
        """
        settled = SCRIPT_LANGUAGES.get(script)
        if self.language is not None and TABLES[self.language].script == script:
            return self.language
        if settled is not None:
            return settled[0]
        return None


def _vote(counts: Mapping[str, int]) -> Counter[str]:
    # Each distinct function word credits its languages with its count.
    votes: Counter[str] = Counter()
    # A set intersection (in C) finds the few function words among a drawer's distinct terms.
    for word in _VOTER_WORDS.intersection(counts):
        for code in _VOTERS[word]:
            votes[code] += counts[word]
    return votes


def resolve_language(text_or_tokens: str | Iterable[Token], declared: str | None = None) -> LanguageResolution:
    """Resolve which language's table applies to a drawer.

    ``declared`` (a code from :data:`~undercroft_core.language.morphology.LANGUAGES`) wins
    outright; an unknown code raises :class:`~undercroft_core.errors.InvalidInput`.
    """
    if declared is not None:
        require_language(declared)
        return LanguageResolution(declared, "declared")
    if isinstance(text_or_tokens, str):
        # The bulk path: counts without building a token each.
        words, scripts = term_counts(text_or_tokens)
    else:
        tokens = list(text_or_tokens)
        scripts = Counter(token.script for token in tokens)
        words = Counter(token.text for token in tokens)
    return resolve_counts(words, scripts)


def resolve_counts(
    words: Mapping[str, int], scripts: Mapping[str, int], declared: str | None = None, *, lean: bool = False
) -> LanguageResolution:
    """Resolve a language from term counts and tokens per script (as :func:`resolve_language` does).

    Script keys that are not letters ("number") are ignored; ties between scripts go to the one
    seen first, so pass them in first-seen order. With ``lean``, a vote short of three hits that
    still has twice the runner-up resolves too, labelled ``approximate``: how search reads a
    one-sentence drawer ("Die Kinder spielen im Garten." carries one German function word and
    nothing else), never how a request is resolved.
    """
    if declared is not None:
        require_language(declared)
        return LanguageResolution(declared, "declared")
    lettered = [(script, count) for script, count in scripts.items() if script in _LETTERED and count > 0]
    if lettered:
        # max keeps the first of equal counts, as Counter.most_common does.
        dominant = lettered[0][0] if len(lettered) == 1 else max(lettered, key=lambda item: item[1])[0]
        settled = SCRIPT_LANGUAGES.get(dominant)
        if settled is not None:
            return LanguageResolution(settled[0], "script", approximate=settled[1])
    votes = _vote(words)
    ranked = tuple(sorted(votes.items(), key=lambda item: (-item[1], item[0])))
    if ranked:
        leader, hits = ranked[0]
        runner_up = ranked[1][1] if len(ranked) > 1 else 0
        if hits >= 2 * runner_up and (hits >= MIN_VOTES or lean):
            return LanguageResolution(leader, "function_words", approximate=hits < MIN_VOTES, votes=ranked)
    return LanguageResolution(None, "none", votes=ranked)
