"""The house: thirteen distributions, each shaped the same way, one version, one licence."""

from __future__ import annotations

import importlib.metadata
import pathlib
import sys

import pytest

sys.path.insert(0, str(pathlib.Path(__file__).parent))
from workspace import PACKAGES_DIR, ROOT, distributions, import_name

EXPECTED = {
    "undercroft-core",
    "undercroft-vault",
    "undercroft-store",
    "undercroft-index",
    "undercroft-llm",
    "undercroft-net",
    "undercroft-config",
    "undercroft-obs",
    "undercroft-cli",
    "undercroft-orchestrator",
    "undercroft-bench",
    "undercroft-embed-onnx",
    "undercroft-embed-ort",
}


def test_exactly_thirteen_distributions() -> None:
    assert set(distributions()) == EXPECTED


def test_top_level_layout() -> None:
    for entry in [
        "pyproject.toml",
        "packages",
        "noxfile.py",
        "tests",
        "docs",
        "benchmarks",
        "tools",
        ".github",
        "README.md",
        ".ci/run",
        "LICENSE",
        "uv.lock",
        "CHANGELOG.md",
    ]:
        assert (ROOT / entry).exists(), entry


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_distribution_shape(name: str) -> None:
    directory = PACKAGES_DIR / name
    src = directory / "src" / import_name(name)
    for required in [
        directory / "README.md",
        directory / "tests",
        src / "__init__.py",
        src / "py.typed",
        src / "errors.py",
    ]:
        assert required.exists(), required
    # Private code lives under an _internal/ package: at the top, or (a layered distribution such as the
    # store) under each layer that has private code.
    assert any(src.rglob("_internal/__init__.py")), f"{src} has no _internal/ package"
    assert (directory / "LICENSE").read_bytes() == (ROOT / "LICENSE").read_bytes()
    assert not (directory / "tests" / "__init__.py").exists(), "tests/ must not be a package"
    project = distributions()[name]
    assert project["license"] == "Apache-2.0"
    assert "__all__" in (src / "__init__.py").read_text()


def test_one_version_everywhere() -> None:
    projects = distributions()
    versions = {p["version"] for p in projects.values()}
    assert len(versions) == 1, versions
    (version,) = versions
    for name, project in projects.items():
        module = __import__(import_name(name))
        assert module.__version__ == version, name
        pins = list(project.get("dependencies", []))
        for extra in project.get("optional-dependencies", {}).values():
            pins.extend(extra)
        for pin in pins:
            if pin.startswith("undercroft-"):
                assert pin.endswith("==" + version), f"{name}: {pin} is not pinned to the lockstep version"


def test_installed_distributions_are_this_checkout() -> None:
    """Every installed undercroft-* is the editable copy of this tree, never a stray wheel."""
    seen = set()
    for dist in importlib.metadata.distributions():
        name = dist.metadata["Name"]
        if not name or not name.startswith("undercroft-") or name == "undercroft-workspace":
            continue
        seen.add(name)
        module = __import__(import_name(name))
        origin = pathlib.Path(module.__file__).resolve()
        assert ROOT in origin.parents, f"{name} imports from {origin}, outside this checkout"
    assert seen == EXPECTED


def test_console_scripts() -> None:
    projects = distributions()
    assert projects["undercroft-cli"]["scripts"] == {"undercroft": "undercroft_cli.main:main"}
    assert projects["undercroft-orchestrator"]["scripts"] == {
        "undercroft-orchestrator": "undercroft_orchestrator.main:main"
    }


def test_readme_links_resolve() -> None:
    """Every relative link in the README names a file that exists (a doc promised is a doc shipped)."""
    import re

    text = (ROOT / "README.md").read_text()
    links = re.findall(r"\]\(([^)#:]+)\)", text)
    assert links, "the README links no docs"
    missing = [link for link in links if not (ROOT / link).exists()]
    assert not missing, f"README links to missing files: {missing}"


def test_no_machine_specific_paths() -> None:
    """Code and tests find ../shared relative to the checkout, never by this machine's absolute path."""
    offenders = []
    for folder in ("packages", "tests", "benchmarks", "tools"):
        for path in (ROOT / folder).rglob("*.py"):
            if path == pathlib.Path(__file__).resolve():
                continue
            if "/work/" in path.read_text(encoding="utf-8", errors="replace"):
                offenders.append(str(path.relative_to(ROOT)))
    assert not offenders, offenders
