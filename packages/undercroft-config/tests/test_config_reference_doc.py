"""docs/configuration.md is the registry rendered: regenerate it when a declaration changes."""

from __future__ import annotations

from pathlib import Path

import undercroft_config as config
from undercroft_config.reference import render_markdown

DOC = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"


def test_the_committed_reference_is_in_step_with_the_registry() -> None:
    assert DOC.read_text(encoding="utf-8") == render_markdown(), (
        "docs/configuration.md is stale: python -m undercroft_config.reference > docs/configuration.md"
    )


def test_every_variable_appears_once() -> None:
    text = render_markdown()
    for name in config.REGISTRY:
        assert text.count(f"| `{name}` |") == 1, name
