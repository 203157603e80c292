"""Morphology without a stemmer: pairwise rules deciding whether two forms are one lexeme.

Nothing here builds equivalence classes. A stemmer maps every form to one key and so merges
false friends for good (Snowball Greek merges πολύ and πόλη); here each PAIR is judged, by five
rules, under the table of one language:

* ``suffix`` — one form is the other plus an inflectional ending (run/running, Kind/Kinder);
* ``substitutive`` — both carry an ending of the same stem (libro/libri, бумага/бумаги);
* ``agglutinative`` — endings stack on the stem (ev/evlerimizden, talo/taloissa);
* ``root`` — Arabic forms carrying the same triliteral root (كتب/مكتوب);
* ``irregular`` — forms listed together in the language's table (go/went, child/children).

:func:`lexeme_keys` gives the cheap keys an index files a term under: two terms can only be one
lexeme when they share a key, so the pairwise rules run on few pairs.
"""

from __future__ import annotations

from collections import deque
from functools import lru_cache
from typing import Final, Literal

from undercroft_core.errors import InvalidInput
from undercroft_core.language._internal import tables_europe, tables_other  # noqa: F401  (registers)
from undercroft_core.language._internal.arabic_roots import arabic_roots
from undercroft_core.language._internal.language_table import TABLES, LanguageTable, fold_marks
from undercroft_core.language.tokens import script_of

__all__ = [
    "LANGUAGES",
    "MORPH_RULES",
    "MorphRule",
    "language_name",
    "lexeme_keys",
    "require_language",
    "same_lexeme",
]

MorphRule = Literal["suffix", "substitutive", "agglutinative", "root", "irregular"]

#: The five rules, in the order they are reported.
MORPH_RULES: Final[tuple[MorphRule, ...]] = ("suffix", "substitutive", "agglutinative", "root", "irregular")

#: The nineteen languages with a morphology table, as ISO 639-1 codes.
LANGUAGES: Final[tuple[str, ...]] = tuple(TABLES)

_MAX_STACK: Final = 4
_UMLAUT: Final = str.maketrans({"ä": "a", "ö": "o", "ü": "u"})
_TURKISH_SOFT: Final = {"b": "p", "c": "ç", "d": "t", "ğ": "k", "g": "k"}
_VOWELS: Final = frozenset("aeiouy")
_UMLAUT_ENDINGS: Final = frozenset({"e", "er", "ern", "en"})
_KEY_LENGTH: Final = {"hangul": 1, "devanagari": 1}


def require_language(code: str) -> LanguageTable:
    """Return the table of ``code``, refusing a code with no table."""
    table = TABLES.get(code)
    if table is None:
        raise InvalidInput(f"unknown language {code!r}: expected one of {', '.join(LANGUAGES)}")
    return table


def language_name(code: str) -> str:
    """Return the English name of a supported language code."""
    return require_language(code).name


def _alternate(stem: str, ending: str, table: LanguageTable) -> str:
    # Spelling alternations at the stem's edge, read as the same stem.
    for kind in table.alternations:
        if kind == "english":
            if stem.endswith("e"):
                stem = stem[:-1]
            if stem.endswith("i"):
                stem = stem[:-1] + "y"
            if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS:
                stem = stem[:-1]
        elif kind == "double":
            if len(stem) > 3 and stem[-1] == stem[-2] and stem[-1] not in _VOWELS:
                stem = stem[:-1]
            if len(stem) > 3 and stem[-2] == stem[-3] and stem[-2] in _VOWELS:
                stem = stem[:-2] + stem[-1]
        elif kind == "umlaut" and ending in _UMLAUT_ENDINGS:
            # Only a plural or comparative ending brings an umlaut: schön is not schon.
            stem = stem.translate(_UMLAUT)
        elif kind == "turkish" and stem and stem[-1] in _TURKISH_SOFT:
            stem = stem[:-1] + _TURKISH_SOFT[stem[-1]]
    return stem


@lru_cache(maxsize=262144)
def _stems(term: str, code: str) -> dict[str, int]:
    """Every stem ``term`` can be read as (after alternations), with the fewest endings used."""
    table = TABLES[code]
    found: dict[str, int] = {}
    tail_form = fold_marks(term) if table.ending_ignores_marks else term
    # (stem length, endings stripped, the ending stripped last)
    # breadth first, so each (length, ending) is first reached by its fewest endings
    frontier: deque[tuple[int, int, str]] = deque([(len(term), 0, "")])
    seen: set[tuple[int, str]] = set()
    limit = _MAX_STACK if table.agglutinative else 1
    while frontier:
        length, depth, ending = frontier.popleft()
        if (length, ending) in seen:
            continue
        seen.add((length, ending))
        if length >= table.min_stem:
            stem = _alternate(term[:length], ending, table)
            if len(stem) >= table.min_stem and found.get(stem, _MAX_STACK + 1) > depth:
                found[stem] = depth
        if depth >= limit:
            continue
        for size in range(1, min(table.longest_ending, length - 1) + 1):
            if tail_form[length - size : length] in table.endings and length - size >= table.min_stem:
                frontier.append((length - size, depth + 1, tail_form[length - size : length]))
    return found


def same_lexeme(first: str, second: str, language: str) -> MorphRule | None:
    """Decide whether two normalised terms are forms of one lexeme under ``language``'s table.

    Returns the rule that admits the pair, or None. Identical terms are not a morphological
    match (that is the exact channel) and return None.
    """
    table = require_language(language)
    if first == second:
        return None
    index = table.irregular_index
    group = index.get(first)
    if group is not None and group == index.get(second):
        return "irregular"
    if table.script == "arabic" and arabic_roots(first) & arabic_roots(second):
        return "root"
    stems_first = _stems(first, language)
    stems_second = _stems(second, language)
    if len(stems_first) > len(stems_second):
        stems_first, stems_second = stems_second, stems_first
    best: tuple[int, int] | None = None
    for stem, depth in stems_first.items():
        other = stems_second.get(stem)
        if other is None:
            continue
        candidate = (max(depth, other), min(depth, other))
        if best is None or candidate < best:
            best = candidate
    if best is None:
        return None
    deepest, shallowest = best
    if deepest >= 2:
        return "agglutinative"
    if shallowest == 0:
        return "suffix"
    return "substitutive"


@lru_cache(maxsize=262144)
def lexeme_keys(term: str, script: str | None = None) -> frozenset[str]:
    """The keys ``term`` is filed under: a pair can be one lexeme only if it shares a key.

    The key is the term's first letters with marks folded (one syllable for Hangul, one letter
    for Devanagari), plus its Arabic roots and its irregular groups in every table.
    """
    if script is None:
        script = script_of(term)
    keys: set[str] = set()
    folded = fold_marks(term)
    keys.add("~" + folded[: _KEY_LENGTH.get(script, 2)])
    if script == "arabic":
        keys.update("√" + root for root in arabic_roots(term))
        if term.startswith("ال"):
            keys.add("~" + term[2:4])
    for code, table in TABLES.items():
        group = table.irregular_index.get(term)
        if group is not None:
            keys.add(f"={code}:{group}")
    return frozenset(keys)
