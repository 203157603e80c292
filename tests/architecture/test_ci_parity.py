"""CI checks what README and the workflow claim: the workflow runs `.ci/run` (README's own commands, then the
CI-only sessions) with ../shared beside the checkout, on every Python minor the wheels claim, and nox builds
and installs the wheels under the interpreter it runs on (no hard-coded version)."""

from __future__ import annotations

import pathlib
import re
import tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / ".github" / "workflows" / "ci.yml"


def _run_steps() -> list[str]:
    return [line.split("run:", 1)[1].strip() for line in WORKFLOW.read_text().splitlines() if "- run:" in line]


def test_the_workflow_runs_ci_run_and_no_command_of_its_own() -> None:
    steps = _run_steps()
    assert "./.ci/run" in steps
    # Besides .ci/run only a check that ../shared arrived: no test, lint or nox command the script does not run.
    assert not [step for step in steps if "nox" in step or "pytest" in step or "uv " in step], steps


def test_the_workflow_lays_shared_beside_the_checkout() -> None:
    text = WORKFLOW.read_text()
    assert "path: undercroft" in text and "path: shared" in text and "working-directory: undercroft" in text
    assert "test -d shared/seeds && test -d shared/data" in text


def test_the_matrix_is_every_minor_the_wheels_claim() -> None:
    floors = set()
    for pyproject in sorted((ROOT / "packages").glob("*/pyproject.toml")):
        requires = tomllib.loads(pyproject.read_text())["project"]["requires-python"]
        match = re.fullmatch(r">=3\.(\d+)", requires)
        assert match, (pyproject, requires)
        floors.add(int(match.group(1)))
    assert len(floors) == 1, floors
    [line] = [line for line in WORKFLOW.read_text().splitlines() if line.strip().startswith("python: [")]
    matrix = [int(minor) for minor in re.findall(r'"3\.(\d+)"', line)]
    floor = floors.pop()
    assert matrix[0] == floor and matrix == list(range(floor, floor + len(matrix))) and len(matrix) >= 3, matrix
    assert "UV_PYTHON: ${{ matrix.python }}" in WORKFLOW.read_text()


def test_ci_run_runs_the_readme_lines_then_build_and_mutation() -> None:
    script = (ROOT / ".ci" / "run").read_text()
    assert "readme_command setup" in script and "readme_command test" in script
    assert 'ci_sessions="build mutation"' in script and "nox -s $ci_sessions" in script


def test_the_noxfile_hard_codes_no_python_version_and_defines_the_ci_sessions() -> None:
    noxfile = (ROOT / "noxfile.py").read_text()
    assert not re.search(r'"3\.\d+"', noxfile), "a hard-coded Python version in noxfile.py"
    for session in ("def build(", "def mutation(", "def tests(", "def lint("):
        assert session in noxfile, session


def test_the_lint_session_checks_formatting_as_its_docstring_says() -> None:
    noxfile = (ROOT / "noxfile.py").read_text()
    lint = noxfile[noxfile.index("def lint(") :].split("\n@nox.session", 1)[0]
    assert '"ruff", "check", "."' in lint
    assert '"ruff", "format", "--check", "."' in lint


def test_every_bench_script_takes_smoke() -> None:
    # `nox -s bench-smoke` runs every benchmarks/bench_*.py with --smoke: a script without it fails CI late.
    missing = [
        path.name
        for path in sorted((ROOT / "benchmarks").glob("bench_*.py"))
        if '"--smoke"' not in path.read_text(encoding="utf-8")
    ]
    assert missing == []
