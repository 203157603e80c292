"""The store's internal architecture, enforced: every top-level part is in a layer, the docs draw the
contract's layers, and the store has no import cycle (grimp over every import, TYPE_CHECKING ones included).

The import-linter contract ``store-layers`` (root pyproject.toml) keeps the direction; these tests keep the
contract complete (a new top-level module must be placed) and prove the cycle check is not vacuous.
"""

from __future__ import annotations

import re
import sys
import textwrap
from pathlib import Path

import grimp
import pytest

sys.path.insert(0, str(Path(__file__).parent))
from workspace import ROOT, root_config

STORE = ROOT / "packages" / "undercroft-store" / "src" / "undercroft_store"


def _store_contract() -> dict:
    contracts = root_config()["tool"]["importlinter"]["contracts"]
    [contract] = [c for c in contracts if c["id"] == "store-layers"]
    return contract


def _layer_members(contract: dict) -> set[str]:
    return {part.strip() for layer in contract["layers"] for part in re.split(r"[|:]", layer)}


def _cycles(package: str) -> list[list[str]]:
    """Every strongly connected set of more than one module (Tarjan), over direct imports of any kind."""
    graph = grimp.build_graph(package, exclude_type_checking_imports=False, cache_dir=None)
    modules = sorted(graph.modules)
    edges = {m: sorted(set(graph.find_modules_directly_imported_by(m)) & set(modules)) for m in modules}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        on_stack.add(node)
        for nxt in edges[node]:
            if nxt not in index:
                visit(nxt)
                low[node] = min(low[node], low[nxt])
            elif nxt in on_stack:
                low[node] = min(low[node], index[nxt])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                on_stack.discard(top)
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for module in modules:
        if module not in index:
            visit(module)
    return found


def test_the_store_has_no_import_cycle() -> None:
    assert _cycles("undercroft_store") == []


def test_the_cycle_check_finds_a_planted_cycle(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    package = tmp_path / "planted_cycle"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("from planted_cycle import b\n")
    (package / "b.py").write_text(
        textwrap.dedent(
            """
            from typing import TYPE_CHECKING

            if TYPE_CHECKING:  # a typing-only import closes a cycle too
                from planted_cycle import a
            """
        )
    )
    (package / "c.py").write_text("from planted_cycle import a\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert _cycles("planted_cycle") == [["planted_cycle.a", "planted_cycle.b"]]


def test_every_top_level_part_of_the_store_is_in_a_layer() -> None:
    present = {p.stem for p in STORE.glob("*.py") if p.stem != "__init__"}
    present |= {p.name for p in STORE.iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert present == _layer_members(_store_contract())


def test_the_docs_draw_the_contracts_layers() -> None:
    text = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
    match = re.search(r"<!-- store-layers -->\n```text\n(.*?)```", text, re.S)
    assert match, "docs/architecture.md has no store-layers diagram"
    drawn = [line.split("#")[0].strip() for line in match.group(1).splitlines() if line.split("#")[0].strip()]
    assert drawn == [layer.strip() for layer in _store_contract()["layers"]]
