"""Counting the certificates of a PEM file without a crypto library: headers, base64, a DER SEQUENCE."""

from __future__ import annotations

import binascii
import re
from pathlib import Path
from typing import Final

__all__ = ["MAX_PEM_BYTES", "count_certificates", "read_ca_pin"]

#: A trust-root bundle is small; anything larger is not what the declaration meant.
MAX_PEM_BYTES: Final = 1 << 20

_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----\s*\n(.*?)\n\s*-----END ([A-Z0-9 ]+)-----", re.DOTALL)


def count_certificates(text: str) -> int:
    """How many well-formed CERTIFICATE blocks `text` holds; raises ValueError for a malformed one."""
    count = 0
    for match in _BLOCK.finditer(text):
        label, body, end_label = match.group(1), match.group(2), match.group(3)
        if label != end_label:
            raise ValueError(f"a PEM block opens as {label!r} and closes as {end_label!r}")
        if label != "CERTIFICATE":
            continue  # a bundle may carry other blocks; only certificates pin anything
        compact = "".join(body.split())
        try:
            der = binascii.a2b_base64(compact.encode("ascii"), strict_mode=True)
        except (binascii.Error, UnicodeEncodeError):
            raise ValueError("a CERTIFICATE block's body is not valid base64") from None
        # Every X.509 certificate is a DER SEQUENCE (0x30) with room for its three fields.
        if len(der) < 64 or der[0] != 0x30:
            raise ValueError("a CERTIFICATE block does not hold a DER certificate")
        count += 1
    return count


def read_ca_pin(path: Path) -> int:
    """Read `path` as a PEM trust-root file; return its certificate count or raise ValueError saying why."""
    try:
        if not path.is_file():
            raise ValueError(f"{path} is not a readable file")
        size = path.stat().st_size
        if size > MAX_PEM_BYTES:
            raise ValueError(f"{path} is {size} bytes; a PEM trust-root file is at most {MAX_PEM_BYTES}")
        data = path.read_bytes()
    except OSError as error:
        raise ValueError(f"{path} cannot be read ({error.strerror})") from None
    try:
        text = data.decode("ascii")
    except UnicodeDecodeError:
        raise ValueError(f"{path} is not a PEM file (binary content; DER is not accepted)") from None
    count = count_certificates(text)
    if count == 0:
        raise ValueError(f"{path} holds no PEM CERTIFICATE block, so it would pin nothing")
    return count
