"""``undercroft_core`` loads its names on first use: every export resolves, and importing the package is free."""

from __future__ import annotations

import importlib
import pkgutil
import subprocess
import sys

import undercroft_core


def test_every_exported_name_has_one_home_and_resolves_to_it() -> None:
    exports = undercroft_core._EXPORTS
    assert set(exports) == set(undercroft_core.__all__) - {"__version__"}
    for name, module in exports.items():
        assert getattr(undercroft_core, name) is getattr(importlib.import_module(module), name), name


def test_no_exported_name_is_also_a_submodule() -> None:
    """A submodule import sets the package attribute of its name to the module, so an export of the same name
    would resolve to the function only until someone imports the submodule (``undercroft_core.maxsim`` did)."""
    submodules = {info.name for info in pkgutil.iter_modules(undercroft_core.__path__)}
    assert not submodules & set(undercroft_core.__all__)


def test_a_submodule_is_reachable_as_an_attribute_and_a_missing_name_is_an_attribute_error() -> None:
    assert undercroft_core.drawer is importlib.import_module("undercroft_core.drawer")  # type: ignore[attr-defined]
    try:
        undercroft_core.no_such_name  # type: ignore[attr-defined]
    except AttributeError as refused:
        assert "no_such_name" in str(refused)
    else:
        raise AssertionError("a missing name must raise AttributeError")


def test_importing_the_package_and_its_errors_loads_no_numpy() -> None:
    probe = "import sys, undercroft_core, undercroft_core.errors; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "False"
    loaded = "import sys, undercroft_core; undercroft_core.HashEmbedder; print('numpy' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", loaded], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "True"  # the premise: reading a name that needs numpy does load it
