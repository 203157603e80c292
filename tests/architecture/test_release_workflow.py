"""The release workflow's build step, run here: thirteen wheels and thirteen sdists, one version, every name.

The workflow cannot run on this machine (it publishes by trusted publishing from GitHub), so this test reads
its `build` step out of .github/workflows/release.yml, runs that exact command into a temporary directory and
checks what a release would upload.
"""

from __future__ import annotations

import re
import shlex
import subprocess
import sys
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "release.yml"


def _build_command() -> list[str]:
    text = WORKFLOW.read_text()
    found = re.search(r"- name: build\n\s+run: (.+)\n", text)
    assert found, "the release workflow has no `build` step"
    return shlex.split(found.group(1))


def test_the_workflow_publishes_by_trusted_publishing_after_a_build() -> None:
    text = WORKFLOW.read_text()
    assert "id-token: write" in text and "pypa/gh-action-pypi-publish" in text
    assert "password" not in text and "PYPI_TOKEN" not in text  # OIDC, never a stored token
    assert "needs: build" in text


def test_the_build_step_produces_every_wheel_and_sdist_in_lockstep(tmp_path: Path) -> None:
    command = _build_command()
    assert command[:3] == ["python3", "-m", "uv"] and "--all-packages" in command
    out = command.index("--out-dir")
    command = [sys.executable, *command[1:out + 1], str(tmp_path), *command[out + 2:]]  # fmt: skip
    built = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, timeout=600)
    assert built.returncode == 0, built.stderr
    projects = [tomllib.loads(p.read_text())["project"] for p in sorted(ROOT.glob("packages/*/pyproject.toml"))]
    assert len(projects) == 13
    versions = {project["version"] for project in projects}
    assert len(versions) == 1, versions  # lockstep
    [version] = versions
    for project in projects:
        stem = project["name"].replace("-", "_")
        assert (tmp_path / f"{stem}-{version}.tar.gz").is_file(), project["name"]
        assert list(tmp_path.glob(f"{stem}-{version}-py3-none-any.whl")), project["name"]
    assert len(list(tmp_path.glob("*.whl"))) == 13 and len(list(tmp_path.glob("*.tar.gz"))) == 13
