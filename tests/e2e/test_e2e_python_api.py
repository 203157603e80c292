"""docs/python-api.md's program, extracted verbatim and run in a fresh process with a fresh temporary home.

The page's first ``python`` block after the ``python-api-program`` marker is the program; it must exit 0,
print the GraphQL drawer as the first hit, leave the verify verdict sound, and leave a vault that the real
``undercroft verify`` program accepts (the facade writes what the CLI reads).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = Path(sys.executable).parent / "undercroft"


def _program() -> str:
    text = (ROOT / "docs" / "python-api.md").read_text(encoding="utf-8")
    return text.split("<!-- python-api-program -->\n```python\n", 1)[1].split("```", 1)[0]


def test_the_documented_program_runs_in_a_fresh_home(tmp_path: Path) -> None:
    program = _program()
    assert len(program.strip().splitlines()) <= 12, "the page promises a program of about ten lines"
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env["UNDERCROFT_HOME"] = str(tmp_path / "fresh-home")  # does not exist yet: the program initialises it
    ran = subprocess.run(
        [sys.executable, "-c", program], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120
    )
    assert ran.returncode == 0, ran.stderr
    lines = ran.stdout.splitlines()
    assert "backend/decisions  We chose GraphQL over REST for the mobile app" in lines[0]
    assert "VERIFY OK" in lines, ran.stdout
    verified = subprocess.run([str(PROGRAM), "verify"], env=env, capture_output=True, text=True, timeout=120)
    assert verified.returncode == 0, verified.stdout + verified.stderr
    # a second run opens the now-existing vault instead of initialising again, and adds two more drawers
    again = subprocess.run([sys.executable, "-c", program], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    stats = subprocess.run([str(PROGRAM), "stats", "--json"], env=env, capture_output=True, text=True, timeout=120)
    assert json.loads(stats.stdout)["drawers"] == 4, stats.stdout
