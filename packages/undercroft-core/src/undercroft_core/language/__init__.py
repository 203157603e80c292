"""The language layer: tokens, morphology in nineteen languages, language resolution, dates.

Pure functions over text: no I/O, no model, no stemmer, no language-detection model. See
docs/languages.md for the public API, the languages and the measured paradigm coverage.
"""

from undercroft_core.language.calendars import JAPANESE_ERAS, era_year_span, to_gregorian, year_span
from undercroft_core.language.conventions import (
    CALENDARS,
    DATE_ORDERS,
    WEEK_STARTS,
    ReadingConventions,
    reading_conventions,
)
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
    resolve_counts,
    resolve_language,
)
from undercroft_core.language.stop_words import content_words, function_words, stop_words, without_words
from undercroft_core.language.time_mentions import (
    DateOrderSource,
    TimeMention,
    drawer_anchor,
    resolve_date_order,
    scan_time_mentions,
)
from undercroft_core.language.tokens import (
    SCRIPTS,
    Token,
    normalize_term,
    script_of,
    term_counts,
    terms,
    terms_and_scripts,
    tokenize,
)
from undercroft_core.language.vocabulary import MorphMatch, TermMatches, VocabularyIndex, match_terms, typo_budget
from undercroft_core.language.when import (
    DEFAULT_QUERY_SLACK_DAYS,
    MAX_SLACK_DAYS,
    WhenSource,
    WhenWindow,
    parse_when,
)

__all__ = [
    "CALENDARS",
    "DATE_ORDERS",
    "DEFAULT_QUERY_SLACK_DAYS",
    "JAPANESE_ERAS",
    "LANGUAGES",
    "MAX_SLACK_DAYS",
    "MIN_VOTES",
    "MORPH_RULES",
    "SCRIPTS",
    "SCRIPT_LANGUAGES",
    "WEEK_STARTS",
    "DateOrderSource",
    "LanguageResolution",
    "MorphMatch",
    "MorphRule",
    "ReadingConventions",
    "ResolutionSource",
    "TermMatches",
    "TimeMention",
    "Token",
    "VocabularyIndex",
    "WhenSource",
    "WhenWindow",
    "content_words",
    "drawer_anchor",
    "era_year_span",
    "function_words",
    "language_name",
    "lexeme_keys",
    "match_terms",
    "normalize_term",
    "parse_when",
    "reading_conventions",
    "require_language",
    "resolve_counts",
    "resolve_date_order",
    "resolve_language",
    "same_lexeme",
    "scan_time_mentions",
    "script_of",
    "stop_words",
    "term_counts",
    "terms",
    "terms_and_scripts",
    "to_gregorian",
    "tokenize",
    "typo_budget",
    "without_words",
    "year_span",
]
