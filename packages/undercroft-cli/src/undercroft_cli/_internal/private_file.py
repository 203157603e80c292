"""Files the CLI writes for the operator (--out): 0600, never through a symlink, reserved before the work.

Exports hold decrypted memory, identities hold secret keys, and receipts and witnesses name what a vault
did. Only a new path or an existing regular file is accepted: a symlink, FIFO, device, socket or directory
is refused before anything is opened, because writing there either redirects the bytes or (as root) would
change the mode of a file the CLI never created — ``export --out /dev/null`` must not chmod /dev/null.
The bytes always go to a file this object creates (``O_EXCL``, 0600): a new path directly, an existing
regular file through a fresh 0600 sibling renamed over it on ``write``, so the mode of the operator's old
file is never touched and a run that fails leaves it as it was. A command that destroys something before
it can print its receipt reserves the file FIRST: a bad --out must refuse the run while nothing has
happened yet, never after the drawers are gone and the receipt with them.
"""

from __future__ import annotations

import os
import secrets
import stat
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from types import TracebackType

import click

__all__ = ["PrivateOutput", "reserve_output", "write_private"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)

_KINDS = (
    (stat.S_ISLNK, "is a symlink; refusing to write through it"),
    (stat.S_ISDIR, "is a directory"),
    (stat.S_ISFIFO, "is a FIFO, not a regular file; refusing to write to it"),
    (stat.S_ISCHR, "is a device, not a regular file; refusing to write to it"),
    (stat.S_ISBLK, "is a device, not a regular file; refusing to write to it"),
    (stat.S_ISSOCK, "is a socket, not a regular file; refusing to write to it"),
)


class PrivateOutput:
    """A reserved, 0600, not-yet-written output file; ``write`` fills it, leaving the block unwritten removes it.

    The file this object opens is always one it created: the path itself when it was new, otherwise a
    hidden sibling that ``write`` renames over the existing regular file. An exception inside the ``with``
    block (or leaving it without a ``write``) deletes what was created; a pre-existing file is untouched.
    """

    def __init__(self, path: Path, *, overwrite: bool = True, option: str = "--out") -> None:
        """Reserve ``path`` now (refusing anything but a new path or a regular file, and an existing file
        unless ``overwrite``)."""
        self.path = path
        self._option = option
        self._replaces = False
        self._created: Path | None = None
        self._descriptor: int | None = None
        existing = self._existing_kind(path)
        if existing and not overwrite:
            raise self._refuse("already exists; refusing to overwrite a key")
        target = path
        if existing:
            # Never reopen the operator's file: write a sibling we own and rename it over the old one.
            target = path.with_name(f".{path.name}.{secrets.token_hex(6)}.tmp")
            self._replaces = True
        try:
            self._descriptor = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
        except FileExistsError:
            # Created (or planted) between the check and the open: look again rather than follow it.
            self._existing_kind(path)
            raise self._refuse("appeared while it was being reserved; run again") from None
        except OSError as error:
            raise self._refuse(f"cannot be written: {error.strerror or error}") from None
        self._created = target
        os.fchmod(self._descriptor, 0o600)  # ours: the umask may have narrowed what O_CREAT asked for

    def _existing_kind(self, path: Path) -> bool:
        """True for an existing regular file, False for a new path; anything else is refused."""
        try:
            mode = os.lstat(path).st_mode
        except FileNotFoundError:
            return False
        except OSError as error:
            raise self._refuse(f"cannot be written: {error.strerror or error}") from None
        for test, reason in _KINDS:
            if test(mode):
                raise self._refuse(reason)
        if not stat.S_ISREG(mode):
            raise self._refuse("is not a regular file; refusing to write to it")
        return True

    def _refuse(self, reason: str) -> click.BadParameter:
        return click.BadParameter(f"{self.path}: {reason}", param_hint=self._option)

    def write(self, data: bytes) -> None:
        """Fill the reserved file with ``data``, close it and (for an existing path) rename it into place."""
        self.stage(data)
        self.commit()

    def stage(self, data: bytes) -> None:
        """Write ``data`` into the reserved file and fsync it, without handing it over yet.

        Until :meth:`commit`, leaving the block removes the file again: an export stages its bytes, appends
        its egress record, then commits, so a write that fails records nothing and a record that fails
        leaves no file.
        """
        descriptor = self._take()
        with os.fdopen(descriptor, "wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())

    def commit(self) -> None:
        """Hand the staged file over: rename it over an existing path; it is the operator's file now."""
        if self._descriptor is not None:
            raise ValueError(f"{self.path}: nothing staged")
        if self._created is None:
            raise ValueError(f"{self.path}: already committed or discarded")
        if self._replaces:
            os.replace(self._created, self.path)  # replaces the directory entry; never follows a link
        self._created = None

    def _take(self) -> int:
        if self._descriptor is None:
            raise ValueError(f"{self.path}: already written or discarded")
        descriptor, self._descriptor = self._descriptor, None
        return descriptor

    def discard(self) -> None:
        """Close without writing; the file this object created is removed."""
        if self._descriptor is not None:
            os.close(self._take())
        if self._created is not None:
            created, self._created = self._created, None
            created.unlink(missing_ok=True)

    def __enter__(self) -> PrivateOutput:
        """Use as a context manager."""
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Discard whatever was not written."""
        self.discard()


def write_private(path: Path, data: bytes, *, overwrite: bool = True) -> None:
    """Write ``data`` to ``path`` as 0600, never through a symlink nor to a FIFO or device."""
    with PrivateOutput(path, overwrite=overwrite) as output:
        output.write(data)


@contextmanager
def reserve_output(path: Path | None) -> Iterator[PrivateOutput | None]:
    """The 0600, symlink-refusing ``--out`` file reserved now (None without ``--out``); removed if unwritten."""
    if path is None:
        yield None
        return
    with PrivateOutput(path) as output:
        yield output
