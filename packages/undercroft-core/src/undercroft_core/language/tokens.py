"""The Unicode-aware tokenizer shared by BM25 and the lexical channels.

Each token is NFC-normalised and case-folded, carries the offsets of its surface form in the
original text and the one script it is written in. A run that changes script mid-word is split
at the change, so a homoglyph mix never forms one token. Han and Kana runs, written without
spaces, become overlapping character bigrams; digits in any numeral system read as ASCII.
"""

from __future__ import annotations

import unicodedata
from collections import Counter
from collections.abc import Callable
from itertools import accumulate, compress, repeat
from typing import Final, NamedTuple

import regex

__all__ = ["SCRIPTS", "Token", "normalize_term", "script_of", "term_counts", "terms", "terms_and_scripts", "tokenize"]

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

# A word of any script, captured so that one split yields words and the gaps between them.
_WORD_SPLIT: Final = regex.compile(r"([\p{L}\p{M}\p{Nd}]+)")
_tuple_new: Final = tuple.__new__

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
    # One C-level regex split gives words and gaps; running sums of their lengths give every
    # offset; a word's tokens depend on the word alone, so each distinct word is analysed once
    # (cached) and the tokens are assembled by map/zip without a Python-level loop per token.
    parts = _WORD_SPLIT.split(text)
    words = parts[1::2]
    if not words:
        return []
    cache = _learned(words)
    offsets = list(accumulate(map(len, parts)))  # word i spans offsets[2i] to offsets[2i + 1]
    rows = zip(
        map(cache.terms.__getitem__, words),
        offsets[:-1:2],
        offsets[1::2],
        map(cache.scripts.__getitem__, words),
        strict=True,
    )
    tokens: list[Token] = list(map(_tuple_new, repeat(Token), rows))
    if not cache.pieces.keys().isdisjoint(words):
        for index in _split_indices(words, cache):
            base = offsets[2 * index]
            tokens[index : index + 1] = [
                Token(piece.text, base + piece.start, base + piece.end, piece.script)
                for piece in cache.pieces[words[index]]
            ]
    return tokens


def terms(text: str) -> list[str]:
    """Return just the normalised terms of ``text``, in order (the BM25 bag).

    Equal to ``[token.text for token in tokenize(text)]``, without building a token per term.
    """
    words = _WORD_SPLIT.split(text)[1::2]
    if not words:
        return []
    cache = _learned(words)
    found = list(map(cache.terms.__getitem__, words))
    if not cache.pieces.keys().isdisjoint(words):
        for index in _split_indices(words, cache):
            found[index : index + 1] = [piece.text for piece in cache.pieces[words[index]]]
    return found


def terms_and_scripts(text: str) -> tuple[list[str], list[str]]:
    """Return the terms of ``text`` and, in a parallel list, each term's script.

    Equal to ``tokenize`` without the offsets, and much cheaper: for bulk readers (language
    resolution, BM25 bags with script filters) that never look at where a token sits.
    """
    words = _WORD_SPLIT.split(text)[1::2]
    return _expanded(words, _learned(words)) if words else ([], [])


def term_counts(text: str) -> tuple[Counter[str], Counter[str]]:
    """Return how often each term of ``text`` occurs, and how many tokens each script has.

    Equal to ``Counter(terms(text))`` and ``Counter(t.script for t in tokenize(text))``, in the
    same first-seen key order, without building a token each: the BM25 term frequencies of a
    drawer in one call, and what language resolution reads.
    """
    words = _WORD_SPLIT.split(text)[1::2]
    if not words:
        return Counter(), Counter()
    cache = _learned(words)
    if cache.pieces.keys().isdisjoint(words):  # one token per word: count in C
        return Counter(map(cache.terms.__getitem__, words)), Counter(map(cache.scripts.__getitem__, words))
    found, scripts = _expanded(words, cache)
    return Counter(found), Counter(scripts)


def _expanded(words: list[str], cache: _WordCache) -> tuple[list[str], list[str]]:
    found = list(map(cache.terms.__getitem__, words))
    scripts = list(map(cache.scripts.__getitem__, words))
    if not cache.pieces.keys().isdisjoint(words):
        for index in _split_indices(words, cache):
            pieces = cache.pieces[words[index]]
            found[index : index + 1] = [piece.text for piece in pieces]
            scripts[index : index + 1] = [piece.script for piece in pieces]
    return found, scripts


class _WordCache(NamedTuple):
    # terms/scripts: every known word → its one term and script, or "" for a word that does not
    # yield exactly one token spanning itself; pieces: those words → their tokens at offset 0.
    terms: dict[str, str]
    scripts: dict[str, str]
    pieces: dict[str, tuple[Token, ...]]


# A list holding the live cache: full, it is replaced rather than cleared, so a thread that
# still holds the old one keeps a consistent view. The bound keeps memory near a few MB.
_CACHE_LIMIT: Final = 1 << 16
_cache: Final[list[_WordCache]] = [_WordCache({}, {}, {})]


def _learned(words: list[str]) -> _WordCache:
    cache = _cache[0]
    fresh = set(words).difference(cache.terms)
    if fresh:
        if len(cache.terms) + len(fresh) > _CACHE_LIMIT:
            cache = _cache[0] = _WordCache({}, {}, {})
            fresh = set(words)
        for word in fresh:
            _learn(word, cache)
    return cache


def _learn(word: str, cache: _WordCache) -> None:
    pieces: list[Token] = []
    if word.isascii() and (word.isalpha() or word.isdigit()):  # the common case, kept lean
        pieces.append(Token(word.lower(), 0, len(word), "latin" if word.isalpha() else "number"))
    else:
        _split_scripts(word, 0, len(word), pieces.append)
    if len(pieces) == 1 and pieces[0].start == 0 and pieces[0].end == len(word):
        cache.scripts[word] = pieces[0].script
        cache.terms[word] = pieces[0].text  # last: a word in terms is fully known
    else:
        cache.pieces[word] = tuple(pieces)
        cache.scripts[word] = ""
        cache.terms[word] = ""


def _split_indices(words: list[str], cache: _WordCache) -> list[int]:
    # Last first, so that replacing one slot by several keeps the earlier indices valid.
    found = list(compress(range(len(words)), map(cache.pieces.__contains__, words)))
    found.reverse()
    return found


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
