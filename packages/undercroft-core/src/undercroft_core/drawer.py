"""The drawer: a verbatim chunk of text with its full metadata, and ``meta_at_rest()`` — what a sealed vault exposes.

A sealed vault stores the content sealed and ``meta_at_rest()`` in the clear (HMAC-covered). That encoding keeps
labels, offsets and ISO dates and never a content word: time mentions lose their text and entities are
dropped whole. :data:`META_AT_REST_FIELDS` is the exact inventory, pinned by a test in both directions.

Encoding (``meta_version`` 1): a JSON object with every key of the inventory present (``null`` when absent),
keys sorted by code point, separators ``,`` and ``:`` with no whitespace, non-ASCII kept as UTF-8 (no
``\\u`` escapes), no NaN, integers in decimal — so equal drawers give equal bytes on every machine.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from undercroft_core._internal.checks import (
    check_date,
    check_date_or_timestamp,
    check_label,
    check_offset_pair,
    check_timestamp,
)
from undercroft_core.errors import InvalidInput
from undercroft_core.ids import ID_RECIPE_APPEND, ID_RECIPE_SOURCE, ID_RECIPES, PUBLIC_DRAWER_IDS, DrawerIds
from undercroft_core.ids import validate_drawer_id as _validate_drawer_id
from undercroft_core.names import validate_name
from undercroft_core.normalisation import NORMALIZE_VERSION, SUPPORTED_NORMALIZE_VERSIONS
from undercroft_core.vocabulary import QUARANTINE_WING, validate_kind

__all__ = [
    "IN_MEMORY_FIELDS",
    "META_AT_REST_FIELDS",
    "META_VERSION",
    "OCCURRENCE_AT_REST_FIELDS",
    "TIME_MENTION_AT_REST_FIELDS",
    "Drawer",
    "Entity",
    "Occurrence",
    "TimeMention",
    "canonical_json",
]

#: Version of the ``meta_at_rest()`` encoding.
META_VERSION = 1
#: Every key of ``meta_at_rest()``: the exact clear-text exposure of a drawer row on a sealed vault.
META_AT_REST_FIELDS: tuple[str, ...] = (
    "added_by",
    "agent",
    "channel",
    "chunk_index",
    "content_date",
    "filed_at",
    "hall",
    "id_recipe",
    "intended_room",
    "intended_wing",
    "kind",
    "meta_version",
    "normalize_version",
    "occurrences",
    "room",
    "session",
    "source_file",
    "supersedes",
    "time_mentions",
    "updated_at",
    "wing",
)
#: Keys of one time mention at rest (its ``text`` never is).
TIME_MENTION_AT_REST_FIELDS: tuple[str, ...] = ("end", "kind", "resolved", "resolved_end", "start")
#: Keys of one occurrence at rest.
OCCURRENCE_AT_REST_FIELDS: tuple[str, ...] = ("content_date", "filed_at")
#: Drawer fields that never enter ``meta_at_rest()``: the id (its own column), the content (sealed), entities.
IN_MEMORY_FIELDS: tuple[str, ...] = ("content", "entities", "id")

_MENTION_KIND = re.compile(r"[a-z][a-z0-9_]{0,31}")
_MAX_SOURCE_CHARS = 4096
_MAX_CLAIM_CHARS = 256


def canonical_json(value: object) -> bytes:
    """The canonical encoding used by ``meta_at_rest()``: sorted keys, no whitespace, UTF-8, no NaN."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode("utf-8")


@dataclass(frozen=True, slots=True)
class TimeMention:
    """A date the content names, resolved against the drawer's anchor: ``[start, end)`` code-point offsets,
    ``resolved`` (ISO date, or the first day of a period), ``resolved_end`` (last day of a period, else None),
    ``kind`` (a short lowercase label from the scanner), and ``text`` — the words, held in memory only."""

    start: int
    end: int
    resolved: str
    resolved_end: str | None
    kind: str
    text: str | None = None

    def __post_init__(self) -> None:
        check_offset_pair(self.start, self.end, None, "time mention")
        check_date(self.resolved, "time mention resolved")
        if self.resolved_end is not None:
            check_date(self.resolved_end, "time mention resolved_end")
            if self.resolved_end < self.resolved:
                raise InvalidInput(f"time mention period ends ({self.resolved_end}) before it starts ({self.resolved})")
        if not isinstance(self.kind, str) or _MENTION_KIND.fullmatch(self.kind) is None:
            raise InvalidInput(f"time mention kind must match [a-z][a-z0-9_]{{0,31}}, got {self.kind!r}")
        if self.text is not None and not isinstance(self.text, str):
            raise InvalidInput(f"time mention text must be a string or None, got {type(self.text).__name__}")

    def at_rest(self) -> dict[str, Any]:
        """The mention as stored: offsets, dates and kind, never the text."""
        return {
            "start": self.start,
            "end": self.end,
            "resolved": self.resolved,
            "resolved_end": self.resolved_end,
            "kind": self.kind,
        }


@dataclass(frozen=True, slots=True)
class Entity:
    """A named entity read from the drawer's own words (in memory only; never stored in the clear)."""

    name: str
    start: int
    end: int

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or self.name == "":
            raise InvalidInput(f"entity name must be a non-empty string, got {self.name!r}")
        check_offset_pair(self.start, self.end, None, "entity")


@dataclass(frozen=True, slots=True)
class Occurrence:
    """One day the same words were recorded: when it was filed and the content date it carried."""

    filed_at: str
    content_date: str | None = None

    def __post_init__(self) -> None:
        check_timestamp(self.filed_at, "occurrence filed_at")
        if self.content_date is not None:
            check_date_or_timestamp(self.content_date, "occurrence content_date")

    def at_rest(self) -> dict[str, Any]:
        """The occurrence as stored."""
        return {"filed_at": self.filed_at, "content_date": self.content_date}


def _optional_label(value: object, what: str, max_chars: int) -> None:
    if value is not None:
        check_label(value, what, max_chars=max_chars)


@dataclass(frozen=True, slots=True)
class Drawer:
    """A verbatim drawer and its metadata. Construction validates every field and rejects, never coerces.

    ``id_recipe`` says how ``id`` was made (``source``: from ``source_file`` + ``chunk_index``; ``append``:
    ``chunk_index`` is the unique append index). ``filed_at``/``updated_at`` are UTC timestamps stamped by
    the writer's injected clock; ``content_date`` is when the words were written (a date or a timestamp).
    ``intended_wing``/``intended_room`` are set only on a drawer diverted into the quarantine wing.
    """

    id: str
    content: str
    wing: str
    room: str
    chunk_index: int
    id_recipe: str
    added_by: str
    filed_at: str
    hall: str | None = None
    source_file: str | None = None
    updated_at: str | None = None
    content_date: str | None = None
    normalize_version: int = NORMALIZE_VERSION
    kind: str | None = None
    supersedes: str | None = None
    agent: str | None = None
    channel: str | None = None
    session: str | None = None
    intended_wing: str | None = None
    intended_room: str | None = None
    occurrences: tuple[Occurrence, ...] = field(default=())
    time_mentions: tuple[TimeMention, ...] = field(default=())
    entities: tuple[Entity, ...] = field(default=())

    def __post_init__(self) -> None:
        _validate_drawer_id(self.id)
        if not isinstance(self.content, str) or self.content.strip() == "":
            raise InvalidInput("drawer content must be a non-empty string")
        try:
            self.content.encode("utf-8")
        except UnicodeEncodeError:
            raise InvalidInput("drawer content is not valid Unicode (lone surrogate)") from None
        validate_name(self.wing, what="wing")
        validate_name(self.room, what="room")
        if self.hall is not None:
            validate_name(self.hall, what="hall")
        if isinstance(self.chunk_index, bool) or not isinstance(self.chunk_index, int) or self.chunk_index < 0:
            raise InvalidInput(f"chunk_index must be a non-negative integer, got {self.chunk_index!r}")
        if self.id_recipe not in ID_RECIPES:
            raise InvalidInput(f"unknown id_recipe {self.id_recipe!r}: expected one of {', '.join(ID_RECIPES)}")
        if self.id_recipe == ID_RECIPE_SOURCE and self.source_file is None:
            raise InvalidInput("a drawer with id_recipe 'source' needs a source_file")
        check_label(self.added_by, "added_by", max_chars=64)
        check_timestamp(self.filed_at, "filed_at")
        _optional_label(self.source_file, "source_file", _MAX_SOURCE_CHARS)
        if self.updated_at is not None:
            check_timestamp(self.updated_at, "updated_at")
        if self.content_date is not None:
            check_date_or_timestamp(self.content_date, "content_date")
        version = self.normalize_version
        if isinstance(version, bool) or not isinstance(version, int) or version not in SUPPORTED_NORMALIZE_VERSIONS:
            raise InvalidInput(f"unsupported normalize_version {version!r}")
        if self.kind is not None:
            validate_kind(self.kind)
        if self.supersedes is not None:
            _validate_drawer_id(self.supersedes)
            if self.supersedes == self.id:
                raise InvalidInput("a drawer cannot supersede itself")
        for claim in ("agent", "channel", "session"):
            _optional_label(getattr(self, claim), claim, _MAX_CLAIM_CHARS)
        self._check_diversion()
        self._check_sequences()

    def _check_diversion(self) -> None:
        if (self.intended_wing is None) != (self.intended_room is None):
            raise InvalidInput("intended_wing and intended_room are set together or not at all")
        if self.intended_wing is not None:
            if self.wing != QUARANTINE_WING:
                raise InvalidInput(f"intended_wing/intended_room are only valid in the {QUARANTINE_WING!r} wing")
            validate_name(self.intended_wing, what="intended wing")
            validate_name(self.intended_room, what="intended room")

    def _check_sequences(self) -> None:
        length = len(self.content)
        for name, kind in (("occurrences", Occurrence), ("time_mentions", TimeMention), ("entities", Entity)):
            value = getattr(self, name)
            if not isinstance(value, tuple) or not all(isinstance(item, kind) for item in value):
                raise InvalidInput(f"{name} must be a tuple of {kind.__name__}")
        for mention in self.time_mentions:
            check_offset_pair(mention.start, mention.end, length, "time mention")
        for entity in self.entities:
            check_offset_pair(entity.start, entity.end, length, "entity")

    def expected_id(self, ids: DrawerIds = PUBLIC_DRAWER_IDS) -> str:
        """The id this drawer's recipe gives for its wing, room, source and chunk index under the vault id
        recipe ``ids`` (the store passes its own; the default is the public ``sha256-v1``)."""
        if self.id_recipe == ID_RECIPE_APPEND:
            return ids.append(self.wing, self.room, self.chunk_index, normalize_version=self.normalize_version)
        assert self.source_file is not None
        return ids.source(
            self.wing, self.room, self.source_file, self.chunk_index, normalize_version=self.normalize_version
        )

    def meta_at_rest_dict(self) -> dict[str, Any]:
        """The clear-text metadata as a dict with exactly the :data:`META_AT_REST_FIELDS` keys."""
        return {
            "added_by": self.added_by,
            "agent": self.agent,
            "channel": self.channel,
            "chunk_index": self.chunk_index,
            "content_date": self.content_date,
            "filed_at": self.filed_at,
            "hall": self.hall,
            "id_recipe": self.id_recipe,
            "intended_room": self.intended_room,
            "intended_wing": self.intended_wing,
            "kind": self.kind,
            "meta_version": META_VERSION,
            "normalize_version": self.normalize_version,
            "occurrences": [occurrence.at_rest() for occurrence in self.occurrences],
            "room": self.room,
            "session": self.session,
            "source_file": self.source_file,
            "supersedes": self.supersedes,
            "time_mentions": [mention.at_rest() for mention in self.time_mentions],
            "updated_at": self.updated_at,
            "wing": self.wing,
        }

    def meta_at_rest(self) -> bytes:
        """The canonical, bytes-stable encoding of :meth:`meta_at_rest_dict` (see the module docstring)."""
        return canonical_json(self.meta_at_rest_dict())

    @classmethod
    def from_at_rest(cls, drawer_id: str, content: str, meta: bytes) -> Drawer:
        """Rebuild a drawer from its id, (unsealed) content and ``meta_at_rest()`` bytes.

        Strict: unknown or missing keys, duplicate keys, a different ``meta_version`` or bytes that are not
        the canonical encoding of what they decode to raise :class:`InvalidInput`. Mention texts and
        entities are not at rest, so they come back empty.
        """
        document = _decode_meta(meta)
        mentions = tuple(
            TimeMention(
                start=item["start"],
                end=item["end"],
                resolved=item["resolved"],
                resolved_end=item["resolved_end"],
                kind=item["kind"],
            )
            for item in _records(document["time_mentions"], TIME_MENTION_AT_REST_FIELDS, "time mention")
        )
        occurrences = tuple(
            Occurrence(filed_at=item["filed_at"], content_date=item["content_date"])
            for item in _records(document["occurrences"], OCCURRENCE_AT_REST_FIELDS, "occurrence")
        )
        scalars = {
            key: value for key, value in document.items() if key not in ("meta_version", "occurrences", "time_mentions")
        }
        drawer = cls(id=drawer_id, content=content, occurrences=occurrences, time_mentions=mentions, **scalars)
        if drawer.meta_at_rest() != meta:
            raise InvalidInput("meta at rest is not in canonical form")
        return drawer


def _reject_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    document: dict[str, Any] = {}
    for key, value in pairs:
        if key in document:
            raise InvalidInput(f"meta at rest repeats the key {key!r}")
        document[key] = value
    return document


def _decode_meta(meta: bytes) -> dict[str, Any]:
    if not isinstance(meta, bytes):
        raise InvalidInput(f"meta at rest must be bytes, got {type(meta).__name__}")
    try:
        document = json.loads(meta.decode("utf-8"), object_pairs_hook=_reject_duplicates)
    except (UnicodeDecodeError, json.JSONDecodeError) as error:
        raise InvalidInput(f"meta at rest is not UTF-8 JSON: {error}") from None
    if not isinstance(document, dict):
        raise InvalidInput("meta at rest must be a JSON object")
    keys = set(document)
    if keys != set(META_AT_REST_FIELDS):
        missing = sorted(set(META_AT_REST_FIELDS) - keys)
        unknown = sorted(keys - set(META_AT_REST_FIELDS))
        raise InvalidInput(f"meta at rest has missing keys {missing} and unknown keys {unknown}")
    if document["meta_version"] != META_VERSION or isinstance(document["meta_version"], bool):
        raise InvalidInput(f"unsupported meta_version {document['meta_version']!r}")
    return document


def _records(value: object, fields: tuple[str, ...], what: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise InvalidInput(f"{what}s at rest must be a JSON array")
    for item in value:
        if not isinstance(item, dict) or set(item) != set(fields):
            raise InvalidInput(f"a {what} at rest must have exactly the keys {list(fields)}")
    return value
