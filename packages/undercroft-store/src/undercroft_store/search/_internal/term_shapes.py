"""The shape of every interned term (its length and a 64-bit mask of its letters), kept beside the vocabulary so a
typo scan filters the whole vocabulary in numpy instead of re-deriving each term's letters in a Python loop.

Neither value depends on the query: before, every query term met for the first time re-read the length and the
letter set of every term in the vocabulary (5 ms per term at a 6,000-term vocabulary, issue 19). The mask sets
bit ``ord(letter) % 64`` for each distinct letter. Each bit of ``mask(a) ^ mask(b)`` is set by at least one
letter of one term that the other lacks, and distinct bits need distinct letters, so the popcount of the XOR
never exceeds the size of the letter sets' symmetric difference: the mask filter keeps every term the exact
letter-set filter keeps (it may keep more, which the exact checks that follow drop). The result of a scan is
therefore exactly what the per-term loop returned.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

__all__ = ["TermShapes", "letter_mask"]


def letter_mask(term: str) -> int:
    """Bit ``ord(letter) % 64`` set for each distinct letter of ``term``."""
    mask = 0
    for letter in set(term):
        mask |= 1 << (ord(letter) & 63)
    return mask


#: Terms up to this many letters are masked in padded numpy rows, this many rows at a time (a bound on RAM).
_WIDE = 64
_CHUNK = 4096


def _masks(terms: list[str]) -> NDArray[np.uint64]:
    """`letter_mask` of each term, vectorised: the terms as padded UTF-32 rows, one bit per code point, OR-ed.
    The padding (code point 0) sets no bit; a term's own NUL, if any, then sets none either, which only ever
    lowers the XOR's popcount bound below the letter-set difference (the filter stays a superset)."""
    if not terms:
        return np.zeros(0, dtype=np.uint64)
    codes = np.array(terms, dtype=str)
    points = codes.view(np.uint32).reshape(len(terms), -1).astype(np.uint64)
    bits = np.where(points != 0, np.left_shift(np.uint64(1), points & np.uint64(63)), np.uint64(0))
    masks: NDArray[np.uint64] = np.bitwise_or.reduce(bits, axis=1)
    return masks


class TermShapes:
    """Lengths and letter masks of a vocabulary's terms, by term id, extended lazily as terms are interned."""

    def __init__(self) -> None:
        """Shapes of no term; `extend` catches up with a vocabulary."""
        self._lengths: NDArray[np.int64] = np.zeros(0, dtype=np.int64)
        self._masks: NDArray[np.uint64] = np.zeros(0, dtype=np.uint64)

    def __len__(self) -> int:
        """Terms shaped."""
        return len(self._lengths)

    def extend(self, terms: Sequence[str]) -> None:
        """Shape the terms of ``terms`` past those already shaped (``terms`` only ever grows between resets)."""
        start = len(self._lengths)
        if start >= len(terms):
            return
        fresh = terms[start:]
        lengths = np.fromiter((len(term) for term in fresh), dtype=np.int64, count=len(fresh))
        masks = np.zeros(len(fresh), dtype=np.uint64)
        short = np.flatnonzero(lengths <= _WIDE)
        for first in range(0, len(short), _CHUNK):
            rows = short[first : first + _CHUNK]
            masks[rows] = _masks([fresh[row] for row in rows.tolist()])
        for row in np.flatnonzero(lengths > _WIDE).tolist():  # a rare long term: no padded row for it
            masks[row] = letter_mask(fresh[row])
        self._lengths = np.concatenate((self._lengths, lengths))
        self._masks = np.concatenate((self._masks, masks))

    def near(self, term: str, budget: int, start: int) -> NDArray[np.intp]:
        """Ids from ``start`` on of the shaped terms of at least 3 letters, within ``budget`` of ``term``'s
        length, whose letter masks differ from ``term``'s in at most ``2 * budget`` bits (a superset of the
        terms passing the letter-set filter: see the module docstring), ascending."""
        lengths, masks = self._lengths[start:], self._masks[start:]
        query = np.uint64(letter_mask(term))
        fits = (lengths >= 3) & (np.abs(lengths - len(term)) <= budget)
        fits &= np.bitwise_count(masks ^ query) <= 2 * budget
        found: NDArray[np.intp] = np.flatnonzero(fits) + start
        return found
