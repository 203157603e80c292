"""The /v1 route table and the parity table, counted against the live router, CLI and MCP in both directions."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import click
import pytest
from starlette.routing import Route as StarletteRoute
from starlette.testclient import TestClient
from undercroft_cli.http import Gate, Service, Tenancy, build_app
from undercroft_cli.http.bindings import BINDINGS
from undercroft_cli.http.routes import PENDING_ROUTES, READ_POSTS, ROUTES
from undercroft_cli.main import cli
from undercroft_cli.mcp.inventory import TOOLS
from undercroft_cli.parity import CLI_ONLY, PARITY
from undercroft_core.hash_embedder import HashEmbedder
from undercroft_store import Palace

_FRAMEWORK = {
    "/healthz",
    "/ui",
    "/ui/console.js",
    "/ui/console.css",
    "/ui/runbook.html",
    "/v1/openapi.json",
    "/mcp",
    "/metrics",
    "/monitor",
    "/monitor/monitor.js",
    "/monitor/monitor.css",
    "/v1/vaults/{id}/stream",  # beside the /v1 table: the documents list the stream under observability
}


@pytest.fixture
def client(fresh_home: Path) -> Iterator[TestClient]:
    palace = Palace(fresh_home)
    palace.init()
    tenancy = Tenancy(palace, HashEmbedder(), read_only=False, pinned="default")
    with TestClient(build_app(Service(tenancy, Gate(None, None), "default"))) as test_client:
        yield test_client
    palace.close()


def _served(app: object) -> set[tuple[str, str]]:
    served = set()
    for route in app.routes:  # type: ignore[attr-defined]
        assert isinstance(route, StarletteRoute)
        if route.path in _FRAMEWORK:
            continue
        served |= {(method, route.path) for method in (route.methods or ()) if method != "HEAD"}
    return served


def test_the_route_table_is_the_router_in_both_directions(client: TestClient) -> None:
    table = {route.key for route in ROUTES}
    assert len(table) == len(ROUTES) == 58  # the documents' prose says 58, and counting their table agrees
    assert _served(client.app) == table
    assert set(BINDINGS) == table - set(PENDING_ROUTES)
    assert READ_POSTS <= table


def test_every_pending_route_answers_501_naming_what_it_waits_for(client: TestClient) -> None:
    for (method, path), waits_for in PENDING_ROUTES.items():
        response = client.request(method, path.replace("{id}", "default"))
        assert response.status_code == 501, path
        assert waits_for in response.json()["error"]


def test_without_the_telemetry_broker_the_live_routes_answer_501_naming_the_extra(client: TestClient) -> None:
    for path in ("/v1/vaults/default/stats/history", "/v1/vaults/default/stream"):
        response = client.get(path)
        assert response.status_code == 501, path
        assert "telemetry extra" in response.json()["error"]


def test_openapi_describes_every_route_and_method(client: TestClient) -> None:
    document = client.get("/v1/openapi.json").json()
    described = {(method.upper(), path) for path, item in document["paths"].items() for method in item}
    assert described == {route.key for route in ROUTES}


def _cli_commands() -> set[str]:
    context = click.Context(cli)
    found: set[str] = set()

    def walk(group: click.Group, prefix: str) -> None:
        for name in group.list_commands(context):
            command = group.get_command(context, name)
            assert command is not None
            if isinstance(command, click.Group):
                walk(command, f"{prefix}{name} ")
            else:
                found.add(f"{prefix}{name}")

    walk(cli, "")
    return found


def _named(value: tuple[object, ...] | str) -> tuple[object, ...]:
    return () if isinstance(value, str) else value


def test_parity_rows_state_each_surface_or_a_reason() -> None:
    for row in PARITY:
        for surface in (row.cli, row.mcp, row.v1):
            if isinstance(surface, str):
                assert surface.startswith(("boundary: ", "gap: ")), (row.name, surface)
            else:
                assert surface, row.name


def test_parity_names_every_cli_command_and_only_live_ones() -> None:
    live = _cli_commands()
    named = [command for row in PARITY for command in _named(row.cli)]
    assert len(named) == len(set(named))  # one capability per command
    assert set(named) | set(CLI_ONLY) == live
    assert not set(named) & set(CLI_ONLY)


def test_parity_names_every_mcp_tool_and_only_inventoried_ones() -> None:
    named = [tool for row in PARITY for tool in _named(row.mcp)]
    assert len(named) == len(set(named))
    assert set(named) == {tool.name for tool in TOOLS}


def test_parity_names_every_route_exactly_once() -> None:
    named = [route for row in PARITY for route in _named(row.v1)]
    assert len(named) == len(set(named))
    assert set(named) == {route.key for route in ROUTES}


def test_a_tool_backed_route_takes_what_the_tool_takes() -> None:
    # /v1 search and MCP search are one operation: the drift the issue names (MCP refusing `when` while the
    # CLI took it) cannot recur between these two, because the route advertises the tool's own properties.
    from undercroft_cli.mcp.tools import registry

    route = BINDINGS[("POST", "/v1/vaults/{id}/search")]
    assert dict(route.properties) == dict(registry()["undercroft_search"].properties)
    assert {"when", "when_from_query", "as_of", "min_trust"} <= set(route.properties)


def test_cli_search_takes_every_argument_the_shared_search_operation_takes() -> None:
    from undercroft_cli.mcp.tools import registry

    command = cli.get_command(click.Context(cli), "search")
    assert command is not None
    # The CLI's own framing, and its remote-search option (a mirror is declared per process, CLI-side only).
    cli_names = {param.name for param in command.params} - {"vault", "as_json", "backend"}
    assert cli_names == set(registry()["undercroft_search"].properties)
