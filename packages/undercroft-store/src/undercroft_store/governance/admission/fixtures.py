"""The committed attack-fixture corpus: loader and validation.

`data/fixtures.json` holds the injection-shaped texts the similarity signal indexes; `data/paraphrases.json`
holds near-paraphrases of some of them, written to dodge every marker substring, which pin the similarity
threshold from above (they are never indexed). Both ship as package data.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Final

from undercroft_core.errors import InvalidInput

__all__ = [
    "FIXTURE_FAMILIES",
    "AttackFixture",
    "Paraphrase",
    "load_fixtures",
    "load_paraphrases",
    "parse_fixtures",
    "parse_paraphrases",
]

#: The closed set of attack families a fixture declares.
FIXTURE_FAMILIES: Final[tuple[str, ...]] = (
    "direct-override",
    "system-prompt",
    "role-play",
    "memory-injection",
    "indirect-quoted",
    "tool-call",
    "exfiltration",
    "encoded",
    "multilingual",
)
_FORMAT_VERSION: Final = 1
_MAX_TEXT: Final = 4096


@dataclass(frozen=True)
class AttackFixture:
    """One committed attack text: a stable id, its family, its language code and the text."""

    id: str
    family: str
    language: str
    text: str


@dataclass(frozen=True)
class Paraphrase:
    """A near-paraphrase of the fixture `of`, used only to pin the similarity threshold."""

    id: str
    of: str
    text: str


def _document(raw: bytes, key: str, what: str) -> list[dict[str, object]]:
    try:
        document = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as problem:
        raise InvalidInput(f"{what} is not UTF-8 JSON: {problem}") from problem
    if not isinstance(document, dict) or set(document) != {"version", key}:
        raise InvalidInput(f"{what} must be an object with exactly the keys version and {key}")
    if document["version"] != _FORMAT_VERSION:
        raise InvalidInput(f"{what} has version {document['version']!r}; this build reads version {_FORMAT_VERSION}")
    entries = document[key]
    if not isinstance(entries, list) or not entries:
        raise InvalidInput(f"{what} must list at least one entry under {key}")
    return entries


def _fields(entry: object, keys: tuple[str, ...], what: str, index: int) -> dict[str, str]:
    if not isinstance(entry, dict) or set(entry) != set(keys):
        raise InvalidInput(f"{what} entry {index} must have exactly the keys {', '.join(keys)}")
    for key in keys:
        field = entry[key]
        if not isinstance(field, str) or not field.strip():
            raise InvalidInput(f"{what} entry {index}: {key} must be a non-empty string")
    if len(entry["text"]) > _MAX_TEXT:
        raise InvalidInput(f"{what} entry {index}: text is longer than {_MAX_TEXT} characters")
    return entry


def _unique(ids: list[str], what: str) -> None:
    seen: set[str] = set()
    for identifier in ids:
        if identifier in seen:
            raise InvalidInput(f"{what} repeats the id {identifier!r}")
        seen.add(identifier)


def parse_fixtures(raw: bytes) -> tuple[AttackFixture, ...]:
    """Parse and validate a fixture document (the `data/fixtures.json` format)."""
    what = "the fixture corpus"
    fixtures = []
    for index, entry in enumerate(_document(raw, "fixtures", what)):
        fields = _fields(entry, ("id", "family", "language", "text"), what, index)
        if fields["family"] not in FIXTURE_FAMILIES:
            raise InvalidInput(
                f"{what} entry {index}: unknown family {fields['family']!r}; expected one of "
                + ", ".join(FIXTURE_FAMILIES)
            )
        fixtures.append(AttackFixture(fields["id"], fields["family"], fields["language"], fields["text"]))
    _unique([fixture.id for fixture in fixtures], what)
    return tuple(fixtures)


def parse_paraphrases(raw: bytes, fixtures: tuple[AttackFixture, ...]) -> tuple[Paraphrase, ...]:
    """Parse and validate a paraphrase document; every `of` must name a fixture in `fixtures`."""
    what = "the paraphrase set"
    known = {fixture.id for fixture in fixtures}
    paraphrases = []
    for index, entry in enumerate(_document(raw, "paraphrases", what)):
        fields = _fields(entry, ("id", "of", "text"), what, index)
        if fields["of"] not in known:
            raise InvalidInput(f"{what} entry {index}: paraphrases unknown fixture {fields['of']!r}")
        paraphrases.append(Paraphrase(fields["id"], fields["of"], fields["text"]))
    _unique([paraphrase.id for paraphrase in paraphrases], what)
    return tuple(paraphrases)


def _data(name: str) -> bytes:
    return resources.files("undercroft_store.governance.admission").joinpath("data").joinpath(name).read_bytes()


@cache
def load_fixtures() -> tuple[AttackFixture, ...]:
    """The committed fixture corpus (read once per process)."""
    return parse_fixtures(_data("fixtures.json"))


@cache
def load_paraphrases() -> tuple[Paraphrase, ...]:
    """The committed near-paraphrases (read once per process)."""
    return parse_paraphrases(_data("paraphrases.json"), load_fixtures())
