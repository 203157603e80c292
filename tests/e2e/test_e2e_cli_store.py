"""End to end: the real `undercroft` program as a subprocess, exit codes included."""

from __future__ import annotations

import os
import sqlite3
import subprocess
import sys
from pathlib import Path

# The program installed beside this interpreter: the checkout's own editable install.
PROGRAM = Path(sys.executable).parent / "undercroft"


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env["UNDERCROFT_HOME"] = str(home)
    return subprocess.run([str(PROGRAM), *args], env=env, capture_output=True, text=True, timeout=60, check=False)


def test_remember_verify_tamper_cycle(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    assert _run(home, "init").returncode == 0
    saved = _run(home, "remember", "I parked on level 3, row F.", "--wing", "life", "--room", "car")
    assert saved.returncode == 0, saved.stderr
    drawer_id = saved.stdout.split()[1]
    got = _run(home, "drawer", "get", drawer_id)
    assert got.returncode == 0 and "I parked on level 3, row F." in got.stdout
    verified = _run(home, "verify")
    assert verified.returncode == 0 and "VERIFY OK" in verified.stdout
    raw = b"".join(p.read_bytes() for p in (home / "vaults" / "default").iterdir())
    assert b"parked" not in raw
    with sqlite3.connect(home / "vaults" / "default" / "vault.db") as db:
        db.execute("UPDATE drawers SET content = CAST(substr(content, 1, 30) || x'00' || substr(content, 32) AS BLOB)")
    assert _run(home, "drawer", "get", drawer_id).returncode == 2
    failed = _run(home, "verify")
    assert failed.returncode == 2 and f"TAMPERED: {drawer_id}" in failed.stdout
    assert _run(home, "stats", "--vault", "nope").returncode == 1
    assert _run(home, "no-such-command").returncode == 1
