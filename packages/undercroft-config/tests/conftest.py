"""Shared fixtures: a synthetic PEM certificate file (no crypto library, no system file)."""

from __future__ import annotations

import base64
import textwrap
from pathlib import Path

import pytest


def make_pem_certificate(seed: int = 1) -> str:
    """A PEM block whose body is DER-shaped (a SEQUENCE header and enough bytes)."""
    der = bytes([0x30, 0x82, 0x01, 0x00]) + bytes((seed * 7 + i) % 256 for i in range(256))
    body = "\n".join(textwrap.wrap(base64.b64encode(der).decode("ascii"), 64))
    return f"-----BEGIN CERTIFICATE-----\n{body}\n-----END CERTIFICATE-----\n"


@pytest.fixture
def ca_file(tmp_path: Path) -> Path:
    path = tmp_path / "root.crt"
    path.write_text(make_pem_certificate(1) + make_pem_certificate(2))
    return path


@pytest.fixture
def one_certificate() -> str:
    return make_pem_certificate(3)
