"""serve-http: MCP over Streamable HTTP at /mcp and the multi-tenant /v1 engine, behind two gates.

``routes`` is the route table as code, ``auth`` the bearer and assertion gates, ``tenancy`` the per-vault
handles, ``operations`` how a route runs its operation, ``bindings`` every route's operation, ``v1`` the
router, ``openapi`` the generated description and ``app`` the application with its gates.
"""

from __future__ import annotations

from undercroft_cli.http.app import Service, build_app
from undercroft_cli.http.auth import Gate, mint_assertion
from undercroft_cli.http.routes import ROUTES
from undercroft_cli.http.tenancy import Tenancy

__all__ = ["ROUTES", "Gate", "Service", "Tenancy", "build_app", "mint_assertion"]
