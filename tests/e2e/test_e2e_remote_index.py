"""End to end: the real `undercroft` program, as a subprocess, pushes a sealed vault to a real local Chroma
server and to a real PostgreSQL with pgvector (the session's, started by the root conftest) and searches
through each — the done-when of issue 27."""

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


def _run(
    home: Path, chroma: str, *args: str, variable: str = "UNDERCROFT_CHROMA_URL"
) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env.update({"UNDERCROFT_HOME": str(home), variable: chroma})
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


def test_push_a_sealed_vault_to_pgvector_and_search_through_it(
    tmp_path: Path, pgvector_server: tuple[str, Path]
) -> None:
    """The real PostgreSQL holds sealed bytes only: its own data files, checkpointed, hold no content word."""
    import psycopg

    dsn, data = pgvector_server
    home = tmp_path / "palace"

    def run(*args: str) -> subprocess.CompletedProcess[str]:
        return _run(home, dsn, *args, variable="UNDERCROFT_PGVECTOR_DSN")

    assert run("vault", "create", "pg").returncode == 0
    notes = (
        ("The zeppelin hangar key sits under the marmalade jar.", "ops"),
        ("Ferrets audit the ledger on Fridays.", "team"),
    )
    ids = []
    for text, wing in notes:
        saved = run("remember", text, "--vault", "pg", "--wing", wing, "--room", "tarragon", "--json")
        assert saved.returncode == 0, saved.stderr
        ids.append(json.loads(saved.stdout)["results"][0]["id"])
    pushed = run("index", "push", "pgvector", "--vault", "pg", "--json")
    assert pushed.returncode == 0, pushed.stderr
    assert json.loads(pushed.stdout)["pushed"] == 2
    status = run("index", "status", "pgvector", "--vault", "pg", "--json")
    assert status.returncode == 0 and json.loads(status.stdout)["remote_records"] == 2, status.stdout + status.stderr
    found = run("search", "zeppelin hangar key", "--vault", "pg", "--backend", "pgvector", "-n", "1")
    assert found.returncode == 0, found.stderr
    assert "The zeppelin hangar key sits under the marmalade jar." in found.stdout
    with psycopg.connect(dsn, autocommit=True) as raw:
        raw.execute("CHECKPOINT")  # every page of the mirror on disk, where an offline reader would look
    with sqlite3.connect(home / "vaults" / "pg" / "vault.db") as local:
        blind = {str(w) for (w,) in local.execute("SELECT wing FROM drawers")}
    files = b"".join(p.read_bytes() for p in data.rglob("*") if p.is_file() and p.suffix != ".log")
    assert all(label.encode() in files for label in blind)  # the grep reads the mirror's real pages
    words = (b"zeppelin", b"marmalade", b"Ferrets", b"ledger", b"wolverhampton", b"quillfeather", b"tarragon")
    leaked = {
        word.decode(): str(path)
        for path in data.rglob("*")
        if path.is_file() and path.suffix != ".log"
        for word in words
        if word in path.read_bytes()
    }
    assert leaked == {}, leaked
    forgotten = run("forget", ids[0], "--vault", "pg", "--backend", "pgvector", "--out", str(tmp_path / "r.json"))
    assert forgotten.returncode == 0, forgotten.stdout + forgotten.stderr
    after = run("index", "status", "pgvector", "--vault", "pg", "--json")
    assert json.loads(after.stdout)["remote_records"] == 1, after.stdout
