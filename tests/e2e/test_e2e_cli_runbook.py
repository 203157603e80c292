"""End to end: the incident runbook's restore step, typed as the documents print it, works.

``undercroft backup list`` names snapshots ``<vault>-<stamp>`` and ``undercroft backup restore
<vault>-<stamp> --force`` restores that vault — no ``--vault`` needed, for a vault other than ``default`` too.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROGRAM = Path(sys.executable).parent / "undercroft"


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env["UNDERCROFT_HOME"] = str(home)
    return subprocess.run([str(PROGRAM), *args], env=env, capture_output=True, text=True, timeout=120, check=False)


def test_the_runbooks_backup_names_restore_their_vault(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    assert _run(home, "init").returncode == 0
    assert _run(home, "vault", "create", "work").returncode == 0
    kept = _run(home, "remember", "Kept before the incident.", "--vault", "work").stdout.split()[1]
    created = _run(home, "backup", "create", "--vault", "work")
    assert created.returncode == 0, created.stderr
    listed = _run(home, "backup", "list", "--vault", "work").stdout.split()
    assert listed and listed[0].startswith("work-") and listed[0] in created.stdout
    lost = _run(home, "remember", "Written after the backup.", "--vault", "work").stdout.split()[1]
    restored = _run(home, "backup", "restore", listed[0], "--force")
    assert restored.returncode == 0, restored.stderr
    assert f"restored vault 'work' from backup {listed[0]}" in restored.stdout
    assert _run(home, "drawer", "get", kept, "--vault", "work").returncode == 0
    gone = _run(home, "drawer", "get", lost, "--vault", "work")
    assert gone.returncode == 1 and lost in gone.stderr and "integrity" not in gone.stderr, gone.stderr
    assert _run(home, "verify", "--vault", "work").returncode == 0
