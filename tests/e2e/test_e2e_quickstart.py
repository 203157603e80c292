"""The README's setup line ends with tools/quickstart.py: it must pass and leave no palace (a master key) behind."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_quickstart_passes_and_removes_its_throw_away_palace(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env["TMPDIR"] = str(tmp_path)  # tempfile.mkdtemp creates the palace here
    ran = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "quickstart.py")], env=env, text=True, capture_output=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert "quickstart: ok" in ran.stdout
    palace = next(line.removeprefix("palace: ") for line in ran.stdout.splitlines() if line.startswith("palace: "))
    assert Path(palace).parent == tmp_path  # the premise: the palace was made where we look
    assert list(tmp_path.iterdir()) == [], sorted(p.name for p in tmp_path.iterdir())


def test_a_declared_home_is_never_touched(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env["UNDERCROFT_HOME"] = str(tmp_path / "palace")
    env["TMPDIR"] = str(tmp_path / "tmp")
    (tmp_path / "tmp").mkdir()
    ran = subprocess.run(
        [sys.executable, str(ROOT / "tools" / "quickstart.py")], env=env, text=True, capture_output=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    assert not (tmp_path / "palace").exists()  # the quickstart used its own throw-away palace
    assert f"palace: {tmp_path / 'tmp'}" in ran.stdout and list((tmp_path / "tmp").iterdir()) == []
