"""docs/orchestrator.md counted against the code in both directions: commands, admin routes, the operator
vocabulary and the metric series. A command, route, operation or series that one side has and the other does
not fails here."""

from __future__ import annotations

import re
from pathlib import Path

from starlette.routing import Route
from undercroft_orchestrator._internal.app import ControlPlane, build_app
from undercroft_orchestrator._internal.engines import Engines
from undercroft_orchestrator._internal.metrics import PrometheusMeter
from undercroft_orchestrator._internal.ratelimit import RateLimit
from undercroft_orchestrator._internal.sealing import Keys
from undercroft_orchestrator._internal.state import State
from undercroft_orchestrator._internal.vocabulary import OPERATIONS
from undercroft_orchestrator.main import _parser

DOC = (Path(__file__).resolve().parents[3] / "docs" / "orchestrator.md").read_text()


def _section(title: str) -> str:
    start = DOC.index(f"## {title}")
    end = DOC.find("\n## ", start + 3)
    return DOC[start : end if end != -1 else None]


def _first_cells(section: str) -> list[str]:
    rows = (line.replace("\\|", "¦") for line in section.splitlines() if line.startswith("| `"))
    return [row.split("|")[1].strip() for row in rows]


def test_every_command_is_documented_and_every_documented_command_exists() -> None:
    cells = _first_cells(_section("Commands"))
    documented = {chunk.split()[0] for cell in cells for chunk in re.findall(r"`([^`]+)`", cell)}
    subparsers = next(a for a in _parser()._actions if a.dest == "command")
    assert documented == set(subparsers.choices)  # type: ignore[attr-defined]


def test_every_admin_route_is_documented_and_every_documented_route_exists(tmp_path: Path) -> None:
    state = State(tmp_path / "s.db", Keys("k" * 43))
    app = build_app(ControlPlane(state, Engines(None), admin_token="a" * 16, rate=RateLimit(None), replica=False))
    served = set()
    for route in app.routes:
        if isinstance(route, Route) and route.path.startswith("/admin"):
            path = route.path.replace("{subpath:path}", "<subpath>")
            for method in route.methods or ():
                if method != "HEAD":
                    served.add((method, path))
    documented = set()
    for cell in _first_cells(_section("The admin plane")):
        methods, _, path = cell.strip("`").partition(" ")
        if path.startswith("/admin"):
            documented.update((method, path) for method in methods.split("/"))
    assert documented == served


def test_the_operator_vocabulary_table_is_the_vocabulary() -> None:
    rows: dict[str, tuple[str, str]] = {}
    for line in _section("The admin plane").splitlines():
        cells = [cell.strip() for cell in line.split("|")[1:-1]]
        if len(cells) != 2 or not cells[0].startswith("`") or cells[0].startswith("`GET") or "/admin" in cells[0]:
            continue
        if cells[0] == "operation":
            continue
        names = re.findall(r"`([a-z-]+)`", cells[0])
        calls = [call.strip().strip("`") for call in cells[1].split(" / ")]
        subpath = calls[-1].split(" ", 1)[1]
        for name, call in zip(names, calls, strict=True):
            method, _, own = call.partition(" ")
            rows[name] = (method, own or subpath)
    assert rows == OPERATIONS


def test_every_series_is_documented_and_every_documented_series_exists() -> None:
    documented = {cell.strip("`") for cell in _first_cells(_section("Metrics"))}
    meter = PrometheusMeter()
    emitted = set()
    for metric in meter.registry.collect():
        emitted.add(metric.name + ("_total" if metric.type == "counter" else ""))
    assert documented == emitted
