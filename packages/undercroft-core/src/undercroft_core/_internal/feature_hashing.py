"""Vectorised feature hashing for the hash embedder: word unigrams, word bigrams, character trigrams.

Pure uint64 integer arithmetic (wrapping), so the buckets and signs are identical on every machine and
Python version. The recipe, stated once (tests re-implement it feature by feature):

* text → ``NFC(casefold(text))``; a code point is a *word character* when its Unicode category starts
  with L, M or N; a *word* is a maximal run of word characters.
* ``word_hash = Σ (cp_i + 1) · M^i mod 2^64`` over the word's code points (i from 0), with M = MULTIPLIER.
* unigram key ``word_hash ^ SALT_UNIGRAM``; bigram key ``(h_j · M + h_{j+1}) ^ SALT_BIGRAM`` for consecutive
  words of one text; trigram key ``((l · M + c) · M + r) ^ SALT_TRIGRAM`` for every word character c,
  where l and r are its neighbours, or 32 (a space) when the neighbour is not a word character.
* every key goes through the splitmix64 finaliser; bucket = ``h mod dimension``; sign = + when bit 63 is 0.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

import numpy as np
from numpy.typing import NDArray

__all__ = [
    "MULTIPLIER",
    "SALT_BIGRAM",
    "SALT_TRIGRAM",
    "SALT_UNIGRAM",
    "FeatureBatch",
    "hash_features",
    "prepare",
    "splitmix64",
]

MULTIPLIER = 0x100000001B3
SALT_UNIGRAM = 0x9E3779B97F4A7C15
SALT_BIGRAM = 0xC2B2AE3D27D4EB4F
SALT_TRIGRAM = 0x165667B19E3779F9
_SPACE = 32
_BMP = 0x10000

_U64 = np.uint64


def prepare(text: str) -> str:
    """The text the features are read from."""
    return unicodedata.normalize("NFC", text.casefold())


def _is_word_character(character: str) -> bool:
    return unicodedata.category(character)[0] in "LMN"


@lru_cache(maxsize=1)
def _bmp_tables() -> tuple[NDArray[np.bool_], NDArray[np.bool_]]:
    """The BMP's word-character table and which of its entries are filled: filled on demand (`_bmp_table`)."""
    return np.zeros(_BMP, dtype=np.bool_), np.zeros(_BMP, dtype=np.bool_)


def _bmp_table(points: NDArray[np.uint32]) -> NDArray[np.bool_]:
    """The word-character table, filled for every BMP code point of ``points`` (and any filled before).

    Filling all 65,536 entries up front cost every process ~30-60 ms before its first embedding (issue 18
    §4: a CLI ``remember`` or ``search`` embeds one short text); a text holds a few dozen distinct points.
    The check costs a gather over ``points`` only (no pass over the 65,536 entries per call): a warm table
    answers a query's embedding in proportion to its length."""
    table, filled = _bmp_tables()
    low = points[points < _BMP]
    missing = low[~filled[low]]
    if missing.size:
        # The distinct points by a count over the BMP, not `np.unique`: its first plain call imports `numpy.ma`
        # (~10 ms of a cold CLI command, issue 18 §4). Ascending either way.
        for cp in np.flatnonzero(np.bincount(missing)).tolist():
            table[cp] = _is_word_character(chr(cp))
        filled[missing] = True
    return table


def _word_mask(points: NDArray[np.uint32]) -> NDArray[np.bool_]:
    table = _bmp_table(points)
    mask = table[np.minimum(points, _BMP - 1)]
    high = points >= _BMP
    if high.any():
        unique, inverse = np.unique(points[high], return_inverse=True)
        mask[high] = np.array([_is_word_character(chr(int(cp))) for cp in unique], dtype=np.bool_)[inverse]
    return mask


def splitmix64(keys: NDArray[np.uint64]) -> NDArray[np.uint64]:
    """The splitmix64 finaliser (a bijection on uint64 with full avalanche)."""
    z = keys.copy()
    z ^= z >> _U64(30)
    z *= _U64(0xBF58476D1CE4E5B9)
    z ^= z >> _U64(27)
    z *= _U64(0x94D049BB133111EB)
    z ^= z >> _U64(31)
    return z


class FeatureBatch:
    """Hashed features of a batch: parallel arrays of row (text index), hash, and feature type (0, 1, 2)."""

    __slots__ = ("hashes", "kinds", "rows")

    def __init__(self, rows: NDArray[np.int64], hashes: NDArray[np.uint64], kinds: NDArray[np.int8]) -> None:
        self.rows = rows
        self.hashes = hashes
        self.kinds = kinds


def hash_features(texts: list[str]) -> FeatureBatch:
    """Every feature of every text, hashed (no per-token Python loop)."""
    prepared = [prepare(text) for text in texts]
    # A NUL before, between and after texts: never a word character, so nothing crosses a text boundary.
    joined = "\x00" + "\x00".join(prepared) + "\x00"
    points = np.frombuffer(joined.encode("utf-32-le"), dtype=np.uint32)
    lengths = np.array([len(text) + 1 for text in prepared], dtype=np.int64)
    text_of = np.empty(points.size, dtype=np.int64)
    text_of[0] = 0
    text_of[1:] = np.repeat(np.arange(len(prepared), dtype=np.int64), lengths) if prepared else []
    is_word = _word_mask(points)

    word_positions = np.flatnonzero(is_word)
    word_points = points[word_positions].astype(np.uint64) + _U64(1)
    previous = np.concatenate(([False], is_word[:-1]))
    following = np.concatenate((is_word[1:], [False]))
    starts = np.flatnonzero(is_word & ~previous)
    ends = np.flatnonzero(is_word & ~following) + 1
    word_lengths = ends - starts

    # Polynomial word hash via reduceat over the word characters only (words are contiguous runs there).
    # A batch with no word at all (e.g. only zero-width characters) has no offsets, not one at 0.
    offsets = (np.concatenate(([0], np.cumsum(word_lengths)[:-1])) if word_lengths.size else np.zeros(0)).astype(
        np.int64
    )
    relative = np.arange(word_positions.size, dtype=np.int64) - np.repeat(offsets, word_lengths)
    longest = int(word_lengths.max()) if word_lengths.size else 0
    powers = np.ones(max(longest, 1), dtype=np.uint64)
    if longest > 1:
        powers[1:] = np.multiply.accumulate(np.full(longest - 1, MULTIPLIER, dtype=np.uint64))
    contributions = word_points * powers[relative]
    word_hashes = (np.add.reduceat(contributions, offsets) if offsets.size else np.zeros(0, dtype=np.uint64)).astype(
        np.uint64
    )
    word_rows = text_of[starts]

    unigram = splitmix64(word_hashes ^ _U64(SALT_UNIGRAM))
    same_text = word_rows[:-1] == word_rows[1:]
    bigram_keys = (word_hashes[:-1] * _U64(MULTIPLIER) + word_hashes[1:])[same_text]
    bigram = splitmix64(bigram_keys ^ _U64(SALT_BIGRAM))
    bigram_rows = word_rows[:-1][same_text]

    centre = points[word_positions].astype(np.uint64)
    left_points = points[word_positions - 1].astype(np.uint64)
    right_points = points[word_positions + 1].astype(np.uint64)
    left = np.where(is_word[word_positions - 1], left_points, _U64(_SPACE))
    right = np.where(is_word[word_positions + 1], right_points, _U64(_SPACE))
    trigram = splitmix64(((left * _U64(MULTIPLIER) + centre) * _U64(MULTIPLIER) + right) ^ _U64(SALT_TRIGRAM))
    trigram_rows = text_of[word_positions]

    return FeatureBatch(
        rows=np.concatenate((word_rows, bigram_rows, trigram_rows)),
        hashes=np.concatenate((unigram, bigram, trigram)),
        kinds=np.concatenate(
            (
                np.zeros(unigram.size, dtype=np.int8),
                np.ones(bigram.size, dtype=np.int8),
                np.full(trigram.size, 2, dtype=np.int8),
            )
        ),
    )
