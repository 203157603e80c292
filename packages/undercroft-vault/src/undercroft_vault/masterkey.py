"""The master key: a 32-byte `master.key` file, or Argon2id over a passphrase and a stored `kdf.salt`.

The key files are unauthenticated, so they never decide which key sealed a vault (the manifest MAC does);
they only decide how the declared key source is read. A declaration the files contradict is refused here,
before anything is derived, naming both readings. A key file another user could read or write (any group or
others bit set, e.g. 0640, 0604, 0644) is refused the way ssh refuses a loose private key, before its bytes
are used; the message names the file, its mode and the fix (``chmod 600 <path>``). Key material is only ever
created in a home narrowed to 0700 first (`narrow_home`), whoever created the directory.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from argon2.low_level import Type, hash_secret_raw

from undercroft_vault._internal.durable import write_new_file
from undercroft_vault.errors import InvalidVaultInput, KeyDeclarationRefused
from undercroft_vault.keymaterial import SecretBytes

__all__ = [
    "ARGON2_MEMORY_KIB",
    "ARGON2_PARALLELISM",
    "ARGON2_TIME_COST",
    "KDF_SALT_FILE",
    "KDF_SALT_LENGTH",
    "MASTER_KEY_FILE",
    "MASTER_KEY_LENGTH",
    "MasterKey",
    "derive_passphrase_key",
    "narrow_home",
    "open_master_key",
]

MASTER_KEY_FILE = "master.key"
KDF_SALT_FILE = "kdf.salt"
MASTER_KEY_LENGTH = 32
KDF_SALT_LENGTH = 16
#: Argon2id cost: 64 MiB of memory, three passes, one lane (the documented parameters).
ARGON2_MEMORY_KIB = 64 * 1024
ARGON2_TIME_COST = 3
ARGON2_PARALLELISM = 1

KeySource = Literal["file", "passphrase"]


@dataclass(frozen=True)
class MasterKey:
    """The palace master key and how it was obtained. Call `wipe()` (or use ``with``) when done."""

    secret: SecretBytes
    source: KeySource
    created: bool

    def wipe(self) -> None:
        """Zero the key buffer."""
        self.secret.wipe()

    def __enter__(self) -> MasterKey:
        """Use as a context manager: the key is wiped on exit."""
        return self

    def __exit__(self, *_exc: object) -> None:
        """Wipe on leaving the ``with`` block."""
        self.wipe()


def derive_passphrase_key(passphrase: str, salt: bytes) -> SecretBytes:
    """Argon2id(passphrase, salt) at 64 MiB, t=3, p=1 → 32 bytes. Costs ~0.3 s: derive once per process."""
    if passphrase == "":
        raise KeyDeclarationRefused("the declared passphrase is empty; an empty passphrase is refused")
    if len(salt) != KDF_SALT_LENGTH:
        raise InvalidVaultInput(f"kdf salt must be {KDF_SALT_LENGTH} bytes, got {len(salt)}")
    raw = hash_secret_raw(
        passphrase.encode("utf-8"),
        salt,
        time_cost=ARGON2_TIME_COST,
        memory_cost=ARGON2_MEMORY_KIB,
        parallelism=ARGON2_PARALLELISM,
        hash_len=MASTER_KEY_LENGTH,
        type=Type.ID,
    )
    return SecretBytes(raw, expected_length=MASTER_KEY_LENGTH)


def open_master_key(
    home: Path,
    *,
    passphrase: str | None,
    vaults_exist: bool,
    may_create: bool,
    random_bytes: Callable[[int], bytes] = os.urandom,
) -> MasterKey:
    """Load, or create in a fresh installation, the master key under the palace `home` directory.

    `passphrase` is the declared key source (None: the `master.key` file). `vaults_exist` states whether
    the installation already holds vaults (key material is created only where nothing refers to it yet);
    `may_create` is False for read-only opens. Contradictions raise `KeyDeclarationRefused` before any
    derivation: a passphrase over `master.key` without `kdf.salt`, the reverse, both files at once, key
    material missing under existing vaults, an empty passphrase.
    """
    if passphrase is not None and passphrase == "":
        raise KeyDeclarationRefused(
            f"the declared passphrase is empty: declare a non-empty passphrase, or unset it to use {MASTER_KEY_FILE}"
        )
    key_path = home / MASTER_KEY_FILE
    salt_path = home / KDF_SALT_FILE
    has_key, has_salt = key_path.exists(), salt_path.exists()
    if has_key and has_salt:
        raise KeyDeclarationRefused(
            f"{home} holds both {MASTER_KEY_FILE} (a key-file installation) and {KDF_SALT_FILE} "
            "(a passphrase installation); refusing to guess which key sealed its vaults"
        )
    if passphrase is not None and has_key:
        raise KeyDeclarationRefused(
            f"a passphrase is declared (passphrase-derived key), but {home} holds {MASTER_KEY_FILE} "
            f"and no {KDF_SALT_FILE} (a key-file installation); nothing was derived"
        )
    if passphrase is None and has_salt:
        raise KeyDeclarationRefused(
            f"no passphrase is declared (key-file reading), but {home} holds {KDF_SALT_FILE} and no "
            f"{MASTER_KEY_FILE} (a passphrase installation); declare the passphrase"
        )
    if has_key:
        return MasterKey(_read_key_file(key_path), "file", created=False)
    if has_salt and passphrase is not None:
        salt = _read_exact(salt_path, KDF_SALT_LENGTH, KDF_SALT_FILE)
        return MasterKey(derive_passphrase_key(passphrase, salt), "passphrase", created=False)
    if vaults_exist:
        raise KeyDeclarationRefused(
            f"{home} holds existing vaults but neither {MASTER_KEY_FILE} nor {KDF_SALT_FILE}: the key "
            "material is missing, and a new key would open none of them"
        )
    if not may_create:
        raise KeyDeclarationRefused(f"{home} holds no key material and this open may not create it (read-only)")
    return _create(home, passphrase, random_bytes)


def narrow_home(home: Path) -> int | None:
    """Create `home` 0700, or strip group and others bits from an existing one.

    ``mkdir(mode=0o700, exist_ok=True)`` leaves a pre-existing 0755 directory as it was, so a home made by
    hand (or by an installer under umask 022) would hold the key in a directory every user can list. Callers
    narrow only a home that holds no vault yet: a home with vaults is the operator's, and is left alone.
    Returns the mode it replaced, or None when nothing changed (created here, or already owner-only).
    """
    home.mkdir(mode=0o700, parents=True, exist_ok=True)
    mode = stat.S_IMODE(home.stat().st_mode)
    if not mode & 0o077:
        return None
    try:
        home.chmod(mode & 0o700)  # narrow only: the owner's own bits are left as they are
    except OSError as error:
        raise KeyDeclarationRefused(
            f"{home} has mode {mode:04o} and could not be narrowed to owner-only ({error.strerror}); no key material "
            f"was written: fix it with: chmod 700 {home}"
        ) from None
    return mode


def _create(home: Path, passphrase: str | None, random_bytes: Callable[[int], bytes]) -> MasterKey:
    narrow_home(home)  # before the first byte of key material lands in it
    if passphrase is None:
        material = random_bytes(MASTER_KEY_LENGTH)
        secret = SecretBytes(material, expected_length=MASTER_KEY_LENGTH)
        try:
            write_new_file(home / MASTER_KEY_FILE, secret.reveal())
        except FileExistsError:
            # another process created it between our check and our create: read theirs, once.
            secret.wipe()
            return MasterKey(_read_key_file(home / MASTER_KEY_FILE), "file", created=False)
        return MasterKey(secret, "file", created=True)
    salt = random_bytes(KDF_SALT_LENGTH)
    if len(salt) != KDF_SALT_LENGTH:
        raise InvalidVaultInput(f"random source returned {len(salt)} bytes, wanted {KDF_SALT_LENGTH}")
    created = True
    try:
        write_new_file(home / KDF_SALT_FILE, salt)
    except FileExistsError:
        salt = _read_exact(home / KDF_SALT_FILE, KDF_SALT_LENGTH, KDF_SALT_FILE)
        created = False
    return MasterKey(derive_passphrase_key(passphrase, salt), "passphrase", created=created)


def _read_key_file(path: Path) -> SecretBytes:
    raw = bytearray(_read_exact(path, MASTER_KEY_LENGTH, MASTER_KEY_FILE))
    try:
        return SecretBytes(raw)
    finally:
        raw[:] = bytes(len(raw))


def _read_exact(path: Path, length: int, label: str) -> bytes:
    # One descriptor for the mode check and the read, so the file checked is the file read.
    fd = os.open(path, os.O_RDONLY)
    try:
        status = os.fstat(fd)
        _refuse_loose(path, label, status.st_mode)
        if status.st_size != length:
            raise KeyDeclarationRefused(f"{label} at {path} is {status.st_size} bytes; expected exactly {length}")
        data = os.read(fd, length + 1)
    finally:
        os.close(fd)
    if len(data) != length:  # it changed size between fstat and read
        raise KeyDeclarationRefused(f"{label} at {path} is {len(data)} bytes; expected exactly {length}")
    return data


_LOOSE_BITS = ((stat.S_IRGRP, "group can read"), (stat.S_IWGRP, "group can write"),
               (stat.S_IXGRP, "group can execute"), (stat.S_IROTH, "others can read"),
               (stat.S_IWOTH, "others can write"), (stat.S_IXOTH, "others can execute"))  # fmt: skip


def _refuse_loose(path: Path, label: str, st_mode: int) -> None:
    """ssh's rule for a private key: no permission bit for group or others, whatever the owner bits are."""
    if os.name != "posix":  # mode bits carry no access control elsewhere
        return
    mode = stat.S_IMODE(st_mode)
    loose = [words for bit, words in _LOOSE_BITS if mode & bit]
    if loose:
        raise KeyDeclarationRefused(
            f"{label} at {path} has mode {mode:04o} ({', '.join(loose)}): key material other users can read "
            f"or replace is refused and nothing was derived; fix it with: chmod 600 {path}"
        )
