"""Source-level inventory: every AAD domain kind and every tag-carrying table is named in the rotation path.

The source is read as CODE (its syntax tree): a comment or a docstring naming ``Domain.content(`` or
``FROM tombstones`` does not satisfy a check, and each check is shown to fail on a tree that lost what it
looks for (with the name left behind in a comment).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest
import undercroft_store.integrity.rotation as rotation
from undercroft_store.governance import quarantine
from undercroft_store.kernel import seams, snapshot_table
from undercroft_store.kernel.schema import TAGGED_TABLES
from undercroft_store.kernel.tier_tables import TIER_TABLES
from undercroft_store.memory.kg import rotation as kg_rotation
from undercroft_store.search.tiers import integrity as tier_integrity
from undercroft_store.search.tiers.integrity import drop_on_rotation
from undercroft_vault import DomainKind

SOURCE = Path(rotation.__file__).read_text(encoding="utf-8")

#: A domain that lives in a table is sealed again under the new keys by this call (receiver, method).
#: Domains of derived artifacts: dropped on rotation by their tables' registered hook, rebuilt, never re-sealed.
DERIVED = {DomainKind.PQ_ARTIFACT, DomainKind.SEARCH_SNAPSHOT, DomainKind.FDE_TOKENS, DomainKind.FDE_ARTIFACT}
#: Domains re-sealed by the reseal hook their table's feature registers (checked in that module's source).
HOOKED = {
    DomainKind.QUEUE_META: (quarantine, ("Domain", "queue_meta"), ("new", "seal")),
    DomainKind.SURFACE_META: (kg_rotation, ("meta_at_rest", "reseal_surface_meta")),
}
RESEAL_CALLS = {
    DomainKind.CONTENT: ("Domain", "content"),
    DomainKind.EMBEDDING: ("Domain", "embedding"),
    DomainKind.VAULT_SECRET: ("blind", "reseal"),
    DomainKind.DRAWER_META: ("meta_at_rest", "reseal_meta"),
    DomainKind.LABEL_NAMES: ("Domain", "label_names"),
}


def _docstrings(tree: ast.AST) -> set[int]:
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                found.add(id(first.value))
    return found


def _attributes(tree: ast.AST) -> set[tuple[str, str]]:
    """Every ``name.attr`` the code reads (comments and strings excluded by construction)."""
    return {
        (node.value.id, node.attr)
        for node in ast.walk(tree)
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name)
    }


def _calls(tree: ast.AST) -> set[tuple[str, str]]:
    return {
        (node.func.value.id, node.func.attr)
        for node in ast.walk(tree)
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name)
    }


def _code_strings(tree: ast.AST) -> list[str]:
    """String constants of the code (SQL included), docstrings excluded."""
    skip = _docstrings(tree)
    return [
        node.value
        for node in ast.walk(tree)
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in skip
    ]


def check_domains(tree: ast.AST, placed: Mapping[DomainKind, str | None]) -> None:
    assert set(placed) == set(DomainKind), "a domain kind is not placed in SEALED_DOMAINS"
    named = {attr for receiver, attr in _attributes(tree) if receiver == "DomainKind"}
    missing = {kind.name for kind in DomainKind} - named
    assert not missing, f"domain kinds the code never names: {sorted(missing)}"


def check_reseals(tree: ast.AST, placed: Mapping[DomainKind, str | None]) -> None:
    in_tables = {kind for kind, where in placed.items() if where is not None} - DERIVED - set(HOOKED)
    assert in_tables == set(RESEAL_CALLS), "a newly placed domain needs its re-seal named here and in rotation.py"
    for module, *hook_calls in HOOKED.values():
        found = _calls(ast.parse(Path(str(module.__file__)).read_text(encoding="utf-8")))
        assert all(call in found for call in hook_calls), f"{module.__name__} no longer re-seals its domain"
    calls = _calls(tree)
    missing = [call for call in RESEAL_CALLS.values() if call not in calls]
    assert not missing, f"re-seal calls the code never makes: {missing}"


def check_tables(tree: ast.AST, tables: Iterable[str]) -> None:
    strings = _code_strings(tree)
    for table in tables:
        pattern = re.compile(rf"\b(FROM|INTO|UPDATE)\s+\"?{table}\b")
        assert any(pattern.search(text) for text in strings), f"no SQL of the rotation path touches {table}"


TREE = ast.parse(SOURCE)


def test_every_domain_kind_is_placed_and_named() -> None:
    check_domains(TREE, rotation.SEALED_DOMAINS)


def test_every_placed_domain_is_resealed_in_the_source() -> None:
    check_reseals(TREE, rotation.SEALED_DOMAINS)


def test_every_tag_carrying_table_is_named() -> None:
    # A new tagged table fails here until it is re-keyed by the core path, has a hook, or is declared pending
    # (a pending table with rows refuses the rotation at run time).
    core = set(rotation.TAG_TABLES)
    assert set(TAGGED_TABLES) <= core | set(seams.resealers()) | set(rotation.PENDING_RESEALERS)
    assert core <= set(TAGGED_TABLES)
    # ... and touched by SQL in the rotation path itself, not only listed in the map.
    check_tables(TREE, rotation.TAG_TABLES)


def _without(source: str, needle: str, replacement: str) -> ast.AST:
    assert needle in source, needle
    return ast.parse(source.replace(needle, replacement) + f"\n# {needle}\n")


def test_the_checks_fail_on_a_tree_that_lost_what_they_look_for() -> None:
    """Each check, on a copy of rotation.py missing the thing, fails — with the name still in a comment."""
    with pytest.raises(AssertionError, match="domain kind is not placed"):
        check_domains(TREE, {k: v for k, v in rotation.SEALED_DOMAINS.items() if k is not DomainKind.KG_NAME})
    with pytest.raises(AssertionError, match="KG_NAME"):
        check_domains(_without(SOURCE, "DomainKind.KG_NAME: None,", ""), rotation.SEALED_DOMAINS)
    with pytest.raises(AssertionError, match="'Domain', 'embedding'"):
        check_reseals(_without(SOURCE, "Domain.embedding(", "Domain.content("), rotation.SEALED_DOMAINS)
    with pytest.raises(AssertionError, match="touches tombstones"):
        tree = _without(SOURCE, "FROM tombstones", "FROM sqlite_master")
        check_tables(tree, ["tombstones"])
    # ... and a docstring naming the SQL does not count either.
    docstring_only = ast.parse('"""SELECT count(*) FROM tombstones"""\n')
    with pytest.raises(AssertionError, match="touches tombstones"):
        check_tables(docstring_only, ["tombstones"])


def test_every_registered_hook_is_callable() -> None:
    registered = seams.resealers()
    assert registered, "the composition root (undercroft_store.wiring) registered no resealer"
    for table, hook in registered.items():
        assert callable(hook), table


def test_derived_domains_are_dropped_by_a_registered_hook(monkeypatch: pytest.MonkeyPatch) -> None:
    # A derived artifact (the candidate tier) is never re-sealed: its tables' hook drops the rows inside the
    # rotation's transaction and the tier rebuilds under the new keys. The registered hook is a forwarder (the
    # search package loads at its first call, `undercroft_store.wiring`): it runs the tier's own drop.
    calls: list[object] = []
    monkeypatch.setattr(tier_integrity, "drop_on_rotation", lambda rekeying: calls.append(rekeying) or [])
    for table in TIER_TABLES:
        assert seams.resealers()[table]("rekeying") == [], table  # type: ignore[arg-type]
    assert calls == ["rekeying"] * len(TIER_TABLES)
    monkeypatch.undo()
    assert tier_integrity.drop_on_rotation is drop_on_rotation
    # ... and so is the search snapshot (issue 19): emptied in the rotation's transaction, rebuilt at the next open.
    assert seams.resealers()[snapshot_table.SNAPSHOT_TABLE] is snapshot_table.drop_on_rotation
