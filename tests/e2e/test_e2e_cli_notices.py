"""End to end: the real ``undercroft`` program's stderr carries its own notices, never a raw Python warning.

Under ``UNDERCROFT_READ_AUDIT=chain`` a read-only open (stats, verify, taxonomy, tunnel list …) cannot append
read records. The store used to say so twice: once as its ``unhealed`` line and once as a Python
``RuntimeWarning`` printed raw with a source location (``palace.py:207``). Now the notice is said once, in
the open's ``unhealed`` channel, which ``stats`` and ``verify`` print.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

PROGRAM = Path(sys.executable).parent / "undercroft"
NOTICE = "UNDERCROFT_READ_AUDIT=chain cannot append, reads are served unaudited"


def _run(home: Path, *args: str, **extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env.update(UNDERCROFT_HOME=str(home), PYTHONWARNINGS="default", **extra)
    return subprocess.run([str(PROGRAM), *args], env=env, capture_output=True, text=True, timeout=120, check=False)


def test_read_only_opens_under_chain_audit_print_no_raw_warning(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    assert _run(home, "init").returncode == 0
    assert _run(home, "remember", "Alice chose GraphQL.", "--wing", "work").returncode == 0
    for argv in (("stats",), ("verify",), ("taxonomy",), ("tunnel", "list"), ("kg", "stats"), ("search", "GraphQL")):
        done = _run(home, *argv, UNDERCROFT_READ_AUDIT="chain")
        assert done.returncode == 0, (argv, done.stderr)
        assert "Warning" not in done.stderr and ".py:" not in done.stderr, (argv, done.stderr)
    stats = _run(home, "stats", UNDERCROFT_READ_AUDIT="chain")
    assert NOTICE in stats.stdout  # the notice is kept, in the open's own channel
    verify = _run(home, "verify", UNDERCROFT_READ_AUDIT="chain")
    assert verify.stderr.count(NOTICE) == 1 and verify.stderr.startswith("unhealed: ")
