"""Every /v1 route's operation, by ``(method, path)``: the agent plane and the operator plane."""

from __future__ import annotations

from undercroft_cli.http.bindings.agent import AGENT_BINDINGS
from undercroft_cli.http.bindings.operator import MAX_IMPORT_BODY, OPERATOR_BINDINGS
from undercroft_cli.http.bindings.telemetry import TELEMETRY_BINDINGS
from undercroft_cli.http.operations import Binding

__all__ = ["BINDINGS", "MAX_IMPORT_BODY"]

BINDINGS: dict[tuple[str, str], Binding] = {**AGENT_BINDINGS, **OPERATOR_BINDINGS, **TELEMETRY_BINDINGS}
"""One binding per route of the table that is not pending (a test counts both directions)."""
