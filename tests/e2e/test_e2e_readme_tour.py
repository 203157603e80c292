"""The README's quick tour, line by line, in a fresh palace: every command a newcomer copies must work.

The tour is read out of README.md (the ``## A quick tour`` block), each ``undercroft …`` line is run by the
installed program from the clone's root with a throw-away ``UNDERCROFT_HOME``, and each must exit 0.
"""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PROGRAM = Path(sys.executable).parent / "undercroft"


def _tour() -> list[list[str]]:
    text = (ROOT / "README.md").read_text()
    block = text.split("## A quick tour", 1)[1].split("```sh\n", 1)[1].split("```", 1)[0]
    return [shlex.split(line, comments=True) for line in block.splitlines() if line.startswith("undercroft ")]


def test_every_tour_line_works_in_a_fresh_palace(tmp_path: Path) -> None:
    tour = _tour()
    assert len(tour) >= 8 and tour[0] == ["undercroft", "init"]
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env["UNDERCROFT_HOME"] = str(tmp_path / "palace")
    for words in tour:
        ran = subprocess.run([str(PROGRAM), *words[1:]], cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
        assert ran.returncode == 0, (words, ran.stderr)
        if words[1] == "search":
            assert "We chose GraphQL over REST for the mobile API" in ran.stdout
