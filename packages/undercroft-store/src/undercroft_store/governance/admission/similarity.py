"""Known-attack-fixture similarity: windowed hash-embedder cosine against the committed corpus.

The content is cut into overlapping windows of `window_words` words (half a window apart); each window is
embedded with the hash embedder and compared with every window of every fixture, cut the same way. A
window at or over `threshold` trips `attack-fixture-similarity` with that window's byte span. Windowing is
what lets a short injection buried in a long, otherwise benign drawer still score: a whole-drawer vector
would dilute it below any usable threshold.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import cache
from typing import Final

import numpy as np
from numpy.typing import NDArray
from undercroft_core import HashEmbedder
from undercroft_core.errors import InvalidInput

from undercroft_store.governance.admission.fixtures import AttackFixture, load_fixtures

__all__ = [
    "SIMILARITY_THRESHOLD",
    "WINDOW_WORDS",
    "FixtureIndex",
    "SimilarityHit",
    "default_fixture_index",
    "word_windows",
]

#: The pinned threshold (see docs/admission.md for how both sides were measured).
SIMILARITY_THRESHOLD: Final = 0.62
#: Words per window; windows overlap by half.
WINDOW_WORDS: Final = 24

_WORD: Final = re.compile(r"\w+")


def word_windows(text: str, window_words: int = WINDOW_WORDS) -> list[tuple[int, int]]:
    """Character spans of overlapping `window_words`-word windows (a text at most that long is one window)."""
    if window_words < 2:
        raise InvalidInput(f"window_words must be at least 2, got {window_words}")
    words = [(match.start(), match.end()) for match in _WORD.finditer(text)]
    if not words:
        return []
    if len(words) <= window_words:
        return [(words[0][0], words[-1][1])]
    stride = window_words // 2
    starts = list(range(0, len(words) - window_words + 1, stride))
    if starts[-1] != len(words) - window_words:
        starts.append(len(words) - window_words)
    return [(words[first][0], words[first + window_words - 1][1]) for first in starts]


@dataclass(frozen=True)
class SimilarityHit:
    """The best-scoring content window: its character span, its cosine and the fixture it matched."""

    start: int
    end: int
    score: float
    fixture_id: str


class FixtureIndex:
    """The fixture windows embedded once; `best(text)` scores a text's windows against all of them."""

    def __init__(
        self,
        fixtures: Sequence[AttackFixture],
        *,
        embedder: HashEmbedder | None = None,
        window_words: int = WINDOW_WORDS,
        threshold: float = SIMILARITY_THRESHOLD,
    ) -> None:
        if not fixtures:
            raise InvalidInput("a fixture index needs at least one fixture")
        if not 0.0 < threshold <= 1.0:
            raise InvalidInput(f"similarity threshold must be in (0, 1], got {threshold!r}")
        self.embedder = embedder if embedder is not None else HashEmbedder()
        self.window_words = window_words
        self.threshold = threshold
        texts: list[str] = []
        owners: list[str] = []
        for fixture in fixtures:
            for start, end in word_windows(fixture.text, window_words):
                texts.append(fixture.text[start:end])
                owners.append(fixture.id)
        self._owners = tuple(owners)
        # Stored transposed so scoring is one (windows × dim) @ (dim × fixture windows) product.
        self._matrix: NDArray[np.float32] = np.ascontiguousarray(self.embedder.embed(texts).T, dtype=np.float32)

    @property
    def size(self) -> int:
        """How many fixture windows are indexed."""
        return len(self._owners)

    def best(self, text: str) -> SimilarityHit | None:
        """The highest-scoring window of `text` (None for a text with no word)."""
        spans = word_windows(text, self.window_words)
        if not spans:
            return None
        vectors = self.embedder.embed([text[start:end] for start, end in spans])
        scores = vectors @ self._matrix
        row, column = np.unravel_index(int(np.argmax(scores)), scores.shape)
        start, end = spans[int(row)]
        return SimilarityHit(start, end, float(scores[row, column]), self._owners[int(column)])

    def hit(self, text: str) -> SimilarityHit | None:
        """The best window when it reaches the threshold, else None."""
        best = self.best(text)
        return best if best is not None and best.score >= self.threshold else None


@cache
def default_fixture_index() -> FixtureIndex:
    """The index over the committed corpus with the pinned window and threshold (built once per process)."""
    return FixtureIndex(load_fixtures())
