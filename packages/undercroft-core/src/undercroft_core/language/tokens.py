"""The Unicode-aware tokenizer shared by BM25 and the lexical channels.

Each token is NFC-normalised and case-folded, carries the offsets of its surface form in the
original text and the one script it is written in. A run that changes script mid-word is split
at the change, so a homoglyph mix never forms one token. Han and Kana runs, written without
spaces, become overlapping character bigrams; digits in any numeral system read as ASCII.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Callable
from typing import Final, NamedTuple

import regex

__all__ = ["SCRIPTS", "Token", "normalize_term", "script_of", "terms", "tokenize"]

#: Every script name a token can carry.
SCRIPTS: Final = (
    "number",
    "latin",
    "greek",
    "cyrillic",
    "arabic",
    "hebrew",
    "devanagari",
    "georgian",
    "hangul",
    "han",
    "thai",
    "other",
)

# Marks (\p{M}) are script-Inherited, so each script's class admits them: a harakah or an
# accent stays inside its word. Decimal digits come first because Arabic-Indic and Thai
# digits belong to their letters' scripts.
_RUN: Final = regex.compile(
    r"(?P<number>\p{Nd}+)"
    r"|(?P<latin>[\p{Latin}\p{M}]+)"
    r"|(?P<greek>[\p{Greek}\p{M}]+)"
    r"|(?P<cyrillic>[\p{Cyrillic}\p{M}]+)"
    r"|(?P<arabic>[\p{Arabic}\p{M}]+)"
    r"|(?P<hebrew>[\p{Hebrew}\p{M}]+)"
    r"|(?P<devanagari>[\p{Devanagari}\p{M}]+)"
    r"|(?P<georgian>[\p{Georgian}\p{M}]+)"
    r"|(?P<hangul>[\p{Hangul}\p{M}]+)"
    r"|(?P<han>[\p{Han}\p{Hiragana}\p{Katakana}ー\p{M}]+)"
    r"|(?P<thai>[\p{Thai}\p{M}]+)"
    r"|(?P<other>[\p{L}\p{M}]+)"
)

# A word of any script: one fast class; only a non-ASCII word is split by script.
_WORD: Final = regex.compile(r"[\p{L}\p{M}\p{Nd}]+")

# Arabic short vowels, shadda, sukun, dagger alef and tatweel are optional in writing, and
# the hamza-carrying alefs are written interchangeably with the bare one.
_ARABIC_OPTIONAL: Final = regex.compile(r"[\u064B-\u065F\u0670\u0640]")
_ARABIC_ALEFS: Final = str.maketrans({"أ": "ا", "إ": "ا", "آ": "ا", "ٱ": "ا"})


class Token(NamedTuple):
    """One normalised token: its term, where its surface form sits in the text, its script.

    A named tuple rather than a dataclass: a drawer yields hundreds and construction dominates.
    """

    text: str
    start: int
    end: int
    script: str


def _ascii_digits(run: str) -> str:
    return "".join(str(unicodedata.digit(ch)) for ch in run)


def normalize_term(surface: str, script: str | None = None) -> str:
    """Return the term a surface form indexes under: NFC, case-folded, script-normalised.

    Arabic loses its optional diacritics and tatweel and has its alefs unified; numbers read
    as ASCII digits. ``script`` defaults to the script of the first character.
    """
    if script is None:
        script = script_of(surface)
    if script == "number":
        return _ascii_digits(surface)
    term = unicodedata.normalize("NFC", surface).casefold()
    if script == "arabic":
        term = _ARABIC_OPTIONAL.sub("", term).translate(_ARABIC_ALEFS)
    return term


def script_of(surface: str) -> str:
    """Return the script of the first run of ``surface`` ("other" for no letters at all)."""
    match = _RUN.search(surface)
    group: str | None = None if match is None else match.lastgroup
    return group or "other"


def tokenize(text: str) -> list[Token]:
    """Split ``text`` into normalised tokens with offsets into ``text`` and their script.

    Punctuation and whitespace separate tokens; a change of script does too. Han and Kana runs
    (written without spaces) yield overlapping bigrams, a lone character itself.
    """
    tokens: list[Token] = []
    append = tokens.append
    for word in _WORD.finditer(text):
        surface = word.group()
        if surface.isascii():  # the common case, kept lean: ASCII letters or ASCII digits alone
            if surface.isalpha() or surface.isdigit():
                script = "latin" if surface.isalpha() else "number"
                append(Token(surface.lower(), word.start(), word.end(), script))
                continue
        _split_scripts(text, word.start(), word.end(), append)
    return tokens


def _split_scripts(text: str, start: int, end: int, append: Callable[[Token], None]) -> None:
    nfc = unicodedata.normalize
    for match in _RUN.finditer(text, start, end):
        script = match.lastgroup or "other"
        surface = match.group()
        start = match.start()
        if script == "latin" and surface.isascii():
            append(Token(surface.lower(), start, start + len(surface), script))
        elif script == "han":
            _han_bigrams(surface, start, append)
        elif script == "number" or script == "arabic":
            append(Token(normalize_term(surface, script), start, start + len(surface), script))
        else:
            term = nfc("NFC", surface).casefold()
            if term:
                append(Token(term, start, start + len(surface), script))


def _han_bigrams(surface: str, start: int, emit: Callable[[Token], None]) -> None:
    folded = unicodedata.normalize("NFC", surface)
    if len(folded) != len(surface):  # a decomposed mark shifted offsets: emit the run whole
        emit(Token(folded, start, start + len(surface), "han"))
        return
    if len(surface) == 1:
        emit(Token(surface, start, start + 1, "han"))
        return
    for i in range(len(surface) - 1):
        emit(Token(surface[i : i + 2], start + i, start + i + 2, "han"))


def terms(text: str) -> list[str]:
    """Return just the normalised terms of ``text``, in order (the BM25 bag)."""
    return [token.text for token in tokenize(text)]
