"""Shared facts about the workspace for the architecture meta-tests (imported by path, not a package)."""

from __future__ import annotations

import pathlib
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES_DIR = ROOT / "packages"


def distributions() -> dict[str, dict]:
    """Map each distribution name to its parsed [project] table."""
    found = {}
    for path in sorted(PACKAGES_DIR.glob("*/pyproject.toml")):
        project = tomllib.loads(path.read_text())["project"]
        found[project["name"]] = project
    return found


def import_name(distribution: str) -> str:
    """undercroft-embed-onnx -> undercroft_embed_onnx."""
    return distribution.replace("-", "_")


def declared_siblings(project: dict, *, with_extras: bool) -> set[str]:
    """Our distributions this one declares, by import name."""
    deps = list(project.get("dependencies", []))
    if with_extras:
        for extra in project.get("optional-dependencies", {}).values():
            deps.extend(extra)
    # "undercroft-obs[telemetry]==0.1.0" names undercroft-obs: the extra selects its optional dependencies
    return {import_name(d.split("==")[0].split("[")[0]) for d in deps if d.startswith("undercroft-")}


def root_config() -> dict:
    """The workspace root pyproject."""
    return tomllib.loads((ROOT / "pyproject.toml").read_text())
