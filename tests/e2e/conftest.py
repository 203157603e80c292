"""Fixtures of the end-to-end suites: ``browser``, one of Debian's headless Chromium per test (tests/browser.py)."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest


@pytest.fixture
def browser() -> Iterator[Any]:
    """A launched headless Chromium (skips, or fails under CI, when playwright or chromium is missing)."""
    from browser import launched

    with launched() as running:
        yield running
