"""The two planes' vocabularies counted against the engine's real /v1 route table, in both directions.

Every allowlisted data-plane shape and every operator operation must name a real route of the engine, and every
route under a vault must be classified: data plane, operator plane, or deliberately unreachable (lifecycle,
key rotation, the audit history) — a route added to the engine without a decision here fails.
"""

from __future__ import annotations

import re

import pytest
from undercroft_cli.http.routes import ROUTES
from undercroft_orchestrator._internal.vocabulary import (
    OPERATIONS,
    data_subpath_ok,
    operator_route,
    operator_subpath_ok,
)

_VAULT = "/v1/vaults/{id}"
_UNREACHABLE = {("DELETE", ""), ("POST", "rotate"), ("GET", "history")}
_CONCRETE = {"{drawer_id}": "drawer_" + "0" * 32, "{key}": "k", "{tid}": "t1"}


def _vault_routes() -> list[tuple[str, str]]:
    routes = []
    for route in ROUTES:
        if route.path == _VAULT or route.path.startswith(_VAULT + "/"):
            subpath = route.path.removeprefix(_VAULT).lstrip("/")
            for template, concrete in _CONCRETE.items():
                subpath = subpath.replace(template, concrete)
            routes.append((route.method, subpath))
    return routes


def test_every_vault_route_is_classified_exactly_once() -> None:
    for method, subpath in _vault_routes():
        data = data_subpath_ok(subpath)
        operator = operator_subpath_ok(method, subpath)
        unreachable = (method, subpath) in _UNREACHABLE
        assert data or operator or unreachable, (method, subpath)
        assert not (unreachable and (data or operator)), (method, subpath)


def test_every_operation_and_shape_names_a_real_route() -> None:
    real = set(_vault_routes())
    for op, pair in OPERATIONS.items():
        assert pair in real, op
    shapes = {subpath for _method, subpath in real if data_subpath_ok(subpath)}
    for needed in ("drawers", "search", "stats", "stats/history", "export", "import", "kg/canonical/k", "closets"):
        assert needed in shapes, needed
    for _method, subpath in real:
        if re.fullmatch(r"(verify|repair|anchor|forget|trust|admission|retention|backups|witness)(/.*)?", subpath):
            assert not data_subpath_ok(subpath), subpath


@pytest.mark.parametrize(
    "subpath",
    ["", ".", "..", "drawers/../stats", "drawers//x", "drawers/a/b", "kg/authority", "verify", "rotate", "vaults"],
)
def test_the_allowlist_is_closed(subpath: str) -> None:
    assert not data_subpath_ok(subpath)


def test_operator_routes_are_named_as_such_and_others_are_not() -> None:
    assert operator_route("verify") and operator_route("kg/authority") and operator_route("rotate")
    assert not operator_route("export")  # on both planes
    assert not operator_route("nonsense") and not operator_route("drawers")
