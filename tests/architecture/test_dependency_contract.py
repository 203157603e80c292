"""The dependency contract: declarations, the import-linter graph and the real imports agree.

And the contract is not vacuous: planting a forbidden import into a copy of the tree breaks it.
"""

from __future__ import annotations

import ast
import os
import pathlib
import shutil
import subprocess
import sys

import grimp
import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from workspace import PACKAGES_DIR, ROOT, declared_siblings, distributions, import_name, root_config

LINT_IMPORTS = shutil.which("lint-imports", path=str(pathlib.Path(sys.executable).parent))


def _contracts() -> dict[str, dict]:
    return {c["id"]: c for c in root_config()["tool"]["importlinter"]["contracts"]}


def test_graph_contract_matches_every_pyproject() -> None:
    """Each distribution's 'may import' rule forbids exactly the siblings its pyproject does not declare."""
    projects = distributions()
    ours = {import_name(n) for n in projects}
    contracts = _contracts()
    for name, project in projects.items():
        module = import_name(name)
        contract = contracts[f"graph-{module.removeprefix('undercroft_')}"]
        allowed = ours - set(contract["forbidden_modules"]) - {module}
        declared = declared_siblings(project, with_extras=True)
        assert allowed == declared, f"{name}: contract allows {sorted(allowed)}, pyproject declares {sorted(declared)}"


def test_every_cross_distribution_import_is_declared() -> None:
    """grimp's real import graph: no distribution imports a sibling it does not declare."""
    projects = distributions()
    ours = sorted(import_name(n) for n in projects)
    graph = grimp.build_graph(*ours)
    for name, project in projects.items():
        module = import_name(name)
        declared = declared_siblings(project, with_extras=True)
        for other in ours:
            if other == module:
                continue
            chains = graph.find_shortest_chains(importer=module, imported=other, as_packages=True)
            direct = {chain for chain in chains if len(chain) == 2}
            if direct:
                assert other in declared, f"{name} imports {other} ({sorted(direct)[0]}) without declaring it"


def test_lint_imports_passes_on_the_real_tree() -> None:
    assert LINT_IMPORTS, "lint-imports is not installed in this environment"
    result = subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "0 broken" in result.stdout


def _copy_tree(tmp: pathlib.Path) -> list[str]:
    """A throw-away copy of every distribution's sources plus the root config; returns the src dirs."""
    shutil.copy(ROOT / "pyproject.toml", tmp / "pyproject.toml")
    sources = []
    for package in sorted(PACKAGES_DIR.iterdir()):
        if (package / "src").is_dir():
            target = tmp / package.name / "src"
            shutil.copytree(package / "src", target, ignore=shutil.ignore_patterns("__pycache__"))
            sources.append(str(target))
    return sources


PLANTS = [
    ("undercroft_core", "import undercroft_store\n", "graph-core"),
    ("undercroft_orchestrator", "import undercroft_store\n", "graph-orchestrator"),
    ("undercroft_vault", "import undercroft_cli\n", "layers"),
    ("undercroft_store", "import nacl.secret\n", "crypto-libraries"),
    ("undercroft_store", "import httpx\n", "outbound-http"),
    ("undercroft_cli", "import undercroft_vault._internal\n", "private-vault"),
]


@pytest.mark.parametrize(("package", "source", "contract_id"), PLANTS)
def test_a_planted_forbidden_import_breaks_the_contract(
    tmp_path: pathlib.Path, package: str, source: str, contract_id: str
) -> None:
    assert LINT_IMPORTS
    sources = _copy_tree(tmp_path)
    src_dir = next(pathlib.Path(s) for s in sources if (pathlib.Path(s) / package).is_dir())
    (src_dir / package / "planted_forbidden.py").write_text(source)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sources))
    result = subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert result.returncode != 0, result.stdout
    assert "BROKEN" in result.stdout
    contract = _contracts()[contract_id]
    # lint-imports wraps long lines to the terminal width: compare with whitespace normalised.
    assert f"{contract['name']} BROKEN" in " ".join(result.stdout.split()), result.stdout


def test_the_copy_without_a_plant_still_passes(tmp_path: pathlib.Path) -> None:
    """Guards the premise of the plant tests: the copy itself is clean and really is what gets linted."""
    assert LINT_IMPORTS
    sources = _copy_tree(tmp_path)
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sources))
    probe = subprocess.run(
        [sys.executable, "-c", "import undercroft_core; print(undercroft_core.__file__)"],
        capture_output=True, text=True, env=env, check=True,
    )
    assert str(tmp_path) in probe.stdout
    result = subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert result.returncode == 0, result.stdout


def test_embedders_are_never_imported_at_cli_top_level() -> None:
    """The CLI reaches embed-onnx/embed-ort only lazily (inside functions), when installed."""
    for path in (PACKAGES_DIR / "undercroft-cli" / "src").rglob("*.py"):
        for line in path.read_text().splitlines():
            if line.startswith(("import undercroft_embed", "from undercroft_embed")):
                pytest.fail(f"{path}: top-level import of an embedder distribution: {line}")


def test_net_is_imported_by_obs_only_inside_telemetry() -> None:
    for path in (PACKAGES_DIR / "undercroft-obs" / "src").rglob("*.py"):
        if "undercroft_net" in path.read_text():
            assert "telemetry" in path.name or "telemetry" in path.parent.name, path


def test_the_cli_does_not_import_heavy_optional_stacks_at_start_up() -> None:
    """Every `undercroft` call pays the CLI's import cost: the MCP SDK and the embedders load only when used."""
    probe = subprocess.run(
        [sys.executable, "-c", "import sys, undercroft_cli.main; print(sorted(m for m in ('mcp', "
         "'undercroft_embed_onnx', 'undercroft_embed_ort', 'onnxruntime', 'uvicorn') if m in sys.modules))"],
        capture_output=True, text=True, check=True,
    )
    assert probe.stdout.strip() == "[]", probe.stdout


#: What the third-party contracts must forbid, written here and not read from the config: a module dropped from
#: ``forbidden_modules`` (``socket`` from outbound-http, once) must fail this test, not quietly shrink it.
THIRD_PARTY_FORBIDDEN = {
    "outbound-http": ("httpx", "requests", "urllib3", "aiohttp", "socket", "ssl"),
    "crypto-libraries": ("nacl", "cryptography", "argon2", "pqcrypto"),
}


def test_every_forbidden_third_party_module_is_enforced(tmp_path: pathlib.Path) -> None:
    """One plant importing each forbidden module from the store: lint-imports names every one of them broken."""
    assert LINT_IMPORTS
    sources = _copy_tree(tmp_path)
    src_dir = next(pathlib.Path(s) for s in sources if (pathlib.Path(s) / "undercroft_store").is_dir())
    wanted = [module for modules in THIRD_PARTY_FORBIDDEN.values() for module in modules]
    (src_dir / "undercroft_store" / "planted_forbidden.py").write_text("".join(f"import {m}\n" for m in wanted))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sources))
    result = subprocess.run([LINT_IMPORTS, "--no-cache"], cwd=tmp_path, capture_output=True, text=True, env=env)
    assert result.returncode != 0, result.stdout
    report = " ".join(result.stdout.split())
    contracts = _contracts()
    for contract_id, modules in THIRD_PARTY_FORBIDDEN.items():
        assert f"{contracts[contract_id]['name']} BROKEN" in report, result.stdout
        for module in modules:
            assert f"undercroft_store is not allowed to import {module}:" in report, (contract_id, module)
            assert f"undercroft_store.planted_forbidden -> {module} (l." in report, (contract_id, module)


def test_every_private_contract_guards_its_internal_from_every_other_distribution() -> None:
    """Expected from the pyprojects (never from the config itself): private-<x> forbids exactly undercroft_<x>._internal
    to each of the twelve other import names, and there is one such contract per distribution."""
    ours = sorted(import_name(name) for name in distributions())
    contracts = _contracts()
    for module in ours:
        contract = contracts[f"private-{module.removeprefix('undercroft_')}"]
        assert contract["type"] == "forbidden" and contract["forbidden_modules"] == [f"{module}._internal"], module
        assert sorted(contract["source_modules"]) == [other for other in ours if other != module], module
        assert contract["allow_indirect_imports"] is True, module
    assert sorted(c for c in contracts if c.startswith("private-")) == sorted(
        f"private-{m.removeprefix('undercroft_')}" for m in ours
    )


#: Outbound clients the stdlib ships inside packages the contract cannot forbid whole (grimp squashes external
#: packages to their top level, and ``urllib.parse`` is legitimately used): checked by reading the imports.
STDLIB_OUTBOUND = ("urllib.request", "http.client", "xmlrpc.client", "ftplib", "smtplib", "telnetlib")


def _imported_names(tree: ast.AST) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names |= {alias.name for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names |= {f"{node.module}.{alias.name}" for alias in node.names}
    return names


def test_no_stdlib_outbound_client_outside_net() -> None:
    """DESIGN: outbound HTTP (httpx, urllib, http.client, raw sockets) appears only in undercroft_net."""
    offenders = []
    for package in sorted(PACKAGES_DIR.iterdir()):
        if package.name == "undercroft-net" or not (package / "src").is_dir():
            continue
        for path in sorted((package / "src").rglob("*.py")):
            imported = _imported_names(ast.parse(path.read_text(encoding="utf-8")))
            hits = sorted(n for n in imported if any(n == m or n.startswith(m + ".") for m in STDLIB_OUTBOUND))
            if hits:
                offenders.append(f"{path.relative_to(ROOT)}: {hits}")
    assert not offenders, offenders


def test_the_stdlib_outbound_scan_sees_a_plant() -> None:
    assert "urllib.request" in _imported_names(ast.parse("from urllib import request\n"))
    assert "http.client" in _imported_names(ast.parse("import http.client as c\n"))
