"""The paradigm corpus, end to end through the real lexical channel at realistic drawer length.

Every pair must match, declared or not: the drawer is tokenised, its language resolved from its
own text (or declared), its vocabulary indexed, and the query term expanded against it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import pytest
from undercroft_core.language import (
    LANGUAGES,
    VocabularyIndex,
    match_terms,
    normalize_term,
    resolve_language,
    tokenize,
)

HERE = Path(__file__).parent


@dataclass(frozen=True)
class Pair:
    """One corpus row: the query term, the form in the drawer, the drawer it sits in."""

    language: str
    query: str
    form: str
    drawer: str
    expect: str = "match"
    note: str = ""


def _sections() -> tuple[dict[str, str], list[tuple[str, str, str]]]:
    templates: dict[str, str] = {}
    rows: list[tuple[str, str, str]] = []
    language = ""
    for line in (HERE / "language_paradigms.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith("@ "):
            language = line[2:].strip()
        elif line.startswith("> "):
            templates[language] = line[2:]
        else:
            query, form = line.split()
            rows.append((language, query, form))
    return templates, rows


def paradigm_pairs() -> list[Pair]:
    """Every paradigm pair, with its drawer built from its language's template."""
    templates, rows = _sections()
    return [Pair(lang, query, form, templates[lang].replace("{form}", form)) for lang, query, form in rows]


def control_pairs() -> list[Pair]:
    """Every control row: pairs that must stay apart, and the known prices that already meet."""
    templates, _rows = _sections()
    pairs = []
    for line in (HERE / "language_controls.txt").read_text(encoding="utf-8").splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        language, query, form, expect, note = (field.strip() for field in line.split("|"))
        pairs.append(Pair(language, query, form, templates[language].replace("{form}", form), expect, note))
    return pairs


PAIRS = paradigm_pairs()


def _morph_terms(pair: Pair, declared: str | None) -> tuple[bool, set[str]]:
    tokens = tokenize(pair.drawer)
    index = VocabularyIndex(tokens)
    resolution = resolve_language(tokens, declared=declared)
    (matched,) = match_terms([normalize_term(pair.query)], index, resolution)
    return matched.exact, {m.term for m in matched.morph}


def test_the_corpus_is_large_enough() -> None:
    assert len(PAIRS) >= 191
    per_language = Counter(pair.language for pair in PAIRS)
    assert set(per_language) == set(LANGUAGES)
    assert min(per_language.values()) >= 10
    for pair in PAIRS:
        assert 250 <= len(pair.drawer) <= 900, (pair.language, len(pair.drawer))


@pytest.mark.parametrize("declared", [False, True], ids=["undeclared", "declared"])
@pytest.mark.parametrize("pair", PAIRS, ids=lambda p: f"{p.language}:{p.query}>{p.form}")
def test_paradigm_pair_matches_end_to_end(pair: Pair, declared: bool) -> None:
    exact, morph = _morph_terms(pair, pair.language if declared else None)
    assert not exact, "the query term must not already be in the drawer: this row would test nothing"
    assert normalize_term(pair.form) in morph


@pytest.mark.parametrize("language", sorted(LANGUAGES))
def test_each_template_resolves_to_its_own_language(language: str) -> None:
    pair = next(p for p in PAIRS if p.language == language)
    assert resolve_language(pair.drawer).language == language


CONTROLS = control_pairs()


def test_the_controls_are_large_enough() -> None:
    assert len(CONTROLS) >= 58
    assert len({pair.language for pair in CONTROLS}) >= 8
    assert Counter(pair.expect for pair in CONTROLS) == {"apart": 49, "price": 16}


@pytest.mark.parametrize("pair", CONTROLS, ids=lambda p: f"{p.language}:{p.query}|{p.form}:{p.expect}")
def test_control_row_end_to_end(pair: Pair) -> None:
    exact, morph = _morph_terms(pair, pair.language)
    assert not exact
    met = normalize_term(pair.form) in morph
    if pair.expect == "apart":
        assert not met, f"{pair.query}/{pair.form} now meet: {pair.note}"
    else:
        # A pinned price that stopped meeting is a behaviour change to report, not a silent win.
        assert met, f"the known price {pair.query}/{pair.form} no longer meets: update docs/languages.md"
