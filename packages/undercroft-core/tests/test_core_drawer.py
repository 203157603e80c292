"""The drawer model and meta_at_rest(): the exact inventory of what a sealed vault exposes, pinned both ways."""

import dataclasses
import json

import pytest
from undercroft_core import (
    IN_MEMORY_FIELDS,
    META_AT_REST_FIELDS,
    OCCURRENCE_AT_REST_FIELDS,
    QUARANTINE_WING,
    TIME_MENTION_AT_REST_FIELDS,
    Drawer,
    Entity,
    InvalidInput,
    InvalidName,
    Occurrence,
    TimeMention,
    append_drawer_id,
    source_drawer_id,
)

# The inventory, written out here on purpose: a field added to or removed from meta_at_rest() without
# updating this list (and docs/core.md) fails. This is the clear-text exposure of every sealed drawer row.
PINNED_AT_REST = {
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
}
PINNED_MENTION_AT_REST = {"start", "end", "resolved", "resolved_end", "kind"}
PINNED_IN_MEMORY = {"id", "content", "entities"}

SECRET = "Zanzibarquokka"
CONTENT = f"Met {SECRET} last Tuesday about the merger; see you on 2024-05-17."


def full_drawer() -> Drawer:
    start = CONTENT.index("last Tuesday")
    iso = CONTENT.index("2024-05-17")
    return Drawer(
        id=source_drawer_id("backend", "decisions", "notes/a.md", 0),
        content=CONTENT,
        wing="backend",
        room="decisions",
        hall="facts",
        chunk_index=0,
        id_recipe="source",
        added_by="mine",
        filed_at="2024-05-20T10:00:00Z",
        updated_at="2024-05-21T09:30:00.250Z",
        content_date="2024-05-16",
        source_file="notes/a.md",
        kind="decision",
        supersedes=append_drawer_id("backend", "decisions", 4),
        agent="claude",
        channel="slack",
        session="s-42",
        occurrences=(Occurrence("2024-05-20T10:00:00Z", "2024-05-16"), Occurrence("2024-06-01T00:00:00Z")),
        time_mentions=(
            TimeMention(start, start + 12, "2024-05-14", None, "relative", text="last Tuesday"),
            TimeMention(iso, iso + 10, "2024-05-17", None, "date", text="2024-05-17"),
        ),
        entities=(Entity(SECRET, 4, 4 + len(SECRET)),),
    )


def test_every_drawer_field_is_classified_exactly_once() -> None:
    fields = {f.name for f in dataclasses.fields(Drawer)}
    at_rest_sources = set(META_AT_REST_FIELDS) - {"meta_version"}
    assert fields == at_rest_sources | PINNED_IN_MEMORY
    assert not (at_rest_sources & PINNED_IN_MEMORY)
    assert set(IN_MEMORY_FIELDS) == PINNED_IN_MEMORY


def test_inventory_fails_in_both_directions() -> None:
    meta = json.loads(full_drawer().meta_at_rest())
    assert set(meta) == PINNED_AT_REST == set(META_AT_REST_FIELDS)
    for mention in meta["time_mentions"]:
        assert set(mention) == PINNED_MENTION_AT_REST == set(TIME_MENTION_AT_REST_FIELDS)
    for occurrence in meta["occurrences"]:
        assert set(occurrence) == set(OCCURRENCE_AT_REST_FIELDS)


def test_no_content_word_reaches_meta_at_rest() -> None:
    drawer = full_drawer()
    meta = drawer.meta_at_rest()
    for word in (SECRET, "Tuesday", "merger"):
        assert word.encode() not in meta
        assert word.casefold().encode() not in meta.lower()
    # The offsets and ISO dates are what remains.
    assert b'"resolved":"2024-05-14"' in meta


GOLDEN_MINIMAL = (
    b'{"added_by":"api","agent":null,"channel":null,"chunk_index":0,"content_date":null,'
    b'"filed_at":"2024-01-02T03:04:05Z","hall":null,"id_recipe":"append","intended_room":null,'
    b'"intended_wing":null,"kind":null,"meta_version":1,"normalize_version":1,"occurrences":[],'
    b'"room":"r\xc3\xa9","session":null,"source_file":null,"supersedes":null,"time_mentions":[],'
    b'"updated_at":null,"wing":"w"}'
)


def test_meta_at_rest_bytes_are_golden() -> None:
    drawer = Drawer(
        id=append_drawer_id("w", "ré", 0),
        content="hello",
        wing="w",
        room="ré",
        chunk_index=0,
        id_recipe="append",
        added_by="api",
        filed_at="2024-01-02T03:04:05Z",
    )
    assert drawer.meta_at_rest() == GOLDEN_MINIMAL
    assert drawer.expected_id() == drawer.id


def test_round_trip_drops_only_in_memory_words() -> None:
    drawer = full_drawer()
    back = Drawer.from_at_rest(drawer.id, drawer.content, drawer.meta_at_rest())
    assert back.meta_at_rest() == drawer.meta_at_rest()
    assert back.entities == ()
    assert all(m.text is None for m in back.time_mentions)
    assert back == dataclasses.replace(
        drawer, entities=(), time_mentions=tuple(dataclasses.replace(m, text=None) for m in drawer.time_mentions)
    )
    assert drawer.expected_id() == drawer.id


@pytest.mark.parametrize(
    ("meta", "message"),
    [
        (GOLDEN_MINIMAL.replace(b'"wing":"w"', b'"wing":"w","extra":1'), "unknown keys \\['extra'\\]"),
        (GOLDEN_MINIMAL.replace(b'"agent":null,', b""), "missing keys \\['agent'\\]"),
        (GOLDEN_MINIMAL.replace(b'"meta_version":1', b'"meta_version":2'), "unsupported meta_version 2"),
        (GOLDEN_MINIMAL.replace(b'"wing":"w"}', b'"wing":"w","wing":"x"}'), "repeats the key 'wing'"),
        (GOLDEN_MINIMAL.replace(b",", b", ", 1), "not in canonical form"),
        (GOLDEN_MINIMAL.replace(b'"room":"r\xc3\xa9"', b'"room":"r\\u00e9"'), "not in canonical form"),
        (GOLDEN_MINIMAL.replace(b'"kind":null', b'"kind":"Decision"'), "unknown kind"),
        (GOLDEN_MINIMAL.replace(b'"wing":"w"', b'"wing":".."'), "invalid wing name"),
        (b"\xff", "not UTF-8 JSON"),
        (b"[]", "must be a JSON object"),
    ],
)
def test_from_at_rest_is_strict(meta: bytes, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        Drawer.from_at_rest(append_drawer_id("w", "ré", 0), "hello", meta)


BASE = dict(
    id=append_drawer_id("w", "r", 0),
    content="hello",
    wing="w",
    room="r",
    chunk_index=0,
    id_recipe="append",
    added_by="api",
    filed_at="2024-01-02T03:04:05Z",
)


@pytest.mark.parametrize(
    ("changes", "error", "message"),
    [
        ({"id": "drawer_xyz"}, InvalidInput, "invalid drawer id"),
        ({"content": "  "}, InvalidInput, "content must be a non-empty string"),
        ({"wing": "../x"}, InvalidName, "invalid wing name"),
        ({"room": ""}, InvalidName, "invalid room name"),
        ({"hall": "a/b"}, InvalidName, "invalid hall name"),
        ({"chunk_index": -1}, InvalidInput, "chunk_index must be a non-negative integer"),
        ({"id_recipe": "random"}, InvalidInput, "unknown id_recipe 'random'"),
        ({"id_recipe": "source"}, InvalidInput, "needs a source_file"),
        ({"added_by": ""}, InvalidInput, "added_by must be a non-empty string"),
        ({"filed_at": "2024-01-02 03:04:05"}, InvalidInput, "filed_at must be a UTC timestamp"),
        ({"filed_at": "2024-02-30T00:00:00Z"}, InvalidInput, "filed_at is not a real instant"),
        ({"updated_at": "2024-01-02T03:04:05+01:00"}, InvalidInput, "updated_at must be a UTC timestamp"),
        ({"content_date": "2024-13-01"}, InvalidInput, "content_date is not a real calendar date"),
        ({"content_date": "yesterday"}, InvalidInput, "content_date must be an ISO date"),
        ({"normalize_version": 9}, InvalidInput, "unsupported normalize_version 9"),
        ({"kind": "secret-plan"}, InvalidInput, "unknown kind"),
        ({"supersedes": "x"}, InvalidInput, "invalid drawer id"),
        ({"supersedes": append_drawer_id("w", "r", 0)}, InvalidInput, "cannot supersede itself"),
        ({"agent": "a\nb"}, InvalidInput, "agent contains the control character U\\+000A"),
        ({"session": "s" * 257}, InvalidInput, "session is 257 characters"),
        ({"intended_wing": "w"}, InvalidInput, "set together"),
        ({"intended_wing": "w", "intended_room": "r"}, InvalidInput, "only valid in the 'quarantine-pending' wing"),
        ({"time_mentions": [TimeMention(0, 1, "2024-01-01", None, "date")]}, InvalidInput, "must be a tuple"),
        ({"time_mentions": (TimeMention(0, 9, "2024-01-01", None, "date"),)}, InvalidInput, "runs past the end"),
        ({"entities": (Entity("x", 3, 6),)}, InvalidInput, "runs past the end"),
    ],
)
def test_bad_declarations_are_refused(changes: dict[str, object], error: type[Exception], message: str) -> None:
    with pytest.raises(error, match=message):
        Drawer(**{**BASE, **changes})  # type: ignore[arg-type]


def test_diverted_drawer_keeps_its_intended_destination() -> None:
    drawer = Drawer(**{**BASE, "wing": QUARANTINE_WING, "intended_wing": "w", "intended_room": "r"})  # type: ignore[arg-type]
    meta = json.loads(drawer.meta_at_rest())
    assert (meta["wing"], meta["intended_wing"], meta["intended_room"]) == (QUARANTINE_WING, "w", "r")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        ((3, 3, "2024-01-01", None, "date"), "empty or reversed"),
        ((-1, 3, "2024-01-01", None, "date"), "start must be a non-negative integer"),
        ((0, 3, "2024-1-01", None, "date"), "resolved must be an ISO date"),
        ((0, 3, "2024-01-05", "2024-01-01", "period"), "ends \\(2024-01-01\\) before it starts"),
        ((0, 3, "2024-01-01", None, "Date"), "kind must match"),
        ((0, 3, "2024-01-01", None, "last tuesday"), "kind must match"),
    ],
)
def test_time_mention_validation(args: tuple[object, ...], message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        TimeMention(*args)  # type: ignore[arg-type]


def test_drawer_is_immutable() -> None:
    drawer = Drawer(**BASE)  # type: ignore[arg-type]
    with pytest.raises(dataclasses.FrozenInstanceError):
        drawer.wing = "x"  # type: ignore[misc]
