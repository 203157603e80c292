"""Destination-name checks: a wing or room that looks like a system area, the reserved wing, control
characters and lookalike Unicode. Returns character spans into the name."""

from __future__ import annotations

import re
import unicodedata
from typing import Final

from undercroft_core import QUARANTINE_WING

from undercroft_store.governance.admission._internal.views import mixed_script_words

__all__ = ["SYSTEM_AREAS", "name_anomalies"]

#: Names (case-folded, separators removed) that read as a part of the system rather than a topic.
SYSTEM_AREAS: Final = frozenset(
    "system sys systemprompt admin administrator root sudo superuser operator audit auditlog audittrail chain"
    " manifest keystore masterkey undercroft internal tombstone tombstones mcp kernel".split()
)
_PREFIXES: Final = ("undercroft", "sqlite", "system", "quarantine")
_SEPARATORS: Final = re.compile(r"[\s_.\-:]+")
_CONTROL: Final = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
_RESERVED_KEY: Final = _SEPARATORS.sub("", QUARANTINE_WING.casefold())


def _key(name: str) -> str:
    return _SEPARATORS.sub("", unicodedata.normalize("NFKC", name).casefold())


def name_anomalies(name: str) -> list[tuple[int, int]]:
    """Character spans of `name` that make it an anomalous destination (empty list: an ordinary name)."""
    spans: list[tuple[int, int]] = []
    key = _key(name)
    whole = (0, len(name))
    if (
        key in SYSTEM_AREAS
        or key == _RESERVED_KEY
        or "quarantine" in key
        or key.startswith(_PREFIXES)
        or name.lstrip()[:1] in ("_", ".")
    ):
        spans.append(whole)
    for index, character in enumerate(name):
        if unicodedata.category(character) in _CONTROL:
            spans.append((index, index + 1))
        elif not character.isascii() and unicodedata.normalize("NFKC", character) != character:
            spans.append((index, index + 1))
    spans.extend(mixed_script_words(name))
    return spans
