"""Undercroft's declaration resolvers: every UNDERCROFT_* variable, refuse-or-warn doctrine.

`REGISTRY` holds one `Declaration` per variable; `resolve`/`evaluate` run one through its resolver
against an explicit environment mapping; `check` is the `config check` data and `start` the start-up
resolver every entry point runs over that same report, for one `Build` (the capabilities the program
ships); `settings` holds the typed accessors the store and the CLI call.
"""

from undercroft_config import settings, values
from undercroft_config.capabilities import Build, Capability
from undercroft_config.check import CheckEntry, CheckReport, check
from undercroft_config.declaration import Declaration, DeclarationClass, Doctrine, Resolution, Status
from undercroft_config.errors import Error, Refused, StartRefused, UnknownDeclaration
from undercroft_config.registry import PREFIX, REGISTRY, SECTIONS, declaration
from undercroft_config.resolution import evaluate, resolve, value
from undercroft_config.startup import start

__version__ = "0.1.0"

__all__ = [
    "PREFIX",
    "REGISTRY",
    "SECTIONS",
    "Build",
    "Capability",
    "CheckEntry",
    "CheckReport",
    "Declaration",
    "DeclarationClass",
    "Doctrine",
    "Error",
    "Refused",
    "Resolution",
    "StartRefused",
    "Status",
    "UnknownDeclaration",
    "__version__",
    "check",
    "declaration",
    "evaluate",
    "resolve",
    "settings",
    "start",
    "value",
    "values",
]
