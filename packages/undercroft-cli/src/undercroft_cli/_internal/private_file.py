"""Files the CLI writes for the operator (--out): 0600, never through a symlink, reserved before the work.

Exports hold decrypted memory, identities hold secret keys, and receipts and witnesses name what a vault
did. Each is created 0600 (an existing file is narrowed to 0600 too: O_TRUNC keeps the old mode) and a
final-component symlink is refused, so a planted link cannot redirect the bytes. A command that destroys
something before it can print its receipt reserves the file FIRST: a bad --out must refuse the run while
nothing has happened yet, never after the drawers are gone and the receipt with them.
"""

from __future__ import annotations

import errno
import os
from pathlib import Path
from types import TracebackType

import click

__all__ = ["PrivateOutput", "write_private"]

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


class PrivateOutput:
    """An opened, 0600, not-yet-written output file; ``write`` fills it, leaving the block unwritten removes it.

    When the file did not exist before, an exception inside the ``with`` block (or leaving it without a
    ``write``) deletes it again; a pre-existing file is left untouched until ``write`` truncates it.
    """

    def __init__(self, path: Path, *, overwrite: bool = True, option: str = "--out") -> None:
        """Open ``path`` for writing now (refusing a symlink, and an existing file unless ``overwrite``)."""
        self.path = path
        self._created = False
        self._descriptor: int | None = None
        try:
            self._descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW, 0o600)
            self._created = True
        except FileExistsError:
            if not overwrite:
                raise click.BadParameter(
                    f"{path}: already exists; refusing to overwrite a key", param_hint=option
                ) from None
            self._descriptor = self._open_existing(path, option)
        except OSError as error:
            raise click.BadParameter(
                f"{path}: cannot be written: {error.strerror or error}", param_hint=option
            ) from None
        os.fchmod(self._descriptor, 0o600)

    @staticmethod
    def _open_existing(path: Path, option: str) -> int:
        try:
            return os.open(path, os.O_WRONLY | _NOFOLLOW)
        except OSError as error:
            if error.errno == errno.ELOOP:
                raise click.BadParameter(
                    f"{path}: is a symlink; refusing to write through it", param_hint=option
                ) from None
            raise click.BadParameter(
                f"{path}: cannot be written: {error.strerror or error}", param_hint=option
            ) from None

    def write(self, data: bytes) -> None:
        """Replace the file's bytes with ``data`` and close it."""
        descriptor = self._take()
        with os.fdopen(descriptor, "wb") as handle:
            handle.truncate(0)
            handle.write(data)
        self._created = False  # written: it is the operator's file now

    def _take(self) -> int:
        if self._descriptor is None:
            raise ValueError(f"{self.path}: already written or discarded")
        descriptor, self._descriptor = self._descriptor, None
        return descriptor

    def discard(self) -> None:
        """Close without writing; a file this object created is removed."""
        if self._descriptor is not None:
            os.close(self._take())
        if self._created:
            self._created = False
            self.path.unlink(missing_ok=True)

    def __enter__(self) -> PrivateOutput:
        """Use as a context manager."""
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        """Discard whatever was not written."""
        self.discard()


def write_private(path: Path, data: bytes, *, overwrite: bool = True) -> None:
    """Write ``data`` to ``path`` as 0600, never through a symlink (decrypted memory and secrets live here)."""
    with PrivateOutput(path, overwrite=overwrite) as output:
        output.write(data)
