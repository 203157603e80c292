"""End to end: the real `undercroft` program, as a subprocess, pushes a sealed vault to a real local Chroma
server (the session's, started by the root conftest) and searches through it — the done-when of issue 27."""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

PROGRAM = Path(sys.executable).parent / "undercroft"

pytestmark = pytest.mark.loopback


def _run(home: Path, chroma: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env.update({"UNDERCROFT_HOME": str(home), "UNDERCROFT_CHROMA_URL": chroma})
    return subprocess.run([str(PROGRAM), *args], env=env, capture_output=True, text=True, timeout=60, check=False)


def test_push_a_sealed_vault_to_chroma_and_search_through_it(tmp_path: Path, chroma_url: str) -> None:
    home = tmp_path / "palace"
    assert _run(home, chroma_url, "vault", "create", "e2e").returncode == 0
    notes = (("The billing cron runs at 02:15 UTC.", "ops"), ("Quokkas were the mascot of the 2024 offsite.", "team"))
    for text, wing in notes:
        saved = _run(home, chroma_url, "remember", text, "--vault", "e2e", "--wing", wing, "--room", "notes")
        assert saved.returncode == 0, saved.stderr
    pushed = _run(home, chroma_url, "index", "push", "chroma", "--vault", "e2e", "--json")
    assert pushed.returncode == 0, pushed.stderr
    assert json.loads(pushed.stdout)["pushed"] == 2  # (status, refusals, the leak test: the CLI's own tests)
    found = _run(home, chroma_url, "search", "quokka mascot", "--vault", "e2e", "--backend", "chroma", "-n", "1")
    assert found.returncode == 0 and "Quokkas were the mascot of the 2024 offsite." in found.stdout, found.stderr
    with sqlite3.connect(home / "vaults" / "e2e" / "vault.db") as raw:
        records = [r for (r,) in raw.execute("SELECT record_id FROM audit") if r.startswith("egress/")]
        # A bit flipped in every drawer (the wing column of a sealed vault is a blind value an offline editor
        # cannot aim by name), so the one the mirror proposes is tampered: the search through it is a verdict.
        for drawer_id, content in raw.execute("SELECT id, content FROM drawers").fetchall():
            flipped = bytearray(content)
            flipped[20] ^= 0x01
            raw.execute("UPDATE drawers SET content = ? WHERE id = ?", (bytes(flipped), drawer_id))
    assert records == ["egress/index-push"]
    tampered = _run(home, chroma_url, "search", "quokka mascot", "--vault", "e2e", "--backend", "chroma")
    assert tampered.returncode == 2 and "Quokkas" not in tampered.stdout, tampered.stderr
