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
    # Outbound HTTP: each raw client library, from distributions that will talk to the network through net.
    ("undercroft_cli", "import httpx\n", "outbound-http"),
    ("undercroft_orchestrator", "import httpx\n", "outbound-http"),
    ("undercroft_llm", "from httpx import Client\n", "outbound-http"),
    ("undercroft_obs", "import ssl\n", "outbound-http"),
    ("undercroft_config", "import socket\n", "outbound-http"),
    ("undercroft_bench", "import urllib3\n", "outbound-http"),
    # net polices TLS but makes no certificate: its source may not import cryptography (its tests do).
    ("undercroft_net", "import cryptography.x509\n", "crypto-libraries"),
    ("undercroft_cli", "import undercroft_vault._internal\n", "private-vault"),
    ("undercroft_cli.commands", "import undercroft_cli.mcp.server\n", "cli-adapters"),
    ("undercroft_cli.mcp", "import undercroft_cli.commands.search\n", "cli-adapters"),
    ("undercroft_cli.operations", "import click\n", "cli-operations"),
    # Inside the store: the kernel never reaches up to the façade or a feature; features never import each other.
    ("undercroft_store.kernel", "import undercroft_store.store\n", "store-layers"),
    ("undercroft_store.kernel", "import undercroft_store.memory.tunnels\n", "store-layers"),
    ("undercroft_store.integrity", "import undercroft_store.governance.quarantine\n", "store-layers"),
    ("undercroft_store.search", "import undercroft_store.memory.dedup\n", "store-layers"),
]


@pytest.mark.parametrize(("package", "source", "contract_id"), PLANTS)
def test_a_planted_forbidden_import_breaks_the_contract(
    tmp_path: pathlib.Path, package: str, source: str, contract_id: str
) -> None:
    assert LINT_IMPORTS
    sources = _copy_tree(tmp_path)
    src_dir = next(pathlib.Path(s) for s in sources if (pathlib.Path(s) / package.split(".")[0]).is_dir())
    (src_dir / package.replace(".", "/") / "planted_forbidden.py").write_text(source)
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
        capture_output=True,
        text=True,
        env=env,
        check=True,
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
        [
            sys.executable,
            "-c",
            "import sys, undercroft_cli.main; print(sorted(m for m in ('mcp', "
            "'undercroft_embed_onnx', 'undercroft_embed_ort', 'onnxruntime', 'uvicorn') if m in sys.modules))",
        ],
        capture_output=True,
        text=True,
        check=True,
    )
    assert probe.stdout.strip() == "[]", probe.stdout


def test_outbound_http_covers_every_distribution_but_net_and_index() -> None:
    """The contract names every distribution except the policy's owner and the backends it polices."""
    ours = {import_name(n) for n in distributions()}
    contract = _contracts()["outbound-http"]
    assert set(contract["source_modules"]) == ours - {"undercroft_net", "undercroft_index"}
    assert {"httpx", "socket", "ssl"} <= set(contract["forbidden_modules"])


# import-linter sees the stdlib squashed to top-level names, so it cannot forbid urllib.request without
# forbidding urllib.parse too: an AST scan keeps the stdlib's own HTTP clients inside undercroft_net.
STDLIB_CLIENTS = ("urllib.request", "http.client", "ftplib", "smtplib", "xmlrpc.client", "telnetlib")


def _stdlib_clients_imported(path: pathlib.Path) -> list[str]:

    found = []
    for node in ast.walk(ast.parse(path.read_text(), filename=str(path))):
        names = []
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module, *(f"{node.module}.{alias.name}" for alias in node.names)]
        found += [n for n in names if any(n == c or n.startswith(c + ".") for c in STDLIB_CLIENTS)]
    return found


def test_no_stdlib_http_client_outside_net() -> None:
    offenders = []
    for package in sorted(PACKAGES_DIR.iterdir()):
        if package.name in ("undercroft-net", "undercroft-index"):
            continue
        for path in (package / "src").rglob("*.py"):
            offenders += [f"{path}: {name}" for name in _stdlib_clients_imported(path)]
    assert offenders == []


@pytest.mark.parametrize(
    "source",
    [
        "import urllib.request\n",
        "from urllib import request\n",
        "from http.client import HTTPSConnection\n",
        "import http.client as h\n",
    ],
)
def test_the_stdlib_client_scan_sees_a_planted_import(tmp_path: pathlib.Path, source: str) -> None:
    planted = tmp_path / "planted.py"
    planted.write_text(source)
    assert _stdlib_clients_imported(planted)


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


def _internal_packages(module: str) -> list[str]:
    """Every ``_internal`` package of a distribution (the outermost one on each path), read from its tree."""
    src = next(path for path in PACKAGES_DIR.glob(f"*/src/{module}") if path.is_dir()).parent
    found = {".".join(init.parent.relative_to(src).parts) for init in src.glob(f"{module}/**/_internal/__init__.py")}
    return sorted(name for name in found if name.count("._internal") == 1)


def test_every_private_contract_guards_its_internal_from_every_other_distribution() -> None:
    """Expected from the pyprojects and the trees (never from the config itself): private-<x> forbids every
    ``_internal`` package of undercroft_<x> to each of the twelve other import names, one contract each."""
    ours = sorted(import_name(name) for name in distributions())
    contracts = _contracts()
    for module in ours:
        contract = contracts[f"private-{module.removeprefix('undercroft_')}"]
        assert contract["type"] == "forbidden", module
        assert sorted(contract["forbidden_modules"]) == _internal_packages(module), module
        assert sorted(contract["source_modules"]) == [other for other in ours if other != module], module
        assert contract["allow_indirect_imports"] is True, module
    assert sorted(c for c in contracts if c.startswith("private-")) == sorted(
        f"private-{m.removeprefix('undercroft_')}" for m in ours
    )
