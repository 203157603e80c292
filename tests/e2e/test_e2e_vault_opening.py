"""End to end, the real `undercroft` program: heals reported and logged, malformed files refused.

Issue 15: item 6 (a CLI write healed a
restored older manifest without a word), item 7 (a 5,000-digit manifest integer exited 1; a zero-length
vault.db exited 1 and the refused remember wrote into it), item 17 (vault.db beside palace.db was accepted).
The rotation race (item 1) is tests/e2e/test_e2e_rotation_race.py.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

PROGRAM = Path(sys.executable).parent / "undercroft"


def _env(home: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env["UNDERCROFT_HOME"] = str(home)
    return env


def _run(home: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(PROGRAM), *args], env=_env(home), capture_output=True, text=True, timeout=120, check=False
    )


def _vault(home: Path) -> Path:
    return home / "vaults" / "default"


def _init(home: Path, *notes: str) -> list[str]:
    assert _run(home, "init").returncode == 0
    ids = []
    for note in notes:
        saved = _run(home, "remember", note)
        assert saved.returncode == 0, saved.stderr
        ids.append(saved.stdout.split()[1])
    return ids


def test_a_writable_open_reports_and_logs_the_heal_of_a_restored_older_manifest(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    _init(home, "first")
    old_manifest = (_vault(home) / "vault.json").read_bytes()
    _init(home, "second", "third")
    (_vault(home) / "vault.json").write_bytes(old_manifest)  # an older vault.json put back beside the db
    before = _run(home, "stats")
    assert before.returncode == 0 and "2 record(s) behind" in before.stdout + before.stderr
    saved = _run(home, "remember", "fourth")
    assert saved.returncode == 0
    assert "healed: manifest anchor was 2 record(s) behind the chain head" in saved.stderr
    after = _run(home, "stats")
    assert "heals logged:   1" in after.stdout and "2 record(s) behind" in after.stdout
    as_json = json.loads(_run(home, "stats", "--json").stdout)
    assert len(as_json["heals"]) == 1 and "anchor 1, head 3" in as_json["heals"][0]
    assert _run(home, "verify").returncode == 0


def test_a_manifest_integer_past_the_digit_limit_is_an_integrity_verdict(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    _init(home, "a note")
    path = _vault(home) / "vault.json"
    text = path.read_text()
    generation = json.loads(text)["generation"]
    path.write_text(text.replace(f'"generation": {generation}', '"generation": ' + "9" * 5000))
    db_before = (_vault(home) / "vault.db").read_bytes()
    for command in (["stats"], ["remember", "another"], ["verify"]):
        result = _run(home, *command)
        assert result.returncode == 2, (command, result.stderr)
        assert "manifest is not valid JSON" in result.stderr and "Traceback" not in result.stderr
    assert (_vault(home) / "vault.db").read_bytes() == db_before


def test_a_zero_length_database_under_a_manifest_is_refused_and_never_written(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    _init(home, "a note", "another")
    for name in ("vault.db", "vault.db-wal", "vault.db-shm"):
        (_vault(home) / name).unlink(missing_ok=True)
    (_vault(home) / "vault.db").write_bytes(b"")
    for command in (["remember", "refused"], ["stats"], ["search", "note"]):
        result = _run(home, *command)
        assert result.returncode == 2, (command, result.stderr)
        assert "zero-length" in result.stderr
    assert (_vault(home) / "vault.db").stat().st_size == 0  # the refused commands wrote nothing
    assert not (_vault(home) / "vault.db-wal").exists()


def test_a_vault_directory_holding_vault_db_and_palace_db_is_refused(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    _init(home, "a note")
    shutil.copyfile(_vault(home) / "vault.db", _vault(home) / "palace.db")  # a stray copy
    for command in (["stats"], ["remember", "refused"], ["verify"]):
        result = _run(home, *command)
        assert result.returncode == 2, (command, result.stderr)
        assert "both vault.db and palace.db" in result.stderr
    (_vault(home) / "palace.db").unlink()
    assert _run(home, "verify").returncode == 0
