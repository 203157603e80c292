"""One guard for vault, wing, room and hall names: path traversal, separators, control characters, reserved names.

Names become directory names (vaults) and clear-text labels (wings, rooms, halls), so every write path runs this
guard and refuses rather than sanitising: a caller who sent ``../x`` must learn that, not find ``x`` written.
"""

from __future__ import annotations

import unicodedata
from functools import lru_cache

from undercroft_core.errors import InvalidInput

__all__ = ["MAX_NAME_BYTES", "MAX_NAME_CHARS", "WINDOWS_RESERVED_NAMES", "InvalidName", "validate_name"]

#: Longest name in characters; also bounded in UTF-8 bytes because file systems count bytes.
MAX_NAME_CHARS = 128
#: Longest name in UTF-8 bytes (ext4 and APFS allow 255 per path component).
MAX_NAME_BYTES = 255

#: Device names Windows refuses as a path component, with or without an extension, in any case.
WINDOWS_RESERVED_NAMES = frozenset(
    {"con", "prn", "aux", "nul"} | {f"com{i}" for i in range(10)} | {f"lpt{i}" for i in range(10)}
)

# Characters refused anywhere: path separators plus the characters Windows refuses in a path component.
_FORBIDDEN_CHARACTERS = {
    "/": "a path separator '/'",
    "\\": "a path separator '\\'",
    ":": "a drive or stream separator ':'",
    "*": "a wildcard '*'",
    "?": "a wildcard '?'",
    '"': "a quote '\"'",
    "<": "a redirection character '<'",
    ">": "a redirection character '>'",
    "|": "a pipe '|'",
}


class InvalidName(InvalidInput):
    """A vault, wing, room or hall name was refused; the message names the rule that refused it."""


def _refuse(what: str, name: str, reason: str) -> InvalidName:
    return InvalidName(f"invalid {what} name {name!r}: {reason}")


def validate_name(name: object, *, what: str = "name") -> str:
    """Return ``name`` unchanged if it is a safe vault/wing/room/hall name, else raise :class:`InvalidName`.

    Refused: non-strings; empty names; names longer than 128 characters or 255 UTF-8 bytes; names not in
    Unicode NFC (two spellings of one name would be two wings); leading or trailing whitespace; ``.`` and
    ``..`` and any name starting with ``.`` (traversal and hidden files) or ending with ``.`` (Windows strips
    it); path separators, ``: * ? " < > |``; control, format (zero-width, bidi override), surrogate,
    private-use, unassigned and line/paragraph separator characters; Windows device names (``CON``,
    ``nul.txt``, ``COM1`` ...). ``what`` only shapes the message ("vault", "wing", "room", "hall").
    """
    if not isinstance(name, str):
        raise InvalidName(f"invalid {what} name: expected a string, got {type(name).__name__}")
    if type(name) is str:  # a subclass may redefine equality or hashing: it is checked every time
        _check_cached(name, what)
    else:
        _check(name, what)
    return name


# Every drawer written checks its wing and room (twice: the recipe, the drawer); a vault holds few
# distinct names, so the verdict is remembered per (name, what). Only acceptances are cached: a refusal
# raises, so it is re-derived (with the same message) every time.
@lru_cache(maxsize=4096)
def _check_cached(name: str, what: str) -> None:
    _check(name, what)


def _check(name: str, what: str) -> None:
    if name == "":
        raise InvalidName(f"invalid {what} name: it is empty")
    if len(name) > MAX_NAME_CHARS:
        raise _refuse(what, name[:16] + "…", f"{len(name)} characters, the limit is {MAX_NAME_CHARS}")
    encoded_length = len(name.encode("utf-8", errors="surrogatepass"))
    if encoded_length > MAX_NAME_BYTES:
        raise _refuse(what, name[:16] + "…", f"{encoded_length} UTF-8 bytes, the limit is {MAX_NAME_BYTES}")
    for position, character in enumerate(name):
        if character in _FORBIDDEN_CHARACTERS:
            raise _refuse(what, name, f"contains {_FORBIDDEN_CHARACTERS[character]} at position {position}")
        category = unicodedata.category(character)
        if category[0] == "C" or category in ("Zl", "Zp"):
            raise _refuse(
                what, name, f"contains the control or invisible character U+{ord(character):04X} at position {position}"
            )
    if name in (".", ".."):
        raise _refuse(what, name, "it is a relative path component")
    if name.startswith("."):
        raise _refuse(what, name, "it starts with '.'")
    if name.endswith("."):
        raise _refuse(what, name, "it ends with '.'")
    if name != name.strip():
        raise _refuse(what, name, "it starts or ends with whitespace")
    if unicodedata.normalize("NFC", name) != name:
        raise _refuse(what, name, "it is not in Unicode NFC form")
    if name.split(".", 1)[0].rstrip(" ").casefold() in WINDOWS_RESERVED_NAMES:
        raise _refuse(what, name, "it is a reserved device name on Windows")
