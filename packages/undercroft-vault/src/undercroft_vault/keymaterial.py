"""`SecretBytes`: key material in a mutable buffer that is wiped when released.

What Python can and cannot guarantee, stated plainly (see docs/vault.md): the buffer this class owns is
overwritten with zeros by `wipe()`, on leaving a ``with`` block, and on garbage collection. It cannot reach
copies it does not own: the `bytes` that libsodium's binding and `hashlib`/`hmac` require for each call,
the key schedules OpenSSL keeps internally, pages the OS swapped out, or bytes an Argon2/HKDF call
returned before they were copied in. Those are immutable objects freed (not wiped) by the allocator. The
threat model puts an attacker who reads process memory while a vault is unlocked out of scope; the wipe
shortens how long key bytes linger, it does not make them unreadable.
"""

from __future__ import annotations

import hmac
from types import TracebackType

from undercroft_vault.errors import InvalidVaultInput

__all__ = ["SecretBytes"]


class SecretBytes:
    """A fixed-length secret held in a `bytearray`, never shown by `repr`, wiped on release."""

    __slots__ = ("_buffer", "_wiped")

    def __init__(self, material: bytes | bytearray, *, expected_length: int | None = None) -> None:
        """Copy `material` into an owned buffer; refuse it if `expected_length` is given and differs."""
        if expected_length is not None and len(material) != expected_length:
            raise InvalidVaultInput(f"key material must be {expected_length} bytes, got {len(material)}")
        self._buffer = bytearray(material)
        self._wiped = False

    def __len__(self) -> int:
        """The length of the secret in bytes."""
        return len(self._buffer)

    def __repr__(self) -> str:
        """Never the bytes: only the length and whether it was wiped."""
        state = "wiped" if self._wiped else f"{len(self._buffer)} bytes"
        return f"SecretBytes(<{state}>)"

    def __eq__(self, other: object) -> bool:
        """Constant-time equality with another `SecretBytes`."""
        if not isinstance(other, SecretBytes):
            return NotImplemented
        return hmac.compare_digest(self._buffer, other._buffer)

    __hash__ = None  # type: ignore[assignment]  # mutable secret: unhashable on purpose

    @property
    def wiped(self) -> bool:
        """True once `wipe()` ran; the secret can no longer be used."""
        return self._wiped

    def reveal(self) -> bytes:
        """An immutable copy for a library call that requires `bytes` (a copy Python cannot wipe)."""
        self._check()
        return bytes(self._buffer)

    def buffer(self) -> bytearray:
        """The owned buffer itself, for calls that accept a bytes-like key without copying."""
        self._check()
        return self._buffer

    def wipe(self) -> None:
        """Overwrite the owned buffer with zeros; idempotent."""
        for index in range(len(self._buffer)):
            self._buffer[index] = 0
        self._wiped = True

    def __enter__(self) -> SecretBytes:
        """Use as a context manager: the secret is wiped on exit."""
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        """Wipe on leaving the ``with`` block, whatever happened inside it."""
        self.wipe()

    def __del__(self) -> None:
        """Wipe when garbage-collected (best effort: CPython runs this promptly on the last reference)."""
        buffer = getattr(self, "_buffer", None)
        if buffer is not None:
            buffer[:] = bytes(len(buffer))

    def _check(self) -> None:
        if self._wiped:
            raise InvalidVaultInput("this key material was wiped and can no longer be used")
