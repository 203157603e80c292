"""The vault lock: every open holds the vault DIRECTORY shared; a key rotation holds it exclusive.

Why the directory and not a lock file: the directory is the one object an opener must resolve to reach
``vault.db`` and ``vault.json`` at all, it exists on every posture (a write-protected directory opens
``O_RDONLY`` and flocks fine, where a lock file could not even be created), and deleting or replacing a
lock file would silently split the lockers onto two inodes. After the lock is taken the path is re-stat'ed:
a directory renamed or swapped between ``open`` and ``flock`` is retried, so the lock held is the lock of
the directory the opener goes on to read.

A rotation must not be starved by a stream of short-lived openers (flock has no writer preference), so a
second, advisory ``vault.lock`` file is a GATE: a rotation creates it and takes it exclusive before waiting
for the directory; an opener takes it shared (when it exists) only for the instant of taking the directory
lock. Openers never create it, so an open writes nothing to the vault directory. Correctness rests
on the directory lock alone — an attacker deleting or replacing ``vault.lock`` (or a FIFO or symlink put in
its place, which is never followed and never locked) costs the rotation its priority, not its exclusion.

Waits are bounded (POSIX flock has no timeout, so both sides poll with ``LOCK_NB``): an opener waits up to
`OPEN_WAIT_SECONDS` for a rotation to finish, then refuses with `RotationInProgress` (exit 1); a rotation
waits up to `DRAIN_SECONDS` for the openers already in to leave, then refuses with `VaultInUse` (exit 1) —
a long-lived handle (``serve-mcp``, the daemon) never leaves by itself. A process already holding a vault
open cannot rotate it (`VaultInUse` at once, not after the drain: it would be waiting for itself).
"""

from __future__ import annotations

import errno
import fcntl
import os
import stat
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Final

from undercroft_store.errors import RotationInProgress, VaultInUse

__all__ = ["DRAIN_SECONDS", "GATE_FILE", "OPEN_WAIT_SECONDS", "VaultLock", "lock_exclusive", "lock_shared"]

#: The advisory gate file beside vault.json (priority for a waiting rotation; never needed for correctness).
GATE_FILE: Final = "vault.lock"
#: How long an open waits for a rotation holding the vault to finish before refusing (exit 1).
OPEN_WAIT_SECONDS: float = 60.0
#: How long a rotation waits for the handles already open to close before refusing (exit 1).
DRAIN_SECONDS: float = 10.0

_POLL_FIRST, _POLL_MAX = 0.005, 0.05
_held_lock = threading.Lock()
_held_shared: dict[tuple[int, int], int] = {}  # (st_dev, st_ino) of a vault directory -> shared holds here


@dataclass
class VaultLock:
    """A held vault lock (shared or exclusive); `release` is idempotent. Use as a context manager."""

    vault_dir: Path
    exclusive: bool
    _directory_fd: int
    _identity: tuple[int, int]
    _gate_fd: int | None = None
    _released: bool = field(default=False)

    def release(self) -> None:
        """Drop the lock (closing the descriptors releases the flocks)."""
        if self._released:
            return
        self._released = True
        if not self.exclusive:
            with _held_lock:
                remaining = _held_shared.get(self._identity, 1) - 1
                if remaining:
                    _held_shared[self._identity] = remaining
                else:
                    _held_shared.pop(self._identity, None)
        for fd in (self._gate_fd, self._directory_fd):
            if fd is not None:
                os.close(fd)

    def __enter__(self) -> VaultLock:
        """Hold for the ``with`` block."""
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Release on leaving the block."""
        self.release()


def _poll(fd: int, operation: int, deadline: float) -> bool:
    """Take ``operation`` on ``fd`` before ``deadline`` (monotonic); False when it is still held elsewhere."""
    pause = _POLL_FIRST
    while True:
        try:
            fcntl.flock(fd, operation | fcntl.LOCK_NB)
            return True
        except OSError as error:
            if error.errno not in (errno.EWOULDBLOCK, errno.EAGAIN, errno.EACCES):
                raise
        now = time.monotonic()
        if now >= deadline:
            return False
        time.sleep(min(pause, deadline - now))
        pause = min(pause * 2, _POLL_MAX)


def _open_gate(vault_dir: Path, *, create: bool) -> int | None:
    """The gate file's descriptor, or None: absent (only a rotation creates it), or not a regular file."""
    path = vault_dir / GATE_FILE
    flags = os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
    try:
        fd = os.open(path, flags | os.O_RDWR | os.O_CREAT, 0o600) if create else os.open(path, flags | os.O_RDONLY)
    except OSError:
        return None  # absent, a symlink, or a directory nobody may write: the directory lock alone decides
    if not stat.S_ISREG(os.fstat(fd).st_mode):  # a FIFO or device planted as the gate: ignore it
        os.close(fd)
        return None
    return fd


def _open_directory(vault_dir: Path) -> tuple[int, tuple[int, int]]:
    fd = os.open(vault_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    info = os.fstat(fd)
    return fd, (info.st_dev, info.st_ino)


def _still_there(vault_dir: Path, identity: tuple[int, int]) -> bool:
    try:
        info = os.stat(vault_dir)
    except OSError:
        return False
    return (info.st_dev, info.st_ino) == identity


def _lock_directory(vault_dir: Path, operation: int, deadline: float) -> tuple[int, tuple[int, int]] | None:
    """Flock the directory the path names when the lock is granted (retrying a swap); None on timeout."""
    while True:
        fd, identity = _open_directory(vault_dir)
        if not _poll(fd, operation, deadline):
            os.close(fd)
            return None
        if _still_there(vault_dir, identity):
            return fd, identity
        os.close(fd)  # renamed or replaced while we waited: lock the directory that is there now


def lock_shared(vault_dir: Path, *, wait: float | None = None) -> VaultLock:
    """Hold ``vault_dir`` shared (every open); `RotationInProgress` after ``wait`` seconds behind a rotation."""
    seconds = OPEN_WAIT_SECONDS if wait is None else wait
    deadline = time.monotonic() + seconds
    probe_fd, identity = _open_directory(vault_dir)
    os.close(probe_fd)
    with _held_lock:
        nested = _held_shared.get(identity, 0) > 0
    # A process that already holds this vault shared skips the gate: a rotation waiting at the gate for this
    # very process to leave would otherwise block its second open until the drain gives up.
    gate = None if nested else _open_gate(vault_dir, create=False)
    try:
        if gate is not None and not _poll(gate, fcntl.LOCK_SH, deadline):
            raise _in_progress(vault_dir, seconds)
        locked = _lock_directory(vault_dir, fcntl.LOCK_SH, deadline)
        if locked is None:
            raise _in_progress(vault_dir, seconds)
    finally:
        if gate is not None:
            os.close(gate)  # the gate is held only for the instant of taking the directory
    fd, identity = locked
    with _held_lock:
        _held_shared[identity] = _held_shared.get(identity, 0) + 1
    return VaultLock(vault_dir, exclusive=False, _directory_fd=fd, _identity=identity)


def lock_exclusive(vault_dir: Path, *, drain: float | None = None, wait: float | None = None) -> VaultLock:
    """Hold ``vault_dir`` exclusive (rotation): no other handle, in any process, is open while it is held.

    `RotationInProgress` when another rotation holds it past ``wait``; `VaultInUse` when this process holds
    the vault open, or when handles already open have not closed after ``drain`` seconds.
    """
    name = vault_dir.name
    probe_fd, identity = _open_directory(vault_dir)
    os.close(probe_fd)
    with _held_lock:
        if _held_shared.get(identity, 0) > 0:
            raise VaultInUse(f"vault {name!r} is open in this process: rotation needs the only handle (close it)")
    gate_wait = OPEN_WAIT_SECONDS if wait is None else wait
    gate = _open_gate(vault_dir, create=True)
    try:
        if gate is not None and not _poll(gate, fcntl.LOCK_EX, time.monotonic() + gate_wait):
            raise _in_progress(vault_dir, gate_wait)
        drain_seconds = DRAIN_SECONDS if drain is None else drain
        locked = _lock_directory(vault_dir, fcntl.LOCK_EX, time.monotonic() + drain_seconds)
        if locked is None:
            raise VaultInUse(
                f"vault {name!r} is open elsewhere and was not closed within {drain_seconds:g}s: rotation needs "
                "the only handle (a long-lived serve-mcp or daemon holds it until stopped): stop that process"
            )
    except BaseException:
        if gate is not None:
            os.close(gate)
        raise
    fd, identity = locked
    return VaultLock(vault_dir, exclusive=True, _directory_fd=fd, _identity=identity, _gate_fd=gate)


def _in_progress(vault_dir: Path, seconds: float) -> RotationInProgress:
    return RotationInProgress(
        f"vault {vault_dir.name!r}: rotation in progress (waited {seconds:g}s for it to finish); try again"
    )
