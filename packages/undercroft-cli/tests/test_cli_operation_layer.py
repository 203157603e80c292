"""The CLI stands on the operation layer: every command that shares its capability with MCP or /v1 goes through
``undercroft_cli.operations``, or is named in ``OPERATION_BYPASSES`` with why it does not yet (a list that can only
shrink).

"Same capability" is the parity table's row (``undercroft_cli.parity.PARITY``): a CLI command shares its
capability when its row names at least one MCP tool or one /v1 route (a row whose other surfaces are both
stated absences — ``retention clear``, ``index push`` — has nothing to share). "Goes through" is read from the
source with ``ast``: the command's callback, or a function of its own module the callback reaches (called or
passed on, transitively), *calls* something imported from ``undercroft_cli.operations`` — a schema constant in a
decorator does not count, an operation or a shared record does.
"""

from __future__ import annotations

import ast
import inspect
import sys
import textwrap
from collections.abc import Callable
from pathlib import Path
from typing import Any

import click
from undercroft_cli.main import cli
from undercroft_cli.parity import OPERATION_BYPASSES, PARITY

_LAYER = "undercroft_cli.operations"


def _commands() -> dict[str, click.Command]:
    context = click.Context(cli)
    found: dict[str, click.Command] = {}

    def walk(group: click.Group, prefix: str) -> None:
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            assert command is not None
            if isinstance(command, click.Group):
                walk(command, f"{prefix}{name} ")
            else:
                found[f"{prefix}{name}"] = command

    walk(cli, "")
    return found


def _shared() -> list[str]:
    """The CLI commands whose parity row names an MCP tool or a /v1 route."""
    return [
        command
        for row in PARITY
        if not isinstance(row.cli, str) and (not isinstance(row.mcp, str) or not isinstance(row.v1, str))
        for command in row.cli
    ]


def _bindings(tree: ast.Module) -> dict[str, str]:
    """Each name the module binds by an import, with the dotted name it stands for."""
    bound: dict[str, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    bound[alias.asname] = alias.name
                else:
                    head = alias.name.partition(".")[0]
                    bound[head] = head
    return bound


def _dotted(node: ast.expr) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = _dotted(node.value)
        return None if inner is None else f"{inner}.{node.attr}"
    return None


def operation_calls(source: str, function: str) -> set[str]:
    """The ``undercroft_cli.operations`` callables that ``function`` of module ``source`` calls, itself or through
    the module's own functions it reaches (by name: called, or passed on as a callback)."""
    tree = ast.parse(source)
    bound = _bindings(tree)
    functions = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    assert function in functions, f"{function} is not a top-level function of its module"
    reached: set[str] = set()
    seen: set[str] = set()
    pending = [function]
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        for node in ast.walk(functions[name]):
            if isinstance(node, ast.Name) and node.id in functions:
                pending.append(node.id)
            if isinstance(node, ast.Call) and (dotted := _dotted(node.func)) is not None:
                head, _, rest = dotted.partition(".")
                qualified = bound.get(head, head) + (f".{rest}" if rest else "")
                if qualified == _LAYER or qualified.startswith(f"{_LAYER}."):
                    reached.add(qualified)
    return reached


def _callback(command: click.Command) -> Callable[..., Any]:
    function = command.callback
    assert function is not None, command.name
    return inspect.unwrap(function)


def _bypasses() -> dict[str, set[str]]:
    """Every shared-capability command, with the operations it calls (empty: a bypass)."""
    commands = _commands()
    found: dict[str, set[str]] = {}
    for name in _shared():
        function = _callback(commands[name])
        source = Path(inspect.getsourcefile(sys.modules[function.__module__]) or "").read_text(encoding="utf-8")
        found[name] = operation_calls(source, function.__name__)
    return found


def test_no_command_bypasses_the_operation_layer_unless_listed() -> None:
    unlisted = sorted(name for name, calls in _bypasses().items() if not calls and name not in OPERATION_BYPASSES)
    assert not unlisted, (
        f"{unlisted} reach the store directly for a capability MCP or /v1 also carries: call the shared "
        "operation in undercroft_cli/operations/ (or name it in parity.OPERATION_BYPASSES, with why)"
    )


def test_the_bypass_list_only_shrinks() -> None:
    found = _bypasses()
    stale = sorted(name for name in OPERATION_BYPASSES if name not in found)
    assert not stale, f"{stale} are not CLI commands of a shared capability: drop them from OPERATION_BYPASSES"
    mended = sorted(name for name in OPERATION_BYPASSES if found[name])
    assert not mended, f"{mended} now go through the operation layer: drop them from OPERATION_BYPASSES"


def test_every_listed_bypass_says_why() -> None:
    for name, reason in OPERATION_BYPASSES.items():
        assert len(reason.strip()) > 20, name


def test_the_commands_that_share_an_operation_are_seen_doing_so() -> None:
    # The detector against commands known to stand on the layer (operation functions and shared records alike).
    found = _bypasses()
    assert found["drawer update"] == {f"{_LAYER}.drawers.update_drawer"}
    assert f"{_LAYER}.history.history_page" in found["history"]
    assert f"{_LAYER}.entities.entity_records" in found["kg entities"]
    assert f"{_LAYER}.refine.refine" in found["refine"]
    assert "retention clear" not in found and "index push" not in found  # no other surface carries them


def _calls(source: str, function: str = "command") -> set[str]:
    return operation_calls(textwrap.dedent(source), function)


def test_a_direct_store_call_is_a_bypass() -> None:
    assert not _calls(
        """
        from undercroft_store.memory.kg.graph import KnowledgeGraph
        from undercroft_cli.operations.entities import ENTITY_PAGE_MAX

        @click.option("--limit", type=click.IntRange(1, ENTITY_PAGE_MAX))
        def command(store, limit):
            return KnowledgeGraph(store).entities(limit=limit, offset=0)
        """
    )


def test_an_operation_reached_through_a_module_helper_counts() -> None:
    assert _calls(
        """
        from undercroft_cli.operations import drawer_record as record

        def _render(drawers):
            return [record(d) for d in drawers]

        def _show(store, render):
            return render(store.list())

        def command(store):
            return _show(store, _render)
        """
    ) == {f"{_LAYER}.drawer_record"}


def test_an_operation_called_through_a_module_alias_counts() -> None:
    for header, call in (
        ("from undercroft_cli import operations", "operations.drawer_record(d)"),
        ("import undercroft_cli.operations.drawers as ops", "ops.update_drawer(store, i)"),
        ("import undercroft_cli.operations.drawers", "undercroft_cli.operations.drawers.update_drawer(store, i)"),
    ):
        assert _calls(f"{header}\n\ndef command(store, d, i):\n    return {call}\n"), header


def test_a_look_alike_name_from_elsewhere_does_not_count() -> None:
    assert not _calls(
        """
        from undercroft_store.integrity.history import history as history_page

        def command(store):
            return history_page(store)
        """
    )
