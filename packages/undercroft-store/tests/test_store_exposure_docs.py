"""docs/security.md's exposure table is the inventory (`undercroft_store.integrity.exposure`), row for row."""

from __future__ import annotations

from pathlib import Path

from undercroft_store.integrity.exposure import markdown_table

DOC = Path(__file__).resolve().parents[3] / "docs" / "security.md"
START, END = "<!-- exposure-inventory:start -->\n", "<!-- exposure-inventory:end -->"


def test_the_security_page_carries_the_inventory_verbatim() -> None:
    text = DOC.read_text(encoding="utf-8")
    assert text.count(START) == 1 and text.count(END) == 1
    block = text[text.index(START) + len(START) : text.index(END)]
    assert block == markdown_table(), (
        "docs/security.md's exposure table differs from the inventory: "
        "regenerate it with `python -m undercroft_store.integrity.exposure`"
    )


def test_the_check_would_see_a_row_dropped_from_the_page() -> None:
    text = DOC.read_text(encoding="utf-8")
    block = text[text.index(START) + len(START) : text.index(END)]
    edited = "".join(line for line in block.splitlines(keepends=True) if "`drawers` | `id`" not in line)
    assert edited != block and edited != markdown_table()
