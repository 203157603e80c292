"""The operation layer: what the CLI commands, the MCP tools and the HTTP handlers do, said once.

Three adapters stand on this package and never on each other: ``undercroft_cli.commands`` (click),
``undercroft_cli.mcp`` (the MCP stdio server) and the coming HTTP handlers (``serve-http``). An adapter
parses its transport's input, calls an operation here, and renders the result in its transport's shape.

What belongs here: logic that more than one adapter needs and that does not depend on how the call arrived —
parsing a value both surfaces accept (an ISO date, an instant with a timezone), the disclosures a search
result owes its reader, the JSON record of a hit or a fact, the bounds an option shares across surfaces.
What does not: click, the MCP SDK, HTTP, a terminal, an exit code. An operation raises ``ValueRefused``
(a ``ValueError``) or a typed ``UndercroftError``; each adapter maps it to its own refusal
(``click.BadParameter``, an MCP ``InvalidArgument``, an HTTP 4xx). The import-linter contracts in the
root ``pyproject.toml`` enforce the direction: ``commands`` ↛ ``mcp``, ``mcp`` ↛ ``commands``, and this
package imports neither.

The ``serve-http`` issue builds this layer out (the ``/v1`` routes call the same operations the tools do). A CLI
command whose parity row names an MCP tool or a /v1 route calls this layer, or is named in
``undercroft_cli.parity.OPERATION_BYPASSES`` with what still differs (``tests/test_cli_operation_layer.py`` reads
the commands' source and holds the list to shrinking).
"""

from undercroft_cli.operations.remote_index import INDEX_STATUS_SCHEMA, index_status_record
from undercroft_cli.operations.search import TOOL_SEARCH_LIMIT, no_hits_line, search_disclosures
from undercroft_cli.operations.shapes import (
    DRAWER_SCHEMA,
    FACT_SCHEMA,
    HIT_SCHEMA,
    SEARCH_RESULT_PROPERTIES,
    WRITE_PROPERTIES,
    closet_record,
    dedup_record,
    drawer_record,
    erasure_record,
    fact_record,
    hallway_record,
    nullable,
    reached_records,
    verify_record,
)
from undercroft_cli.operations.values import ValueRefused, parse_day, parse_instant, parse_vector

__all__ = [
    "DRAWER_SCHEMA",
    "FACT_SCHEMA",
    "HIT_SCHEMA",
    "INDEX_STATUS_SCHEMA",
    "SEARCH_RESULT_PROPERTIES",
    "TOOL_SEARCH_LIMIT",
    "WRITE_PROPERTIES",
    "ValueRefused",
    "closet_record",
    "dedup_record",
    "drawer_record",
    "erasure_record",
    "fact_record",
    "hallway_record",
    "index_status_record",
    "no_hits_line",
    "nullable",
    "parse_day",
    "parse_instant",
    "parse_vector",
    "reached_records",
    "search_disclosures",
    "verify_record",
]
