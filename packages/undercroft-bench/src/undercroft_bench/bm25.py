"""The `bm25` arm: plain Okapi BM25 (k1=1.2, b=0.75) over lowercase word tokens, the protocol's reference point.

No stemming, no stop words, no fusion: it is the lexical floor every other arm is read against. The idf is
the non-negative form `ln(1 + (N - n + 0.5) / (n + 0.5))` so a term present in most chunks never subtracts.
Only chunks sharing at least one term with the question are returned (a zero score carries no evidence);
ties keep indexing order so a ranking is reproducible.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Sequence

from undercroft_bench.chunking import Chunk
from undercroft_bench.errors import RetrieverFault
from undercroft_bench.retriever import ArmContext

__all__ = ["BM25_B", "BM25_K1", "Bm25Retriever", "make_bm25", "tokenize"]

BM25_K1 = 1.2
BM25_B = 0.75
_WORD = re.compile(r"\w+")


def tokenize(text: str) -> list[str]:
    """Lowercase word tokens (`\\w+` runs: letters, digits, underscore) in order, repeats kept."""
    return _WORD.findall(text.lower())


class Bm25Retriever:
    """An in-memory Okapi BM25 index over one scope's chunks."""

    def __init__(self, k1: float = BM25_K1, b: float = BM25_B) -> None:
        """Create an empty index with the given saturation `k1` and length normalisation `b`."""
        self._k1 = k1
        self._b = b
        self._ids: list[str] = []
        self._lengths: list[int] = []
        self._postings: dict[str, list[tuple[int, int]]] = {}
        self._average_length = 0.0
        self._indexed = False

    def index(self, chunks: Sequence[Chunk]) -> None:
        """Tokenise every chunk once and build the postings; a second call is refused."""
        if self._indexed:
            raise RetrieverFault("bm25: index() was already called for this scope")
        self._indexed = True
        for position, chunk in enumerate(chunks):
            counts = Counter(tokenize(chunk.text))
            self._ids.append(chunk.chunk_id)
            self._lengths.append(sum(counts.values()))
            for term, frequency in counts.items():
                self._postings.setdefault(term, []).append((position, frequency))
        self._average_length = sum(self._lengths) / len(self._lengths) if self._lengths else 0.0

    def idf(self, term: str) -> float:
        """The term's inverse document frequency in this scope (0 for a term no chunk holds)."""
        postings = self._postings.get(term)
        if not postings:
            return 0.0
        total, holding = len(self._ids), len(postings)
        return math.log(1.0 + (total - holding + 0.5) / (holding + 0.5))

    def scores(self, question: str) -> dict[int, float]:
        """BM25 score of every chunk (by position) sharing a term with `question`; each query term counts once
        per occurrence in the question, as in the classic formulation."""
        scores: dict[int, float] = {}
        average = self._average_length or 1.0
        for term in tokenize(question):
            idf = self.idf(term)
            for position, frequency in self._postings.get(term, ()):
                norm = self._k1 * (1.0 - self._b + self._b * self._lengths[position] / average)
                gain = idf * frequency * (self._k1 + 1.0) / (frequency + norm)
                scores[position] = scores.get(position, 0.0) + gain
        return scores

    def search(self, question: str, k: int) -> list[str]:
        """The ids of the `k` best-scoring chunks, best first, ties in indexing order."""
        scored = self.scores(question)
        ranked = sorted(scored, key=lambda position: (-scored[position], position))
        return [self._ids[position] for position in ranked[:k]]


def make_bm25(context: ArmContext) -> Bm25Retriever:
    """Arm factory: a fresh BM25 index with the protocol's parameters (the context is not needed)."""
    del context
    return Bm25Retriever()
