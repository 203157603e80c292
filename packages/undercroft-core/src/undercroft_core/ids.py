"""Deterministic drawer ids, and the id shape every store path validates (an id is an AAD component).

Two recipes, named by the drawer's ``id_recipe`` field:

* ``source`` — mined, swept and imported drawers: the id is a function of (wing, room, source, chunk_index,
  normalize_version), so processing the same file twice updates the same drawers in place.
* ``append`` — API saves: no source exists, so ``chunk_index`` carries a unique append index chosen by the
  writer and the same text saved twice is two drawers.

The digest is SHA-256 over a domain tag and length-prefixed UTF-8 fields (a field can never bleed into its
neighbour), truncated to 128 bits and rendered ``drawer_<32 lowercase hex>``.
"""

from __future__ import annotations

import hashlib
import re
import struct

from undercroft_core.errors import InvalidInput
from undercroft_core.names import validate_name
from undercroft_core.normalisation import NORMALIZE_VERSION, SUPPORTED_NORMALIZE_VERSIONS

__all__ = [
    "DRAWER_ID_PATTERN",
    "ID_RECIPES",
    "ID_RECIPE_APPEND",
    "ID_RECIPE_SOURCE",
    "append_drawer_id",
    "is_drawer_id",
    "source_drawer_id",
    "validate_drawer_id",
]

#: Recipe of ids derived from a source path and a chunk position.
ID_RECIPE_SOURCE = "source"
#: Recipe of ids derived from a writer-chosen unique append index.
ID_RECIPE_APPEND = "append"
#: Every recipe a drawer may name.
ID_RECIPES: tuple[str, ...] = (ID_RECIPE_APPEND, ID_RECIPE_SOURCE)

#: The only shape a drawer id may have.
DRAWER_ID_PATTERN = re.compile(r"drawer_[0-9a-f]{32}")

_DOMAIN = b"undercroft.drawer-id.v1"
_MAX_SOURCE_BYTES = 4096


def _field(value: str) -> bytes:
    encoded = value.encode("utf-8")
    return struct.pack(">Q", len(encoded)) + encoded


def _digest(recipe: str, wing: str, room: str, source: str, chunk_index: int, normalize_version: int) -> str:
    material = _DOMAIN + b"".join(
        _field(part) for part in (recipe, wing, room, source, str(chunk_index), str(normalize_version))
    )
    return "drawer_" + hashlib.sha256(material).hexdigest()[:32]


def _check_index(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(f"{what} must be a non-negative integer, got {value!r}")
    return value


def _check_version(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value not in SUPPORTED_NORMALIZE_VERSIONS:
        supported = sorted(SUPPORTED_NORMALIZE_VERSIONS)
        raise InvalidInput(f"unsupported normalize_version {value!r}: expected one of {supported}")
    return value


def source_drawer_id(
    wing: str, room: str, source: str, chunk_index: int, *, normalize_version: int = NORMALIZE_VERSION
) -> str:
    """The id of chunk ``chunk_index`` of ``source`` filed in ``wing``/``room`` (stable across runs and machines)."""
    validate_name(wing, what="wing")
    validate_name(room, what="room")
    if not isinstance(source, str) or source == "":
        raise InvalidInput(f"source must be a non-empty string, got {source!r}")
    try:
        encoded = source.encode("utf-8")
    except UnicodeEncodeError:
        raise InvalidInput("source is not valid Unicode (lone surrogate)") from None
    if len(encoded) > _MAX_SOURCE_BYTES:
        raise InvalidInput(f"source is longer than {_MAX_SOURCE_BYTES} UTF-8 bytes")
    index = _check_index(chunk_index, "chunk_index")
    return _digest(ID_RECIPE_SOURCE, wing, room, source, index, _check_version(normalize_version))


def append_drawer_id(wing: str, room: str, append_index: int, *, normalize_version: int = NORMALIZE_VERSION) -> str:
    """The id of an API save: ``append_index`` must be unique per vault (the store chooses it)."""
    validate_name(wing, what="wing")
    validate_name(room, what="room")
    return _digest(
        ID_RECIPE_APPEND, wing, room, "", _check_index(append_index, "append index"), _check_version(normalize_version)
    )


def is_drawer_id(value: object) -> bool:
    """True if ``value`` is a string of exactly the drawer id shape ``drawer_<32 lowercase hex>``."""
    return isinstance(value, str) and DRAWER_ID_PATTERN.fullmatch(value) is not None


def validate_drawer_id(value: object) -> str:
    """Return ``value`` if it has the drawer id shape, else raise :class:`InvalidInput` (never reshaped)."""
    if not is_drawer_id(value):
        shown = value if not isinstance(value, str) or len(value) <= 80 else value[:80] + "…"
        raise InvalidInput(f"invalid drawer id {shown!r}: expected 'drawer_' followed by 32 lowercase hex digits")
    assert isinstance(value, str)
    return value
