"""kill -9 a rotating process at each named point; the vault reopens under exactly one key generation."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace
from undercroft_store.integrity.rotation import CHECKPOINTS

_CHILD = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from undercroft_core import HashEmbedder
    from undercroft_store import Palace
    from undercroft_store.integrity.rotation import rotate_vault

    point = sys.argv[2]

    def crash(name):
        if name == point:
            os.kill(os.getpid(), signal.SIGKILL)

    with Palace(Path(sys.argv[1])) as palace:
        rotate_vault(palace, "default", HashEmbedder(), checkpoint=crash)
    """
)


@pytest.mark.parametrize("point", ["rewritten", "staged", "committed", "promoted"])
def test_kill_9_at_each_point(palace: Palace, home: Path, point: str) -> None:
    with palace.open_vault("default", HashEmbedder()) as store:
        ids = [store.remember(f"note {i}", wing="life", room="misc", added_by="t")[0].id for i in range(20)]
    done = subprocess.run([sys.executable, "-c", _CHILD, str(home), point], capture_output=True, timeout=120)
    assert done.returncode == -signal.SIGKILL, done.stderr.decode()
    committed = CHECKPOINTS.index(point) >= CHECKPOINTS.index("committed")
    with Palace(home) as reopened, reopened.open_vault("default", HashEmbedder()) as store:
        assert store._context.manifest.generation == (2 if committed else 1)
        assert [store.get(i).content for i in ids] == [f"note {n}" for n in range(20)]
        assert store.verify().ok
    vault = home / "vaults" / "default"
    assert not (vault / "vault.json.next").exists()
    assert json.loads((vault / "vault.json").read_text())["generation"] == (2 if committed else 1)
