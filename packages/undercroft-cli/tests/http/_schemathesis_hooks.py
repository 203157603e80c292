"""Schemathesis hooks for the serve-http run (loaded through ``SCHEMATHESIS_HOOKS`` by the schema test).

``POST …/import`` takes and ``GET …/export`` answers NDJSON, which schemathesis has no codec for: a generated
import body becomes one JSON document per line, and an export answer is read back line by line so its
documented schema is checked like any other response's.
"""

from __future__ import annotations

import json
from typing import Any

import schemathesis

NDJSON = "application/x-ndjson"


@schemathesis.serializer(NDJSON)
def _ndjson_body(_ctx: Any, value: Any) -> bytes:
    if isinstance(value, bytes):
        return value
    lines = value if isinstance(value, list) else [value]
    return b"".join(json.dumps(line).encode("utf-8") + b"\n" for line in lines)


@schemathesis.deserializer(NDJSON)
def _ndjson_answer(_ctx: Any, response: Any) -> Any:
    return [json.loads(line) for line in response.content.splitlines() if line.strip()]
