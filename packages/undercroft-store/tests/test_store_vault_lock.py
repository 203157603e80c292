"""The vault lock and the manifest compare-and-swap (issue 15, item 1): rotation never runs beside a handle.

Other processes are real subprocesses holding the vault open; the waits are shortened by monkeypatching
the lock module's bounds (the bounded-wait logic is what is under test, not the default numbers).
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest
from undercroft_core import HashEmbedder
from undercroft_store import Palace
from undercroft_store.errors import RotationInProgress, VaultInUse
from undercroft_store.integrity.rotation import rotate_vault
from undercroft_store.kernel._internal import vault_lock
from undercroft_store.kernel._internal.vault_lock import GATE_FILE, lock_exclusive, lock_shared
from undercroft_vault import Anchor, Manifest, ManifestConflict, derive_vault_keys, new_vault_salt, read_manifest

_HOLDER = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from undercroft_core import HashEmbedder
    from undercroft_store import Palace
    home, ready, seconds = Path(sys.argv[1]), Path(sys.argv[2]), float(sys.argv[3])
    with Palace(home) as palace, palace.open_vault("default", HashEmbedder(), read_only=True):
        ready.touch()
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline and not (home / "release").exists():
            time.sleep(0.01)
    """
)


def _hold_open(home: Path, seconds: float) -> subprocess.Popen[bytes]:
    """Another process holding vault 'default' open (read-only) for ``seconds`` or until ``home/release``."""
    ready = home / f"ready-{time.monotonic_ns()}"
    holder = subprocess.Popen([sys.executable, "-c", _HOLDER, str(home), str(ready), str(seconds)])
    deadline = time.monotonic() + 60
    while not ready.exists():
        assert holder.poll() is None, "the holder process died before opening the vault"
        assert time.monotonic() < deadline
        time.sleep(0.01)
    return holder


def _vault_dir(home: Path) -> Path:
    return home / "vaults" / "default"


def _remember(palace: Palace, text: str) -> str:
    with palace.open_vault("default", HashEmbedder()) as store:
        return store.remember(text, wing="life", room="misc", added_by="t")[0].id


def test_rotation_refuses_a_handle_another_process_keeps_open(
    palace: Palace, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _remember(palace, "a note before the holder opens")
    monkeypatch.setattr(vault_lock, "DRAIN_SECONDS", 0.3)
    holder = _hold_open(home, 60)
    try:
        started = time.monotonic()
        with pytest.raises(VaultInUse, match="rotation needs the only handle"):
            rotate_vault(palace, "default", HashEmbedder())
        assert time.monotonic() - started < 5
    finally:
        (home / "release").touch()
        holder.wait(timeout=30)
    assert rotate_vault(palace, "default", HashEmbedder()).generation_after == 2


def test_rotation_waits_for_a_short_lived_handle_to_close(palace: Palace, home: Path) -> None:
    _remember(palace, "a note before the holder opens")
    holder = _hold_open(home, 0.5)  # a CLI command's worth of holding: the rotation waits, then runs
    try:
        assert rotate_vault(palace, "default", HashEmbedder()).generation_after == 2
    finally:
        holder.wait(timeout=30)
    assert holder.returncode == 0


def test_an_open_behind_a_rotation_waits_then_refuses_exit_1_class(
    palace: Palace, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _remember(palace, "a note")
    monkeypatch.setattr(vault_lock, "OPEN_WAIT_SECONDS", 0.2)
    with lock_exclusive(_vault_dir(home)):  # what a rotation holds for its whole duration
        for read_only in (True, False):
            with pytest.raises(RotationInProgress, match="rotation in progress"):
                palace.open_vault("default", HashEmbedder(), read_only=read_only)
    with palace.open_vault("default", HashEmbedder(), read_only=True) as store:
        assert store.verify().ok


def test_deleting_or_replacing_the_gate_file_does_not_break_the_exclusion(
    palace: Palace, home: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(vault_lock, "OPEN_WAIT_SECONDS", 0.2)
    gate = _vault_dir(home) / GATE_FILE
    with lock_exclusive(_vault_dir(home)):
        gate.unlink()  # an attacker removes the gate: new openers would find no gate to queue at
        with pytest.raises(RotationInProgress):
            lock_shared(_vault_dir(home))
        os.mkfifo(gate)  # ... or plants a FIFO (never blocked on, never locked)
        with pytest.raises(RotationInProgress):
            lock_shared(_vault_dir(home))
        gate.unlink()
        gate.symlink_to(home / "elsewhere")  # ... or a symlink (never followed)
        with pytest.raises(RotationInProgress):
            lock_shared(_vault_dir(home))
    assert not (home / "elsewhere").exists()
    with lock_shared(_vault_dir(home)):
        pass


def test_the_same_process_cannot_rotate_a_vault_it_holds_open(palace: Palace) -> None:
    with palace.open_vault("default", HashEmbedder(), read_only=True):
        started = time.monotonic()
        with pytest.raises(VaultInUse, match="in this process"):
            rotate_vault(palace, "default", HashEmbedder())
        assert time.monotonic() - started < 1  # refused at once, not after waiting for itself


def test_an_open_creates_no_lock_file(palace: Palace, home: Path) -> None:
    _remember(palace, "a note")
    with palace.open_vault("default", HashEmbedder(), read_only=True):
        assert not (_vault_dir(home) / GATE_FILE).exists()  # only a rotation creates the gate
    rotate_vault(palace, "default", HashEmbedder())
    assert (_vault_dir(home) / GATE_FILE).stat().st_mode & 0o777 == 0o600


def test_a_handle_opened_before_a_generation_change_never_writes_the_old_generation_back(
    palace: Palace, home: Path
) -> None:
    """The root of the brick: a writer that opened under generation 1 anchored vault.json at generation 1."""
    _remember(palace, "first")
    master = palace._master_key()
    with palace.open_vault("default", HashEmbedder()) as writer:
        # vault.json moves to generation 2 while the writer holds the vault (what an unlocked rotation did).
        salt = new_vault_salt(os.urandom)
        keys = derive_vault_keys(master, "default", salt)
        newer = Manifest("default", "sealed", salt, 2, Anchor(b"\x00" * 32, 0))
        (_vault_dir(home) / "vault.json").write_bytes(newer.to_json(keys))
        swapped = (_vault_dir(home) / "vault.json").read_bytes()
        with pytest.raises(ManifestConflict, match="no longer key generation 1"):
            writer.remember("second", wing="life", room="misc", added_by="t")
    assert (_vault_dir(home) / "vault.json").read_bytes() == swapped  # never written back
    assert read_manifest(_vault_dir(home), vault_id="default", master=master)[0].generation == 2
