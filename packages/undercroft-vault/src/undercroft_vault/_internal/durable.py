"""Durable file writes: temp file in the same directory, fsync, atomic rename, directory fsync."""

from __future__ import annotations

import os
from pathlib import Path

__all__ = ["fsync_directory", "write_durably", "write_new_file"]


def fsync_directory(directory: Path) -> None:
    """fsync a directory so a rename or creation inside it survives a power cut."""
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def write_new_file(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Create `path` exclusively with `mode` (never widening an existing file), fsync file and directory."""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(fd, mode)  # the umask may have narrowed or widened what O_CREAT asked for
        view = memoryview(data)
        while view:
            written = os.write(fd, view)
            view = view[written:]
        os.fsync(fd)
    finally:
        os.close(fd)
    fsync_directory(path.parent)


def write_durably(path: Path, data: bytes, mode: int = 0o600) -> None:
    """Replace `path` atomically: a reader sees the old bytes or the new ones, never a torn file."""
    temp = path.with_name(f".{path.name}.tmp-{os.getpid()}")
    if temp.exists():
        temp.unlink()
    write_new_file(temp, data, mode)
    os.replace(temp, path)
    fsync_directory(path.parent)
