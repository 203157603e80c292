"""Exact, morphological and typo-tolerant matching of query terms against a vocabulary.

Built once over the vocabulary of a candidate pool, the index files each term under its cheap
:func:`~undercroft_core.language.morphology.lexeme_keys`; expanding a query term looks up its
own keys and runs the pairwise rules on the few terms that share one. Expansions are memoised
per (term, language), so a query over many drawers of one language pays once.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Final

from undercroft_core.errors import InvalidInput
from undercroft_core.language.morphology import MorphRule, lexeme_keys, require_language, same_lexeme
from undercroft_core.language.resolution import LanguageResolution
from undercroft_core.language.tokens import Token, script_of

__all__ = ["MorphMatch", "TermMatches", "VocabularyIndex", "match_terms", "typo_budget"]

#: Terms shorter than this get no typo tolerance: a one-letter slip in a short word is another word.
_TYPO_MIN_LENGTH: Final = 5


@dataclass(frozen=True, slots=True)
class MorphMatch:
    """A vocabulary term admitted as another form of a query term, and the rule that admitted it."""

    term: str
    rule: MorphRule


@dataclass(frozen=True, slots=True)
class TermMatches:
    """What one query term matched in a vocabulary, channel by channel."""

    query: str
    language: str | None
    exact: bool
    morph: tuple[MorphMatch, ...]
    typo: tuple[str, ...] = ()


def typo_budget(term: str) -> int:
    """Edits tolerated for ``term``: 0 below five letters, 1 up to eight, 2 beyond."""
    if len(term) < _TYPO_MIN_LENGTH:
        return 0
    return 1 if len(term) <= 8 else 2


class VocabularyIndex:
    """A vocabulary filed by lexeme key, for fast exact, morphological and typo expansion."""

    __slots__ = ("_buckets", "_cache", "_scripts", "_terms")

    def __init__(self, vocabulary: Iterable[str | Token]) -> None:
        """Index ``vocabulary``: normalised terms, or tokens (whose script is then reused)."""
        scripts: dict[str, str] = {}
        for item in vocabulary:
            if isinstance(item, Token):
                scripts.setdefault(item.text, item.script)
            elif isinstance(item, str):
                if item not in scripts:
                    scripts[item] = script_of(item)
            else:
                raise InvalidInput(f"vocabulary entries must be str or Token, got {type(item).__name__}")
        buckets: dict[str, list[str]] = {}
        for term, script in scripts.items():
            for key in lexeme_keys(term, script):
                buckets.setdefault(key, []).append(term)
        self._scripts = scripts
        self._terms: list[str] = list(scripts)
        self._buckets = buckets
        self._cache: dict[tuple[str, str], tuple[MorphMatch, ...]] = {}

    def __len__(self) -> int:
        """Number of distinct terms indexed."""
        return len(self._terms)

    def __contains__(self, term: object) -> bool:
        """Whether ``term`` is in the vocabulary exactly."""
        return term in self._scripts

    def candidates(self, term: str) -> set[str]:
        """Vocabulary terms sharing a lexeme key with ``term`` (the only ones the rules can admit)."""
        found: set[str] = set()
        for key in lexeme_keys(term, script_of(term)):
            found.update(self._buckets.get(key, ()))
        found.discard(term)
        return found

    def expand(self, term: str, language: str | None) -> tuple[MorphMatch, ...]:
        """Vocabulary terms that are other forms of ``term`` under ``language``, sorted by term."""
        if language is None:
            return ()
        require_language(language)
        cached = self._cache.get((term, language))
        if cached is not None:
            return cached
        matches = []
        for candidate in self.candidates(term):
            rule = same_lexeme(term, candidate, language)
            if rule is not None:
                matches.append(MorphMatch(candidate, rule))
        result = tuple(sorted(matches, key=lambda match: match.term))
        self._cache[(term, language)] = result
        return result

    def typos(self, term: str) -> tuple[str, ...]:
        """Vocabulary terms within :func:`typo_budget` edits of ``term`` (itself excluded)."""
        budget = typo_budget(term)
        if budget == 0:
            return ()
        # rapidfuzz loads on the first typo lookup, not at import: every `undercroft` start that opens the store
        # imports this module, and most (remember, stats, serve-mcp's start) never match a typo.
        from rapidfuzz import process
        from rapidfuzz.distance import Levenshtein

        found = process.extract(term, self._terms, scorer=Levenshtein.distance, score_cutoff=budget, limit=None)
        return tuple(sorted(choice for choice, _score, _index in found if choice != term and len(choice) >= 3))


def match_terms(
    query_terms: Sequence[str],
    index: VocabularyIndex,
    resolution: LanguageResolution,
    *,
    typos: bool = False,
) -> list[TermMatches]:
    """Match each query term against ``index`` under the language ``resolution`` gives its script.

    The exact channel is set membership; the morphological channel is :meth:`VocabularyIndex.expand`
    under the table that applies to the term's script; ``typos`` adds the typo-tolerant channel.
    """
    results: list[TermMatches] = []
    for term in query_terms:
        language = resolution.language_for(script_of(term))
        results.append(
            TermMatches(
                query=term,
                language=language,
                exact=term in index,
                morph=index.expand(term, language),
                typo=index.typos(term) if typos else (),
            )
        )
    return results
