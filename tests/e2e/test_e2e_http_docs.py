"""docs/http.md's examples, executed in order against a real ``undercroft serve-http``; every route has one.

Each ```http block is: ``# <status> [capture name=path …]``, the request line, then the body verbatim (JSON,
NDJSON, or ``$name`` for a captured document). ``path`` is dotted (``facts.0.id``; ``.`` captures the whole
reply). A block whose status differs from the reply fails with the reply's body.
"""

from __future__ import annotations

import json
import re
import subprocess
from pathlib import Path
from typing import Any

import httpx
import pytest
from live_server import PROGRAM, serving
from undercroft_cli.http.routes import ROUTES

pytestmark = pytest.mark.loopback

ROOT = Path(__file__).resolve().parents[2]
TOKEN = "docs-bearer-" + "y" * 24
_BLOCK = re.compile(r"```http\n(.*?)```", re.S)


def _examples() -> list[tuple[int, dict[str, str], str, str, str]]:
    examples = []
    for block in _BLOCK.findall((ROOT / "docs" / "http.md").read_text(encoding="utf-8")):
        head, request, *body = block.rstrip("\n").split("\n")
        words = head.removeprefix("# ").split()
        captures = dict(item.split("=", 1) for item in words[2:]) if len(words) > 1 else {}
        method, target = request.split(" ", 1)
        examples.append((int(words[0]), captures, method, target, "\n".join(body)))
    return examples


def _template(method: str, target: str) -> tuple[str, str] | None:
    path = target.split("?", 1)[0]
    for route in ROUTES:
        pattern = "^" + re.sub(r"\{[a-z_]+\}", "[^/]+", route.path) + "$"
        if route.method == method and re.match(pattern, path):
            return route.key
    return None


def _dig(data: Any, path: str) -> Any:
    if path == ".":
        return data
    for part in path.split("."):
        data = data[int(part)] if isinstance(data, list) else data[part]
    return data


def test_every_route_has_an_example_and_every_example_names_a_route() -> None:
    named = [_template(method, target) for _, _, method, target, _ in _examples()]
    assert None not in named, [e[2:4] for e, n in zip(_examples(), named, strict=True) if n is None]
    assert set(named) == {route.key for route in ROUTES}


def test_the_examples_run_as_documented(tmp_path: Path) -> None:
    env = {"UNDERCROFT_HOME": str(tmp_path / "palace"), "UNDERCROFT_MCP_HTTP_TOKEN": TOKEN, "PATH": "/usr/bin:/bin"}
    assert subprocess.run([str(PROGRAM), "init"], env=env, capture_output=True, timeout=120).returncode == 0
    with serving(env) as server:
        base = server.url
        captured: dict[str, str] = {}
        with httpx.Client(base_url=base, headers={"Authorization": f"Bearer {TOKEN}"}, timeout=60) as client:
            for status, captures, method, target, body in _examples():
                for name, value in captured.items():
                    target, body = target.replace(f"${name}", value), body.replace(f"${name}", value)
                reply = client.request(method, target, content=body.encode() if body else None)
                assert reply.status_code == status, (method, target, reply.text[:500])
                for name, path in captures.items():
                    value = _dig(reply.json(), path)
                    captured[name] = value if isinstance(value, str) else json.dumps(value)
