"""The shape of one language's morphology table, and the registry of all nineteen."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field
from typing import Final


def fold_marks(text: str) -> str:
    """Drop combining marks (accents, umlauts, tonos): used for keys, never for terms."""
    decomposed = unicodedata.normalize("NFD", text)
    return unicodedata.normalize("NFC", "".join(ch for ch in decomposed if not unicodedata.combining(ch)))


@dataclass(frozen=True)
class LanguageTable:
    """What the pairwise rules need to know about one language."""

    code: str
    name: str
    script: str
    endings: frozenset[str]
    min_stem: int
    agglutinative: bool = False
    #: stem alternations read as the same stem: "umlaut", "english", "double", "turkish".
    alternations: tuple[str, ...] = ()
    #: endings are matched on the mark-stripped tail, the stem keeps its marks (Greek tonos).
    ending_ignores_marks: bool = False
    irregular: tuple[tuple[str, ...], ...] = ()
    function_words: frozenset[str] = frozenset()
    #: closed-class words a search does not score: the function words and the table's further stop words.
    stop_words: frozenset[str] = frozenset()
    #: the table serves a whole script family by majority (Cyrillic → ru, Devanagari → hi).
    approximate: bool = False
    longest_ending: int = field(init=False, default=0)
    irregular_index: dict[str, int] = field(init=False, default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "longest_ending", max((len(e) for e in self.endings), default=0))
        index: dict[str, int] = {}
        for number, group in enumerate(self.irregular):
            for form in group:
                index[form] = number
        object.__setattr__(self, "irregular_index", index)


def table(
    code: str,
    name: str,
    script: str,
    endings: str,
    min_stem: int,
    *,
    function_words: str = "",
    stop_words: str = "",
    irregular: str = "",
    agglutinative: bool = False,
    alternations: tuple[str, ...] = (),
    ending_ignores_marks: bool = False,
    approximate: bool = False,
) -> LanguageTable:
    """Build a table from whitespace-separated lists; irregular groups are separated by ';'.

    ``stop_words`` lists closed-class words beyond ``function_words`` that carry no topic (articles,
    auxiliaries, pronouns, prepositions shared with other languages, so not distinctive enough to vote);
    the table's stop words are both lists together."""

    def norm(word: str) -> str:
        return unicodedata.normalize("NFC", word).casefold()

    ending_set = {norm(e) for e in endings.split()}
    if ending_ignores_marks:
        ending_set = {fold_marks(e) for e in ending_set}
    groups = tuple(tuple(norm(w) for w in group.split()) for group in irregular.split(";") if group.strip())
    return LanguageTable(
        code=code,
        name=name,
        script=script,
        endings=frozenset(ending_set),
        min_stem=min_stem,
        agglutinative=agglutinative,
        alternations=alternations,
        ending_ignores_marks=ending_ignores_marks,
        irregular=groups,
        function_words=frozenset(norm(w) for w in function_words.split()),
        stop_words=frozenset(norm(w) for w in (function_words + " " + stop_words).split()),
        approximate=approximate,
    )


TABLES: Final[dict[str, LanguageTable]] = {}


def register(*tables: LanguageTable) -> None:
    """Add tables to the registry (called once by each table module at import)."""
    for entry in tables:
        TABLES[entry.code] = entry
