"""The one rule for the names an operator types: instance names and tenant ids."""

from __future__ import annotations

import re

from undercroft_orchestrator.errors import Refused

__all__ = ["NAME_RULE", "checked_name"]

_NAME = re.compile(r"[a-z0-9][a-z0-9_-]{0,62}")
NAME_RULE = "1-63 characters of a-z 0-9 _ -, starting with a letter or digit"
"""What a legal name is, as messages say it (a subset of the engine's vault-id rule)."""


def checked_name(kind: str, name: object) -> str:
    """``name`` when it is legal for ``kind`` ("tenant id", "instance name"), else `Refused` saying why."""
    if not isinstance(name, str) or _NAME.fullmatch(name) is None:
        raise Refused(f"{kind} {name!r} is not legal: {NAME_RULE}")
    return name
