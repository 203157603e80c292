"""The synthetic-scale corpus: a seeded, deterministic stream of drawers with planted needles.

Drawer ``i`` is a pure function of ``(spec, i)``: its own `random.Random` is seeded from the spec's seed and
``i`` (string seeds go through SHA-512, so the stream is the same on every machine and Python 3 build), which
lets a run grow the corpus checkpoint by checkpoint without regenerating what it already wrote. Text is
600–800 characters of sentences drawn from a seeded pseudo-word vocabulary with Zipfian frequencies
(``1 / rank^s``). Needles are drawers carrying one unique fact — a name no other drawer holds, built from a
syllable set the vocabulary never uses — whose question is known; each growth step plants its own needles
at seeded positions, spread round-robin over wings and rooms.
"""

from __future__ import annotations

import bisect
import functools
import hashlib
import itertools
import random
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from undercroft_bench.errors import InvalidSetting

__all__ = [
    "FILED_BASE",
    "Needle",
    "SynthDrawer",
    "SynthSpec",
    "corpus_digest",
    "filed_at",
    "needle_positions",
    "room_name",
    "synth_drawer",
    "wing_name",
]

#: The filing stamp of drawer 0; drawer ``i`` is filed ``i`` seconds later, so filing time grows with write
#: order (what a ``ranked_at`` pin needs) and never depends on the wall clock.
FILED_BASE = datetime(2024, 1, 1, tzinfo=UTC)
_MIN_CHARS, _MAX_CHARS = 600, 800
# The vocabulary is built from these syllables; needle names only from the second set, which shares no
# syllable shape with the first (every needle syllable holds x, q or z), so a needle name is never a
# vocabulary word; names spell the drawer index, so no two needles share one.
_ONSETS = "b c d f g h j k l m n p r s t v w".split()
_VOWELS = "a e i o u ai ea ou".split()
_CODAS = ["", "", "n", "r", "s", "l", "m", "t"]
_NAME_SYLLABLES = [o + v for o in ("qu", "x", "z", "zy", "xa", "qe") for v in ("a", "e", "i", "o", "u", "or")]
_NAME_DIGITS = 5
_OBJECTS = "lantern ledger compass violin kettle telescope atlas hourglass sextant teapot".split()
_PLACES = "attic cellar greenhouse workshop boathouse library pantry studio garage loft".split()


@dataclass(frozen=True, slots=True)
class SynthSpec:
    """The corpus' shape: seed, wings × rooms, vocabulary size, Zipf exponent and needles per growth step."""

    seed: int = 11
    wings: int = 8
    rooms: int = 12
    vocabulary: int = 5000
    zipf: float = 1.07
    needles_per_step: int = 50

    def validate(self) -> None:
        """Refuse a shape the generator cannot honour, naming the setting."""
        for name, option, low in (
            ("wings", "--wings", 1),
            ("rooms", "--rooms", 1),
            ("vocabulary", "--vocabulary", 100),
            ("needles_per_step", "--needles", 0),
        ):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < low:
                raise InvalidSetting(f"{option} must be an integer of at least {low}, got {value!r}")
        if not 0.5 <= self.zipf <= 2.0:
            raise InvalidSetting(f"--zipf must be from 0.5 to 2.0, got {self.zipf!r}")

    @property
    def words(self) -> tuple[str, ...]:
        """The vocabulary, most frequent first: distinct pseudo-words of one to three syllables."""
        return _vocabulary(self.seed, self.vocabulary)

    @property
    def cumulative(self) -> tuple[float, ...]:
        """Cumulative Zipf weights ``1 / rank^s`` over `words` (for bisect sampling)."""
        return _cumulative(self.vocabulary, self.zipf)


@functools.lru_cache(maxsize=8)
def _vocabulary(seed: int, size: int) -> tuple[str, ...]:
    rng = random.Random(f"undercroft-synth-vocabulary:{seed}")  # noqa: S311 - reproducible, not secret
    seen: set[str] = set()
    words: list[str] = []
    while len(words) < size:
        word = "".join(rng.choice(_ONSETS) + rng.choice(_VOWELS) + rng.choice(_CODAS) for _ in range(rng.randint(1, 3)))
        if len(word) >= 2 and word not in seen:
            seen.add(word)
            words.append(word)
    return tuple(words)


@functools.lru_cache(maxsize=8)
def _cumulative(size: int, zipf: float) -> tuple[float, ...]:
    return tuple(itertools.accumulate(1.0 / (rank + 1) ** zipf for rank in range(size)))


@dataclass(frozen=True, slots=True)
class Needle:
    """A planted fact: the drawer index that holds it, where it was filed, and the question that finds it."""

    index: int
    wing: str
    room: str
    fact: str
    query: str


@dataclass(frozen=True, slots=True)
class SynthDrawer:
    """One generated drawer: its index, wing, room, text, filing stamp and the needle it carries (if any)."""

    index: int
    wing: str
    room: str
    text: str
    filed_at: str
    needle: Needle | None = None


def filed_at(index: int) -> str:
    """Drawer ``index``'s filing stamp: `FILED_BASE` plus ``index`` seconds, ISO-8601 UTC with ``Z``."""
    return (FILED_BASE + timedelta(seconds=index)).strftime("%Y-%m-%dT%H:%M:%SZ")


def wing_name(number: int) -> str:
    """The name of wing ``number``."""
    return f"wing-{number:02d}"


def room_name(number: int) -> str:
    """The name of room ``number`` (room names repeat across wings; a room scope names its wing too)."""
    return f"room-{number:02d}"


def _drawer_rng(spec: SynthSpec, index: int) -> random.Random:
    return random.Random(f"undercroft-synth-drawer:{spec.seed}:{index}")  # noqa: S311 - reproducible, not secret


def _sentences(spec: SynthSpec, rng: random.Random, target: int) -> list[str]:
    """Sentences of 6–14 Zipf-drawn words until their joined length reaches ``target`` characters."""
    words, cumulative = spec.words, spec.cumulative
    total = cumulative[-1]
    sentences: list[str] = []
    length = -1
    while length < target:
        # Index by bisect on the cumulative weights: what `random.choices` does, without its per-call setup.
        drawn = [words[bisect.bisect(cumulative, rng.random() * total)] for _ in range(rng.randint(6, 14))]
        sentence = " ".join(drawn).capitalize() + "."
        sentences.append(sentence)
        length += len(sentence) + 1
    return sentences


def _fit(sentences: list[str]) -> str:
    """Join and trim the last sentence on a word boundary so the text is at most 800 characters."""
    text = " ".join(sentences)
    if len(text) <= _MAX_CHARS:
        return text
    cut = text.rfind(" ", 0, _MAX_CHARS)
    return text[:cut].rstrip(".") + "."


def _needle_name(index: int) -> str:
    """A unique two-word name for the needle in drawer ``index``: the index in base 36, read as syllables."""
    base = len(_NAME_SYLLABLES)
    digits = []
    value = index
    for _ in range(_NAME_DIGITS):
        digits.append(_NAME_SYLLABLES[value % base])
        value //= base
    if value:
        raise InvalidSetting(f"drawer index {index} exceeds the needle name space ({base**_NAME_DIGITS} drawers)")
    return f"{''.join(digits[:2]).capitalize()} {''.join(digits[2:]).capitalize()}"


def _needle(spec: SynthSpec, index: int, number: int, rng: random.Random) -> Needle:
    name = _needle_name(index)
    thing, place = rng.choice(_OBJECTS), rng.choice(_PLACES)
    shelf = rng.randint(100, 9999)
    return Needle(
        index=index,
        wing=wing_name(number % spec.wings),
        room=room_name((number // spec.wings) % spec.rooms),
        fact=f"{name} keeps the {thing} in the {place} on shelf {shelf}.",
        query=f"Where does {name} keep the {thing}?",
    )


def needle_positions(spec: SynthSpec, start: int, stop: int, first: int = 0) -> dict[int, int]:
    """Drawer index → needle ordinal for the growth step ``[start, stop)``: seeded, distinct positions.

    ``first`` is the number of needles planted by the earlier steps; ordinals continue from it, which spreads
    every step's needles round-robin over the wings and rooms.
    """
    if not 0 <= start < stop:
        raise InvalidSetting(f"a growth step must satisfy 0 <= start < stop, got [{start}, {stop})")
    count = min(spec.needles_per_step, stop - start)
    rng = random.Random(f"undercroft-synth-needles:{spec.seed}:{start}:{stop}")  # noqa: S311 - reproducible
    positions = sorted(rng.sample(range(start, stop), count))
    return {position: first + n for n, position in enumerate(positions)}


def synth_drawer(spec: SynthSpec, index: int, needle_number: int | None = None) -> SynthDrawer:
    """Generate drawer ``index``; with ``needle_number`` (its ordinal, which places it) it carries a needle."""
    rng = _drawer_rng(spec, index)
    target = rng.randint(_MIN_CHARS, _MAX_CHARS - 20)
    needle = None
    if needle_number is None:
        wing, room = wing_name(rng.randrange(spec.wings)), room_name(rng.randrange(spec.rooms))
        text = _fit(_sentences(spec, rng, target))
    else:
        needle = _needle(spec, index, needle_number, rng)
        wing, room = needle.wing, needle.room
        sentences = _sentences(spec, rng, target - len(needle.fact) - 1)
        sentences.insert(rng.randint(0, len(sentences)), needle.fact)
        text = _fit_keeping(sentences, needle.fact)
    return SynthDrawer(index=index, wing=wing, room=room, text=text, filed_at=filed_at(index), needle=needle)


def _fit_keeping(sentences: list[str], fact: str) -> str:
    """`_fit`, dropping filler sentences (never the fact) when trimming would cut into it."""
    while True:
        text = _fit(sentences)
        if fact in text:
            return text
        for position in range(len(sentences) - 1, -1, -1):
            if sentences[position] != fact:
                del sentences[position]
                break


def corpus_digest(spec: SynthSpec, count: int) -> str:
    """SHA-256 over the first ``count`` drawers (one growth step) as ``index ␟ wing ␟ room ␟ filed ␟ text ␞``."""
    digest = hashlib.sha256()
    needles = needle_positions(spec, 0, count)
    for index in range(count):
        drawer = synth_drawer(spec, index, needles.get(index))
        digest.update(f"{index}\x1f{drawer.wing}\x1f{drawer.room}\x1f{drawer.filed_at}\x1f{drawer.text}\x1e".encode())
    return digest.hexdigest()
