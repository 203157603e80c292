"""Which language's table applies: declared, else settled by script, else voted by function words.

Three sources, strongest first. A declaration on the request is a statement about the corpus
and wins. A script used by one language apiece (Greek, Georgian, Hangul) settles it; Cyrillic
and Devanagari get the majority language's table (Russian, Hindi), labelled approximate.
Otherwise the drawer's own closed-class function words vote, decisively only: at least three
hits and twice the runner-up, else nothing. Nothing is derived from the shape of a word.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
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


def _vote(counts: Counter[str]) -> Counter[str]:
    # Each distinct function word credits its languages with its count.
    votes: Counter[str] = Counter()
    for word in filter(_VOTERS.__contains__, counts):
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
        # The bulk path: counts without building a token each. Counting every script then
        # dropping "number" keeps first-seen order, so most_common breaks ties the same way.
        words, scripts = term_counts(text_or_tokens)
        for unlettered in scripts.keys() - _LETTERED:
            del scripts[unlettered]
    else:
        tokens = list(text_or_tokens)
        scripts = Counter(token.script for token in tokens if token.script in _LETTERED)
        words = Counter(token.text for token in tokens)
    if scripts:
        dominant, _count = scripts.most_common(1)[0]
        settled = SCRIPT_LANGUAGES.get(dominant)
        if settled is not None:
            return LanguageResolution(settled[0], "script", approximate=settled[1])
    votes = _vote(words)
    ranked = tuple(sorted(votes.items(), key=lambda item: (-item[1], item[0])))
    if ranked:
        leader, hits = ranked[0]
        runner_up = ranked[1][1] if len(ranked) > 1 else 0
        if hits >= MIN_VOTES and hits >= 2 * runner_up:
            return LanguageResolution(leader, "function_words", votes=ranked)
    return LanguageResolution(None, "none", votes=ranked)
