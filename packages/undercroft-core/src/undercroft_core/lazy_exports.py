"""Package names that load on first use (PEP 562): a package's ``__getattr__`` and ``__dir__``, said once.

A package lists each exported name with the module that defines it; importing the package imports none of them,
so a command that needs one name does not pay for the rest (issue 18 §4). A name outside the table is tried as
a submodule (``package.name``). Whatever is loaded is kept in the package's namespace, so it loads once.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping, Sequence
from typing import Any

__all__ = ["lazy_exports"]


def lazy_exports(
    package: str, namespace: dict[str, Any], exports: Mapping[str, str], names: Sequence[str]
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``(__getattr__, __dir__)`` of ``package`` (its ``globals()`` as ``namespace``) for the ``exports``
    table (name → defining module) and its ``__all__`` (``names``)."""

    def getattr_(name: str) -> Any:
        """Load an exported name (or a submodule) on first use, then keep it in the package's namespace."""
        module = exports.get(name)
        if module is not None:
            value = getattr(importlib.import_module(module), name)
        elif not name.startswith("__"):
            try:
                value = importlib.import_module(f"{package}.{name}")
            except ModuleNotFoundError:
                raise AttributeError(f"module {package!r} has no attribute {name!r}") from None
        else:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        namespace[name] = value
        return value

    def dir_() -> list[str]:
        """The exported names beside what is loaded already."""
        return sorted(set(namespace) | set(names))

    return getattr_, dir_
