"""Undercroft's declaration resolvers: every UNDERCROFT_* variable, refuse-or-warn doctrine.

`REGISTRY` holds one `Declaration` per variable; `resolve`/`evaluate` run one through its resolver
against an explicit environment mapping; `check` is the `config check` data; `settings` holds the typed
accessors the store and the CLI call.
"""

from undercroft_config import settings, values
from undercroft_config.check import CheckEntry, CheckReport, check
from undercroft_config.declaration import Declaration, DeclarationClass, Doctrine, Resolution, Status
from undercroft_config.errors import Error, Refused, UnknownDeclaration
from undercroft_config.registry import PREFIX, REGISTRY, SECTIONS, declaration
from undercroft_config.resolution import evaluate, resolve, value

__version__ = "0.1.0"

__all__ = [
    "PREFIX",
    "REGISTRY",
    "SECTIONS",
    "CheckEntry",
    "CheckReport",
    "Declaration",
    "DeclarationClass",
    "Doctrine",
    "Error",
    "Refused",
    "Resolution",
    "Status",
    "UnknownDeclaration",
    "__version__",
    "check",
    "declaration",
    "evaluate",
    "resolve",
    "settings",
    "value",
    "values",
]
