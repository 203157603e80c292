"""A typo scan reads each term's length and letters from the lexicon's term shapes (issue 19): it finds exactly
what the per-term loop (`_typos`) finds, in any script, for letters whose mask bits collide, and from any start."""

from __future__ import annotations

import random

from undercroft_store.search._internal.term_shapes import TermShapes, letter_mask
from undercroft_store.search.lexical import _typo_ids, _typo_scan, _typos
from undercroft_store.search.lexicon import Lexicon

# Latin, German, Greek and Cyrillic letters; chr(161) and chr(226) share mask bits with "a" and "b" (mod 64).
ALPHABET = "abcdeflmnorstuäöüßαβγδεабвгд" + "ABC" + chr(97 + 64) + chr(98 + 128)


def _vocabulary(rng: random.Random, size: int) -> list[str]:
    words = {"".join(rng.choice(ALPHABET) for _ in range(rng.randint(1, 11))) for _ in range(size)}
    return sorted(words)


def _edited(rng: random.Random, word: str) -> str:
    letters = list(word)
    for _ in range(rng.randint(0, 3)):
        at = rng.randrange(len(letters) + 1)
        move = rng.choice(("insert", "delete", "replace", "swap"))
        if move == "insert" or not letters:
            letters.insert(at, rng.choice(ALPHABET))
        elif move == "delete":
            del letters[min(at, len(letters) - 1)]
        elif move == "replace":
            letters[min(at, len(letters) - 1)] = rng.choice(ALPHABET)
        elif len(letters) > 1:
            i = min(at, len(letters) - 2)
            letters[i], letters[i + 1] = letters[i + 1], letters[i]
    return "".join(letters)


def _lexicon(terms: list[str]) -> Lexicon:
    lexicon = Lexicon()
    for term in terms:
        lexicon._intern(term)
    return lexicon


def test_the_mask_popcount_never_exceeds_the_letter_sets_difference() -> None:
    rng = random.Random(3)
    words = _vocabulary(rng, 400)
    for _ in range(3000):
        first, second = rng.choice(words), rng.choice(words)
        assert (letter_mask(first) ^ letter_mask(second)).bit_count() <= len(set(first) ^ set(second))


def test_the_scan_equals_the_loop_over_the_whole_vocabulary_and_any_tail() -> None:
    rng = random.Random(11)
    terms = _vocabulary(rng, 3000)
    lexicon = _lexicon(terms)
    queries = [*(_edited(rng, rng.choice(terms)) for _ in range(300)), "x", "ab", "abcdefghijklmnop"]
    found_any = 0
    for query in queries:
        for start in (0, 1, len(terms) // 2, len(terms) - 1, len(terms)):
            expected = {lexicon.term_id(term) for term in _typos(query, set(terms[start:]))}
            got = _typo_scan(query, lexicon, start)
            assert got == expected, (query, start)
            found_any += bool(got)
    assert found_any > 100  # the queries do have neighbours: the equality is not of empty sets


def test_the_shapes_follow_a_growing_vocabulary_and_a_cleared_one() -> None:
    lexicon = _lexicon(["lighthouse", "harbour"])
    assert lexicon.term_id("lighthouse") in _typo_ids("lighthuose", lexicon)
    lexicon._intern("lighthuse")  # interned after the shapes were taken: the next scan extends them
    assert {lexicon.terms[i] for i in _typo_ids("lighthuose", lexicon)} == {"lighthouse", "lighthuse"}
    assert len(lexicon.shapes) == len(lexicon.terms)
    lexicon.clear()
    assert len(lexicon.shapes) == 0
    for term in ("harbor", "lighthose"):
        lexicon._intern(term)
    assert {lexicon.terms[i] for i in _typo_ids("lighthuose", lexicon)} == {"lighthose"}


def test_shapes_extend_only_past_what_they_hold() -> None:
    shapes = TermShapes()
    shapes.extend(["storm", "ferry"])
    shapes.extend(["storm", "ferry", "storms"])
    assert len(shapes) == 3
    assert shapes.near("storn", 1, 0).tolist() == [0, 2]
    assert shapes.near("storn", 1, 1).tolist() == [2]


def test_vectorised_masks_equal_the_per_term_mask_for_short_and_long_terms() -> None:
    rng = random.Random(5)
    terms = [*_vocabulary(rng, 500), "x" * 65 + "yz", "äöü" * 40, "a\x00b"]
    shapes = TermShapes()
    shapes.extend(terms)
    expected = [letter_mask(term) for term in terms[:-1]] + [letter_mask("ab")]  # a NUL sets no bit
    assert shapes._masks.tolist() == expected
    assert shapes._lengths.tolist() == [len(term) for term in terms]
