"""Importing MemPalace 3.11 exports: the committed fixture (always), and one made by the real package (when present).

The fixture under fixtures/transfer/mempalace-export/ was produced by PyPI ``mempalace==3.11.0``'s own
``exporter.export_palace`` over a palace its CLI mined; the second test regenerates such an export from a
throw-away MemPalace venv outside the repository (``MEMPALACE_PYTHON``, else ``../mpvenv`` beside
the checkout) and skips when there is none.
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
from undercroft_cli._internal.exit_codes import run_cli
from undercroft_cli.main import cli

FIXTURE = Path(__file__).parent / "fixtures" / "transfer" / "mempalace-export"
_REPO = Path(__file__).resolve().parents[3]


def _mempalace_python() -> Path | None:
    declared = os.environ.get("MEMPALACE_PYTHON")
    candidate = Path(declared) if declared else _REPO.parent / "mpvenv" / "bin" / "python"
    return candidate if candidate.is_file() else None


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    for name in [n for n in os.environ if n.startswith("UNDERCROFT_")]:
        monkeypatch.delenv(name)
    monkeypatch.setenv("UNDERCROFT_HOME", str(tmp_path / "palace"))
    assert run_cli(cli, ["init"]) == 0
    return tmp_path


def _import(capsys: pytest.CaptureFixture[str], path: Path) -> tuple[dict[str, object], list[dict[str, str]]]:
    capsys.readouterr()
    assert run_cli(cli, ["import", str(path), "--json"]) == 0
    report = json.loads(capsys.readouterr().out)
    assert run_cli(cli, ["drawer", "list", "--json"]) == 0
    return report, json.loads(capsys.readouterr().out)


def test_committed_mempalace_export_imports_verbatim(home: Path, capsys: pytest.CaptureFixture[str]) -> None:
    report, drawers = _import(capsys, FIXTURE)
    assert report["format"] == "mempalace-markdown" and report["created"] == 2
    by_content = {d["content"]: d for d in drawers}
    decision = (
        'We chose GraphQL over REST because typed schemas catch drift early.\n\nThe "gateway" owns auth; '
        "services trust its headers.\n> quoted line inside the note"
    )
    assert set(by_content) == {
        decision,
        "Alice prefers Postgres for the billing service, and Bob wants SQLite for the edge cache.",
    }
    assert {(d["wing"], d["room"]) for d in drawers} == {("backend", "general")}
    report, _ = _import(capsys, FIXTURE)
    assert (report["created"], report["unchanged"]) == (0, 2)


def test_export_made_by_the_real_mempalace_package(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    python = _mempalace_python()
    if python is None:
        pytest.skip("no MemPalace 3.11 venv: set MEMPALACE_PYTHON (tools/mempalace_env.sh builds one)")
    project = tmp_path / "src" / "notes"
    project.mkdir(parents=True)
    words = "Release 4.2 moves the queue to Redis streams; the cron jobs retire in May.\n\nOwner: Dana."
    (project / "plan.md").write_text(words + "\n")
    palace, out = tmp_path / "mp-palace", tmp_path / "mp-export"
    for args in (["init", "--yes", "notes"], ["mine", "notes"]):
        subprocess.run(
            [str(python), "-m", "mempalace", "--palace", str(palace), *args],
            cwd=project.parent,
            check=True,
            capture_output=True,
            timeout=300,
        )
    script = f"from mempalace.exporter import export_palace; export_palace({str(palace)!r}, {str(out)!r})"
    subprocess.run([str(python), "-c", script], check=True, capture_output=True, timeout=300)
    report, drawers = _import(capsys, out)
    assert report["created"] == 1
    assert [d["content"] for d in drawers] == [words]
