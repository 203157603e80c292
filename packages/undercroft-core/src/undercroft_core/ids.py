"""Deterministic drawer ids, and the id shape every store path validates (an id is an AAD component).

Two recipes, named by the drawer's ``id_recipe`` field:

* ``source`` — mined, swept and imported drawers: the id is a function of (wing, room, source, chunk_index,
  normalize_version), so processing the same file twice updates the same drawers in place.
* ``append`` — API saves: no source exists, so ``chunk_index`` carries a unique append index chosen by the
  writer and the same text saved twice is two drawers.

The digest is over a domain tag and length-prefixed UTF-8 fields (a field can never bleed into its neighbour),
truncated to 128 bits and rendered ``drawer_<32 lowercase hex>``. Which digest is the VAULT's id recipe
(`DrawerIds`, recorded in the store's ``meta.drawer_id_recipe``):

* ``sha256-v1`` — SHA-256, public: anyone can recompute an id from a guessed (wing, room, source, index), so
  the id confirms a complete guess. Every vault created before keyed ids, and every hmac-only vault.
* ``hmac-v1`` — HMAC-SHA256 under a per-vault key the vault derives from its never-rotated blind-index secret
  (another domain tag): without the key an id is a random-looking 128-bit value and confirms nothing. Sealed
  vaults created since issue 29.

A vault never changes its recipe (ids are folded into the audit chain and held by receipts and agents).
"""

from __future__ import annotations

import hashlib
import hmac
import re
import struct
from typing import Final

from undercroft_core.errors import InvalidInput
from undercroft_core.names import validate_name
from undercroft_core.normalisation import NORMALIZE_VERSION, SUPPORTED_NORMALIZE_VERSIONS

__all__ = [
    "DRAWER_ID_PATTERN",
    "ID_KEY_LENGTH",
    "ID_RECIPES",
    "ID_RECIPE_APPEND",
    "ID_RECIPE_SOURCE",
    "PUBLIC_DRAWER_IDS",
    "VAULT_ID_RECIPES",
    "VAULT_ID_RECIPE_KEYED",
    "VAULT_ID_RECIPE_PUBLIC",
    "DrawerIds",
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

#: The vault id recipe whose ids anyone can recompute (legacy vaults, hmac-only vaults).
VAULT_ID_RECIPE_PUBLIC: Final = "sha256-v1"
#: The vault id recipe keyed by a per-vault secret (new sealed vaults).
VAULT_ID_RECIPE_KEYED: Final = "hmac-v1"
#: Every vault id recipe.
VAULT_ID_RECIPES: Final[tuple[str, ...]] = (VAULT_ID_RECIPE_PUBLIC, VAULT_ID_RECIPE_KEYED)
#: Bytes of the keyed recipe's key.
ID_KEY_LENGTH: Final = 32

_DOMAIN = b"undercroft.drawer-id.v1"
_KEYED_DOMAIN = b"undercroft.drawer-id.hmac-v1"
_MAX_SOURCE_BYTES = 4096


def _field(value: str) -> bytes:
    encoded = value.encode("utf-8")
    return struct.pack(">Q", len(encoded)) + encoded


def _digest(
    recipe: str, wing: str, room: str, source: str, chunk_index: int, normalize_version: int, key: bytes | None
) -> str:
    fields = b"".join(_field(part) for part in (recipe, wing, room, source, str(chunk_index), str(normalize_version)))
    if key is None:
        return "drawer_" + hashlib.sha256(_DOMAIN + fields).hexdigest()[:32]
    return "drawer_" + hmac.digest(key, _KEYED_DOMAIN + fields, "sha256")[:16].hex()


def _check_index(value: object, what: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise InvalidInput(f"{what} must be a non-negative integer, got {value!r}")
    return value


def _check_version(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value not in SUPPORTED_NORMALIZE_VERSIONS:
        supported = sorted(SUPPORTED_NORMALIZE_VERSIONS)
        raise InvalidInput(f"unsupported normalize_version {value!r}: expected one of {supported}")
    return value


def _source(wing: str, room: str, source: str, chunk_index: int, normalize_version: int, key: bytes | None) -> str:
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
    return _digest(ID_RECIPE_SOURCE, wing, room, source, index, _check_version(normalize_version), key)


def _append(wing: str, room: str, append_index: int, normalize_version: int, key: bytes | None) -> str:
    validate_name(wing, what="wing")
    validate_name(room, what="room")
    index = _check_index(append_index, "append index")
    return _digest(ID_RECIPE_APPEND, wing, room, "", index, _check_version(normalize_version), key)


def source_drawer_id(
    wing: str, room: str, source: str, chunk_index: int, *, normalize_version: int = NORMALIZE_VERSION
) -> str:
    """The PUBLIC-recipe (``sha256-v1``) id of chunk ``chunk_index`` of ``source`` filed in ``wing``/``room``.

    Only a vault whose recipe is ``sha256-v1`` files drawers under it: a caller writing to a store asks the
    store's `DrawerIds` (``store.drawer_ids``) instead."""
    return _source(wing, room, source, chunk_index, normalize_version, None)


def append_drawer_id(wing: str, room: str, append_index: int, *, normalize_version: int = NORMALIZE_VERSION) -> str:
    """The PUBLIC-recipe id of an API save (``append_index`` is unique per vault; the store chooses it)."""
    return _append(wing, room, append_index, normalize_version, None)


class DrawerIds:
    """One vault's id recipe: derives the ids of its source and append drawers.

    `PUBLIC_DRAWER_IDS` is the ``sha256-v1`` recipe; `DrawerIds.keyed` the ``hmac-v1`` one, under a key the
    vault derives from its blind-index secret (the key is held here and never shown by ``repr``)."""

    __slots__ = ("_key", "recipe")

    def __init__(self, recipe: str, key: bytes | None = None) -> None:
        """Build the recipe ``recipe``; ``hmac-v1`` needs a 32-byte ``key``, ``sha256-v1`` takes none."""
        if recipe == VAULT_ID_RECIPE_PUBLIC:
            if key is not None:
                raise InvalidInput("the sha256-v1 id recipe takes no key")
        elif recipe == VAULT_ID_RECIPE_KEYED:
            if not isinstance(key, bytes) or len(key) != ID_KEY_LENGTH:
                raise InvalidInput(f"the hmac-v1 id recipe needs a {ID_KEY_LENGTH}-byte key")
        else:
            raise InvalidInput(f"unknown drawer id recipe {recipe!r}: expected one of {', '.join(VAULT_ID_RECIPES)}")
        self.recipe = recipe
        self._key = key

    @classmethod
    def keyed(cls, key: bytes) -> DrawerIds:
        """The ``hmac-v1`` recipe under ``key``."""
        return cls(VAULT_ID_RECIPE_KEYED, key)

    @property
    def is_keyed(self) -> bool:
        """True when an id is an HMAC under the vault's key (confirms no guess)."""
        return self._key is not None

    def source(
        self, wing: str, room: str, source: str, chunk_index: int, *, normalize_version: int = NORMALIZE_VERSION
    ) -> str:
        """The id of chunk ``chunk_index`` of ``source`` in ``wing``/``room`` under this recipe."""
        return _source(wing, room, source, chunk_index, normalize_version, self._key)

    def append(self, wing: str, room: str, append_index: int, *, normalize_version: int = NORMALIZE_VERSION) -> str:
        """The id of API save ``append_index`` in ``wing``/``room`` under this recipe."""
        return _append(wing, room, append_index, normalize_version, self._key)

    def __repr__(self) -> str:
        return f"DrawerIds({self.recipe!r})"


#: The public ``sha256-v1`` recipe.
PUBLIC_DRAWER_IDS: Final = DrawerIds(VAULT_ID_RECIPE_PUBLIC)


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
