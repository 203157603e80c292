"""Render docs/configuration.md for this build.

Run ``python -m undercroft_cli._internal.reference > docs/configuration.md``. The page is the registry's
tables plus which capabilities this program ships, and only the composition root knows the latter, so the
page is rendered here with `BUILD`; a test keeps the committed page in step.
"""

from __future__ import annotations

import sys

from undercroft_config.reference import render_markdown

from undercroft_cli._internal.composition import BUILD

__all__ = ["page"]


def page() -> str:
    """The configuration reference for this build."""
    return render_markdown(BUILD)


if __name__ == "__main__":
    sys.stdout.write(page())
