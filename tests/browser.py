"""Debian's headless Chromium for the browser suites (the console, the fleet console, the monitor), driven by
Playwright with ``executable_path`` — no browser download, ever.

`playwright_or_skip` is called at a test module's top: it returns ``playwright.sync_api``, or skips the module
when playwright or ``/usr/bin/chromium`` is missing — except under CI (``CI`` set, as ``.ci/run`` sets it),
which installs both, where their absence FAILS the module instead of skipping it. The ``browser`` fixture
(tests/e2e/conftest.py) launches one Chromium per test through `launched`.
"""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

__all__ = ["CHROMIUM", "launched", "playwright_or_skip"]

CHROMIUM = Path("/usr/bin/chromium")


def playwright_or_skip() -> Any:
    """``playwright.sync_api`` with Debian's chromium present; otherwise a module skip (a failure under CI)."""
    missing = None
    if importlib.util.find_spec("playwright") is None:
        missing = "playwright (dev group) is not installed"
    elif not CHROMIUM.exists():
        missing = "Debian's chromium is not installed (apt-get install chromium)"
    if missing is not None:
        if os.environ.get("CI"):
            pytest.fail(f"{missing}: .ci/run installs it, so under CI this is a failure", pytrace=False)
        pytest.skip(missing, allow_module_level=True)
    import playwright.sync_api

    return playwright.sync_api


@contextmanager
def launched() -> Iterator[Any]:
    """One headless Chromium (``--no-sandbox``: the CI box runs as root), closed on exit."""
    api = playwright_or_skip()
    with api.sync_playwright() as driver:
        browser = driver.chromium.launch(executable_path=str(CHROMIUM), args=["--no-sandbox"], headless=True)
        try:
            yield browser
        finally:
            browser.close()
