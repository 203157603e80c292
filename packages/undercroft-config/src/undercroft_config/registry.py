"""The registry: every `UNDERCROFT_*` declaration the engine, the control plane and the bench read."""

from __future__ import annotations

import difflib
from types import MappingProxyType
from typing import Final

from undercroft_config._internal.catalog_engine import CORE, MODELS, RETRIEVAL
from undercroft_config._internal.catalog_services import (
    BENCH,
    GOVERNANCE,
    LLM,
    ORCHESTRATOR,
    REMOTE_INDEX,
    SERVER,
    TELEMETRY,
)
from undercroft_config.declaration import Declaration
from undercroft_config.errors import UnknownDeclaration

__all__ = ["PREFIX", "REGISTRY", "SECTIONS", "declaration", "suggest"]

#: Every variable this project reads starts with this.
PREFIX: Final = "UNDERCROFT_"

#: Documentation order of the sections.
SECTIONS: Final = (
    "core",
    "models",
    "retrieval",
    "governance",
    "remote-index",
    "server",
    "llm",
    "telemetry",
    "orchestrator",
    "bench",
)


def _build() -> MappingProxyType[str, Declaration]:
    table: dict[str, Declaration] = {}
    for group in (CORE, MODELS, RETRIEVAL, GOVERNANCE, REMOTE_INDEX, SERVER, LLM, TELEMETRY, ORCHESTRATOR, BENCH):
        for entry in group:
            if entry.name in table:
                raise RuntimeError(f"{entry.name} is declared twice")
            table[entry.name] = entry
    return MappingProxyType(table)


#: Name -> declaration, in documentation order.
REGISTRY: Final = _build()


def declaration(name: str) -> Declaration:
    """The declaration registered as `name`; `UnknownDeclaration` (with a suggestion) otherwise."""
    found = REGISTRY.get(name)
    if found is None:
        hint = suggest(name)
        raise UnknownDeclaration(f"{name} is not a known declaration" + (f"; did you mean {hint}?" if hint else ""))
    return found


def suggest(name: str) -> str | None:
    """The registered name closest to `name` (a likely typo), or None."""
    close = difflib.get_close_matches(name, list(REGISTRY), n=1, cutoff=0.8)
    return close[0] if close else None
