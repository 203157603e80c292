"""``undercroft_vault`` loads its names on first use: every export resolves, and the package alone is cheap."""

from __future__ import annotations

import importlib
import json
import pkgutil
import subprocess
import sys

import undercroft_vault

SIGNING_STACK = ("nacl.signing", "pqcrypto", "undercroft_vault.attestation", "undercroft_vault.signing")


def test_every_exported_name_has_one_home_and_resolves_to_it() -> None:
    exports = undercroft_vault._EXPORTS
    assert set(exports) == set(undercroft_vault.__all__) - {"__version__"}
    for name, module in exports.items():
        assert getattr(undercroft_vault, name) is getattr(importlib.import_module(module), name), name


def test_no_exported_name_is_also_a_submodule() -> None:
    """A submodule import sets the package attribute of its name to the module: an export of the same name
    would resolve to the function only until someone imports the submodule."""
    submodules = {info.name for info in pkgutil.iter_modules(undercroft_vault.__path__)}
    assert not submodules & set(undercroft_vault.__all__)


def test_a_submodule_is_reachable_as_an_attribute_and_a_missing_name_is_an_attribute_error() -> None:
    assert undercroft_vault.chain is importlib.import_module("undercroft_vault.chain")  # type: ignore[attr-defined]
    try:
        undercroft_vault.no_such_name  # type: ignore[attr-defined]
    except AttributeError as refused:
        assert "no_such_name" in str(refused)
    else:
        raise AssertionError("a missing name must raise AttributeError")


def _loaded_after(code: str) -> list[str]:
    probe = f"import json, sys\n{code}\nprint(json.dumps(sorted(m for m in {SIGNING_STACK!r} if m in sys.modules)))"
    out = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True).stdout
    return list(json.loads(out.splitlines()[-1]))


def test_sealing_names_load_no_signing_stack_and_a_signing_name_does() -> None:
    assert _loaded_after("from undercroft_vault import Sealer, VaultKeys, BlindIndex, compute_tag") == []
    assert _loaded_after("from undercroft_vault import sign_bundle_manifest") == sorted(SIGNING_STACK)
