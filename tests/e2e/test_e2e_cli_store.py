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
        # One bit flipped (XOR), never a byte overwritten with 0x00: an overwrite is a no-op when the byte was 0.
        content = bytearray(db.execute("SELECT content FROM drawers WHERE id = ?", (drawer_id,)).fetchone()[0])
        content[30] ^= 0x01
        db.execute("UPDATE drawers SET content = ? WHERE id = ?", (bytes(content), drawer_id))
    tampered = _run(home, "drawer", "get", drawer_id)
    assert tampered.returncode == 2 and f"record {drawer_id}" in tampered.stderr, tampered.stderr
    assert "fails its HMAC tag" in tampered.stderr and "I parked" not in tampered.stdout
    failed = _run(home, "verify")
    assert failed.returncode == 2 and f"TAMPERED: {drawer_id}" in failed.stdout
    unknown_vault = _run(home, "stats", "--vault", "nope")
    assert unknown_vault.returncode == 1 and "nope" in unknown_vault.stderr, unknown_vault.stderr
    unknown_command = _run(home, "no-such-command")
    assert unknown_command.returncode == 1 and "no-such-command" in unknown_command.stderr, unknown_command.stderr


def _flip_in(database: Path, table: str, needle: bytes, plus: int, bit: int) -> None:
    """Flip one bit of ``needle`` (at ``plus``) where it sits in one of ``table``'s pages (dbstat names them)."""
    with sqlite3.connect(database) as db:
        db.execute("PRAGMA wal_checkpoint(TRUNCATE)")
        size = int(db.execute("PRAGMA page_size").fetchone()[0])
        pages = [int(r[0]) for r in db.execute("SELECT pageno FROM dbstat WHERE name = ?", (table,))]
    data = bytearray(database.read_bytes())
    at = next(f for p in pages if (f := data.find(needle, (p - 1) * size, p * size)) >= 0) + plus
    data[at] ^= 1 << bit
    database.write_bytes(bytes(data))


def test_one_flipped_bit_in_the_schema_or_a_timestamp_is_exit_2_and_nothing_is_written(tmp_path: Path) -> None:
    # Found by the tamper campaign (undercroft-bench tamper): both exited 1 with sqlite3's own words.
    home = tmp_path / "palace"
    assert _run(home, "init").returncode == 0
    assert _run(home, "remember", "The lighthouse keeper logs the tide.", "--wing", "work").returncode == 0
    database = home / "vaults" / "default" / "vault.db"
    with sqlite3.connect(database) as db:
        stamp = str(db.execute("SELECT at FROM audit ORDER BY seq DESC LIMIT 1").fetchone()[0])
    _flip_in(database, "audit", stamp.encode(), len(stamp) - 3, 7)  # a digit's high bit: not UTF-8
    failed = _run(home, "verify")
    assert failed.returncode == 2 and "integrity:" in failed.stderr and "not UTF-8" in failed.stderr
    _flip_in(database, "audit", stamp.encode()[: len(stamp) - 3], len(stamp) - 3, 7)  # restore it
    assert _run(home, "verify").returncode == 0
    _flip_in(database, "sqlite_schema", b"meta_json BLOB NOT NULL", len("meta_jso"), 0)  # meta_json -> meta_jsoo
    before = database.read_bytes()
    for command in (["verify"], ["stats"], ["drawer", "list"], ["search", "lighthouse"], ["remember", "more"]):
        refused = _run(home, *command)
        assert refused.returncode == 2, (command, refused.stderr)
        assert "integrity:" in refused.stderr and "schema differs" in refused.stderr
    assert database.read_bytes() == before
