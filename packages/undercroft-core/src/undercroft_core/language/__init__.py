"""The language layer: tokens, morphology in nineteen languages, language resolution.

Pure functions over text: no I/O, no model, no stemmer, no language-detection model. See
docs/languages.md for the public API, the languages and the measured paradigm coverage.
"""

from undercroft_core.language.morphology import (
    LANGUAGES,
    MORPH_RULES,
    MorphRule,
    language_name,
    lexeme_keys,
    require_language,
    same_lexeme,
)
from undercroft_core.language.resolution import (
    MIN_VOTES,
    SCRIPT_LANGUAGES,
    LanguageResolution,
    ResolutionSource,
    resolve_language,
)
from undercroft_core.language.tokens import SCRIPTS, Token, normalize_term, script_of, terms, tokenize
from undercroft_core.language.vocabulary import MorphMatch, TermMatches, VocabularyIndex, match_terms, typo_budget

__all__ = [
    "LANGUAGES",
    "MIN_VOTES",
    "MORPH_RULES",
    "SCRIPTS",
    "SCRIPT_LANGUAGES",
    "LanguageResolution",
    "MorphMatch",
    "MorphRule",
    "ResolutionSource",
    "TermMatches",
    "Token",
    "VocabularyIndex",
    "language_name",
    "lexeme_keys",
    "match_terms",
    "normalize_term",
    "require_language",
    "resolve_language",
    "same_lexeme",
    "script_of",
    "terms",
    "tokenize",
    "typo_budget",
]
