"""Views of a text that undo cheap evasions, each with a map back to the stored text's character offsets.

An attacker writes "ig\u200bnore", fullwidth "ｉｇｎｏｒｅ" or a Cyrillic "іgnore" to slip past a pattern. The
folded view drops format characters (zero-width, bidi controls, soft hyphen), reads Plane 14 tag characters as the ASCII
they smuggle, applies NFKC per character
and, inside a word that mixes Latin with Cyrillic or Greek, folds the lookalike letters to Latin. Words
written wholly in one script are left alone, so Russian or Greek text is read as itself.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Final

__all__ = ["LOOKALIKES", "fold", "has_format_characters", "mixed_script_words", "script"]

#: Cyrillic and Greek letters that render like a Latin letter, folded to it inside a mixed-script word.
LOOKALIKES: Final[dict[str, str]] = dict(
    zip(
        "авеёкмнорстухіїјѕԁԛԝАВЕКМНОРСТХІЈЅαεικνορτυχΑΒΕΖΗΙΚΜΝΟΡΤΥΧ",
        "abeekmhopctyxiijsdqwABEKMHOPCTXIJSaeikvoptuxABEZHIKMNOPTYX",
        strict=True,
    )
)

_WORD: Final = re.compile(r"[^\W\d_]+")
#: Format characters (Unicode category Cf) an attacker can hide inside a word: soft hyphen, Arabic and
#: Syriac marks, zero-width and bidi controls, invisible operators, the BOM, interlinear annotation and
#: the Plane 14 tag characters ("ASCII smuggling").
_FORMAT: Final = re.compile(
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f\u202a-\u202e"
    "\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd\U0001bca0-\U0001bca3"
    "\U0001d173-\U0001d17a\U000e0001\U000e0020-\U000e007f]"
)
_CONFUSABLE_SCRIPTS: Final = frozenset({"CYRILLIC", "GREEK"})


def has_format_characters(text: str) -> bool:
    """Whether `text` holds a format character (zero-width, bidi control, tag character, …)."""
    return _FORMAT.search(text) is not None


def script(character: str) -> str:
    """The script word of a letter's Unicode name (LATIN, CYRILLIC, GREEK, …), "" when unnamed."""
    name = unicodedata.name(character, "")
    return name.split(" ", 1)[0] if name else ""


def mixed_script_words(text: str) -> list[tuple[int, int]]:
    """Character spans of words whose letters mix Latin with Cyrillic or Greek."""
    spans = []
    for word in _WORD.finditer(text):
        surface = word.group()
        if surface.isascii():
            continue
        scripts = {script(character) for character in surface}
        if "LATIN" in scripts and scripts & _CONFUSABLE_SCRIPTS:
            spans.append((word.start(), word.end()))
    return spans


def fold(text: str) -> tuple[str, list[int]] | None:
    """The folded view and, per folded character, the index of the stored character it came from.

    None when folding changes nothing (every ASCII text), so the caller scans the stored text alone.
    """
    if text.isascii():
        return None
    mixed = mixed_script_words(text)
    if not mixed and _FORMAT.search(text) is None and unicodedata.normalize("NFKC", text) == text:
        return None  # the common non-ASCII case (accents, curly quotes, other scripts): nothing to fold
    in_mixed = [False] * len(text)
    for start, end in mixed:
        for index in range(start, end):
            in_mixed[index] = True
    pieces: list[str] = []
    origin: list[int] = []
    for index, character in enumerate(text):
        if not character.isascii():
            if 0xE0020 <= ord(character) <= 0xE007E:
                character = chr(ord(character) - 0xE0000)  # a tag character spells its ASCII twin invisibly
            elif _FORMAT.match(character) is not None:
                continue
            if in_mixed[index] and character in LOOKALIKES:
                character = LOOKALIKES[character]
            else:
                character = unicodedata.normalize("NFKC", character)
        pieces.append(character)
        origin.extend([index] * len(character))
    folded = "".join(pieces)
    return None if folded == text else (folded, origin)
