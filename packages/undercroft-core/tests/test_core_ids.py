"""Drawer ids: golden values pinned (stable across runs and platforms), recipe independence, shape validation."""

import hashlib
import struct
import subprocess
import sys

import pytest
from undercroft_core import (
    InvalidInput,
    InvalidName,
    append_drawer_id,
    is_drawer_id,
    source_drawer_id,
    validate_drawer_id,
)
from undercroft_core.drawer import Drawer
from undercroft_core.ids import PUBLIC_DRAWER_IDS, VAULT_ID_RECIPE_KEYED, VAULT_ID_RECIPE_PUBLIC, DrawerIds

GOLDEN_SOURCE = [
    (("backend", "decisions", "notes/api.md", 0), "drawer_48c045750ace704fd51f6d5cc5905780"),
    (("backend", "decisions", "notes/api.md", 1), "drawer_1ba73345cf4eb4919fbafa2bd99a25d9"),
    (("Jürgen", "проект", "文件.txt", 7), "drawer_e2fadcbd8ba301ea663a9f23e0f4055a"),
]
GOLDEN_APPEND = [
    (("backend", "decisions", 0), "drawer_43b197287da5e2350ce3b618d44d4705"),
    (("backend", "decisions", 1), "drawer_cf850706415d719fb8b1fcb7fdecdc27"),
]


@pytest.mark.parametrize(("args", "expected"), GOLDEN_SOURCE)
def test_source_ids_are_golden(args: tuple[str, str, str, int], expected: str) -> None:
    assert source_drawer_id(*args) == expected


@pytest.mark.parametrize(("args", "expected"), GOLDEN_APPEND)
def test_append_ids_are_golden(args: tuple[str, str, int], expected: str) -> None:
    assert append_drawer_id(*args) == expected


def _reference(*parts: str) -> str:
    material = b"undercroft.drawer-id.v1" + b"".join(struct.pack(">Q", len(p.encode())) + p.encode() for p in parts)
    return "drawer_" + hashlib.sha256(material).hexdigest()[:32]


def test_recipe_matches_its_documented_definition() -> None:
    assert source_drawer_id("w", "r", "s", 3) == _reference("source", "w", "r", "s", "3", "1")
    assert append_drawer_id("w", "r", 3) == _reference("append", "w", "r", "", "3", "1")


def test_ids_are_stable_in_a_fresh_interpreter() -> None:
    code = "from undercroft_core import source_drawer_id as f; print(f('backend','decisions','notes/api.md',0))"
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True, env={"PYTHONHASHSEED": "123"}
    )
    assert out.stdout.strip() == GOLDEN_SOURCE[0][1]


def test_every_component_moves_the_id() -> None:
    base = source_drawer_id("w", "r", "s", 0)
    assert (
        len(
            {
                base,
                source_drawer_id("w2", "r", "s", 0),
                source_drawer_id("w", "r2", "s", 0),
                source_drawer_id("w", "r", "s2", 0),
                source_drawer_id("w", "r", "s", 1),
            }
        )
        == 5
    )
    # Length prefixes: moving a character across a field boundary changes the id.
    assert source_drawer_id("ab", "c", "s", 0) != source_drawer_id("a", "bc", "s", 0)
    # The two recipes never collide on the same position.
    assert append_drawer_id("w", "r", 0) != _reference("source", "w", "r", "", "0", "1")


def test_bad_components_are_refused() -> None:
    with pytest.raises(InvalidName, match="invalid wing name"):
        source_drawer_id("../w", "r", "s", 0)
    with pytest.raises(InvalidName, match="invalid room name"):
        append_drawer_id("w", "r/x", 0)
    with pytest.raises(InvalidInput, match="chunk_index must be a non-negative integer"):
        source_drawer_id("w", "r", "s", -1)
    with pytest.raises(InvalidInput, match="append index must be a non-negative integer"):
        append_drawer_id("w", "r", True)  # type: ignore[arg-type]
    with pytest.raises(InvalidInput, match="source must be a non-empty string"):
        source_drawer_id("w", "r", "", 0)
    with pytest.raises(InvalidInput, match="unsupported normalize_version 2"):
        source_drawer_id("w", "r", "s", 0, normalize_version=2)
    with pytest.raises(InvalidInput, match="lone surrogate"):
        source_drawer_id("w", "r", "a\udc00", 0)


@pytest.mark.parametrize(
    "value",
    [
        "drawer_48C045750ACE704FD51F6D5CC5905780",
        "drawer_48c045750ace704fd51f6d5cc590578",
        "drawer_48c045750ace704fd51f6d5cc59057800",
        "drawer_48c045750ace704fd51f6d5cc590578g",
        "Drawer_48c045750ace704fd51f6d5cc5905780",
        "drawer_48c045750ace704fd51f6d5cc5905780\n",
        " drawer_48c045750ace704fd51f6d5cc5905780",
        "drawer_../../../etc/passwd0000000000000",
        "",
        None,
        42,
    ],
)
def test_id_shape_is_validated(value: object) -> None:
    assert not is_drawer_id(value)
    with pytest.raises(InvalidInput, match="invalid drawer id"):
        validate_drawer_id(value)


def test_valid_shape_passes() -> None:
    assert validate_drawer_id(GOLDEN_SOURCE[0][1]) == GOLDEN_SOURCE[0][1]


# --- The vault id recipes: sha256-v1 (public) and hmac-v1 (keyed) ------------------------------------------------

_KEY = bytes(range(32))


def test_the_keyed_recipe_pins_its_known_answers() -> None:
    """Recomputed by hand from the definition (stdlib hmac over the hmac-v1 domain tag and the fields)."""
    keyed = DrawerIds.keyed(_KEY)
    assert keyed.recipe == VAULT_ID_RECIPE_KEYED and keyed.is_keyed
    assert keyed.source("backend", "decisions", "notes/api.md", 0) == "drawer_ecaaf4f78798dd0498c49b0a6032e18e"
    assert keyed.append("backend", "decisions", 0) == "drawer_398852893c9746c017313de5b93fa2dd"


def test_the_public_recipe_is_the_module_functions() -> None:
    assert PUBLIC_DRAWER_IDS.recipe == VAULT_ID_RECIPE_PUBLIC and not PUBLIC_DRAWER_IDS.is_keyed
    assert (
        PUBLIC_DRAWER_IDS.source("backend", "decisions", "notes/api.md", 0) == "drawer_48c045750ace704fd51f6d5cc5905780"
    )
    assert PUBLIC_DRAWER_IDS.append("backend", "decisions", 1) == "drawer_cf850706415d719fb8b1fcb7fdecdc27"


def test_a_keyed_id_confirms_no_guess_without_its_key() -> None:
    """The attacker's recomputation of a guessed (wing, room, source, index) — public, or under any other key —
    never gives the keyed id; the same key always does."""
    keyed = DrawerIds.keyed(_KEY)
    stored = keyed.source("backend", "decisions", "notes/api.md", 0)
    assert source_drawer_id("backend", "decisions", "notes/api.md", 0) != stored
    assert DrawerIds.keyed(bytes(32)).source("backend", "decisions", "notes/api.md", 0) != stored
    assert DrawerIds.keyed(bytes(_KEY)).source("backend", "decisions", "notes/api.md", 0) == stored


def test_a_drawer_re_derives_under_the_recipe_it_is_given() -> None:
    keyed = DrawerIds.keyed(_KEY)
    drawer = Drawer(
        id=keyed.append("w", "r", 3),
        content="x",
        wing="w",
        room="r",
        chunk_index=3,
        id_recipe="append",
        added_by="t",
        filed_at="2026-01-01T00:00:00Z",
    )
    assert drawer.expected_id(keyed) == drawer.id != drawer.expected_id()


@pytest.mark.parametrize(
    ("recipe", "key", "message"),
    [
        ("hmac-v1", None, "32-byte key"),
        ("hmac-v1", b"short", "32-byte key"),
        ("sha256-v1", _KEY, "takes no key"),
        ("md5-v0", None, "unknown drawer id recipe"),
    ],
)
def test_a_malformed_recipe_is_refused(recipe: str, key: bytes | None, message: str) -> None:
    with pytest.raises(InvalidInput, match=message):
        DrawerIds(recipe, key)


def test_the_key_never_shows_in_repr() -> None:
    assert repr(DrawerIds.keyed(_KEY)) == "DrawerIds('hmac-v1')"
