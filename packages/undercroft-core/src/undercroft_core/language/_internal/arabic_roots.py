"""Arabic root identity: the triliteral roots a word form can be read as carrying.

A form is stripped of the clitics and suffixes Arabic glues on (ال, و, ب, ل, ف, ك, س; ة, ها, ون,
ات, …), and what remains is laid over the common derivational patterns (فاعل, مفعول, تفعيل, …):
the letters standing where the pattern has ف, ع, ل are the root. كتب, كاتب, مكتوب and الكتاب all
carry ك-ت-ب. Reading several candidates is deliberate: a pattern letter can also be a radical.
"""

from __future__ import annotations

from functools import lru_cache
from typing import Final

_PREFIXES: Final = ("", "ال", "وال", "بال", "فال", "كال", "لل", "و", "ف", "ب", "ل", "ك", "س", "وس")
_SUFFIXES: Final = (
    "",
    "ة",
    "ه",
    "ها",
    "هم",
    "هن",
    "كم",
    "نا",
    "ي",
    "ك",
    "ون",
    "ين",
    "ان",
    "ات",
    "وا",
    "تم",
    "ت",
    "تها",
)
# ف ع ل mark the radicals; every other letter of a pattern must be present as written.
_PATTERNS: Final = (
    "فعل",
    "فاعل",
    "فعال",
    "فعيل",
    "فعول",
    "مفعل",
    "يفعل",
    "تفعل",
    "افعل",
    "نفعل",
    "مفعول",
    "مفاعل",
    "تفعيل",
    "افتعل",
    "انفعل",
    "تفاعل",
    "فواعل",
    "مفعال",
    "افعال",
    "فعائل",
    "متفعل",
    "مستفعل",
    "استفعل",
    "افتعال",
    "انفعال",
    "مفاعيل",
    "يستفعل",
    "مفتعل",
    "منفعل",
    "استفعال",
)
_RADICAL: Final = {"ف": 0, "ع": 1, "ل": 2}
_BY_LENGTH: Final[dict[int, tuple[str, ...]]] = {}
for _pattern in _PATTERNS:
    _BY_LENGTH[len(_pattern)] = (*_BY_LENGTH.get(len(_pattern), ()), _pattern)


def _lay(stem: str, pattern: str) -> str | None:
    root = ["", "", ""]
    for letter, slot in zip(stem, pattern, strict=True):
        position = _RADICAL.get(slot)
        if position is None:
            if letter != slot:
                return None
        else:
            root[position] = letter
    return "".join(root)


@lru_cache(maxsize=65536)
def arabic_roots(term: str) -> frozenset[str]:
    """Every triliteral root ``term`` can be read as carrying (empty when none)."""
    roots: set[str] = set()
    for prefix in _PREFIXES:
        if not term.startswith(prefix):
            continue
        for suffix in _SUFFIXES:
            if suffix and not term.endswith(suffix):
                continue
            stem = term[len(prefix) : len(term) - len(suffix)]
            for pattern in _BY_LENGTH.get(len(stem), ()):
                root = _lay(stem, pattern)
                if root is not None:
                    roots.add(root)
    return frozenset(roots)
