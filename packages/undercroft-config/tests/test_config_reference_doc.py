"""docs/configuration.md is the registry rendered: regenerate it when a declaration changes.

The exact page, capabilities included, is checked by the CLI's tests (only the CLI knows its build);
here, the registry's part of the page must be in step.
"""

from __future__ import annotations

from pathlib import Path

import undercroft_config as config
from undercroft_config.reference import render_capabilities, render_tables

DOC = Path(__file__).resolve().parents[3] / "docs" / "configuration.md"


def test_the_committed_reference_is_in_step_with_the_registry() -> None:
    assert DOC.read_text(encoding="utf-8").startswith(render_tables()), (
        "docs/configuration.md is stale: python -m undercroft_cli._internal.reference > docs/configuration.md"
    )


def test_every_variable_appears_once() -> None:
    text = render_tables()
    for name in config.REGISTRY:
        assert text.count(f"| `{name}` |") == 1, name


def test_every_capability_is_selected_by_some_declaration() -> None:
    section = render_capabilities(config.Build.of([]))
    for capability in config.Capability:
        [row] = [line for line in section.splitlines() if line.startswith(f"| `{capability.value}` |")]
        assert "`UNDERCROFT_" in row and row.endswith("| no |"), row
