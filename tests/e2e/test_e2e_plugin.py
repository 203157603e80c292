"""The Claude Code plugin (plugins/claude-code): its manifest against the documented shape, its parts against the CLI.

The manifest shape is Claude Code's plugin manifest reference (`.claude-plugin/plugin.json`: `name` required,
kebab-case; `version` semantic; component paths relative, starting `./`). The hooks file must be exactly what
`undercroft hooks claude-code --program undercroft` prints, and the MCP server exactly `serve-mcp`; the
server entry is then started as a host would start it (the program from PATH) and answers over MCP.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import anyio
import jsonschema
from mcp import ClientSession, StdioServerParameters
from mcp.client.stdio import stdio_client
from undercroft_cli.mcp.inventory import advertised_names

ROOT = Path(__file__).resolve().parents[2]
PLUGIN = ROOT / "plugins" / "claude-code"
PROGRAM = Path(sys.executable).parent / "undercroft"

RELATIVE = {"type": "string", "pattern": r"^\./"}
MANIFEST_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["name"],
    "properties": {
        "name": {"type": "string", "pattern": r"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"},
        "version": {"type": "string", "pattern": r"^\d+\.\d+\.\d+(-[0-9A-Za-z.-]+)?$"},
        "description": {"type": "string"},
        "author": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}},
        "license": {"type": "string"},
        "keywords": {"type": "array", "items": {"type": "string"}},
        "mcpServers": {"oneOf": [RELATIVE, {"type": "object"}]},
        "hooks": {"oneOf": [RELATIVE, {"type": "object"}]},
    },
}
HOOK_EVENTS = {"PreToolUse", "PostToolUse", "Notification", "UserPromptSubmit", "Stop", "SubagentStop",
               "PreCompact", "SessionStart", "SessionEnd"}  # fmt: skip
HOOKS_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["hooks"],
    "properties": {
        "hooks": {
            "type": "object",
            "propertyNames": {"enum": sorted(HOOK_EVENTS)},
            "additionalProperties": {
                "type": "array",
                "items": {
                    "type": "object",
                    "required": ["hooks"],
                    "properties": {
                        "matcher": {"type": "string"},
                        "hooks": {
                            "type": "array",
                            "items": {
                                "type": "object",
                                "required": ["type", "command"],
                                "properties": {"type": {"const": "command"}, "command": {"type": "string"}},
                            },
                        },
                    },
                },
            },
        }
    },
}
MCP_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["mcpServers"],
    "properties": {
        "mcpServers": {
            "type": "object",
            "additionalProperties": {
                "type": "object",
                "required": ["command"],
                "properties": {"command": {"type": "string"}, "args": {"type": "array", "items": {"type": "string"}}},
            },
        }
    },
}


def _load(relative: str) -> Any:
    return json.loads((PLUGIN / relative).read_text())


def test_the_manifest_and_its_parts_match_the_documented_shapes() -> None:
    manifest = _load(".claude-plugin/plugin.json")
    jsonschema.validate(manifest, MANIFEST_SCHEMA)
    jsonschema.validate(_load(manifest["hooks"]), HOOKS_SCHEMA)
    jsonschema.validate(_load(manifest["mcpServers"]), MCP_SCHEMA)
    version = subprocess.run([str(PROGRAM), "--version"], capture_output=True, text=True, check=True).stdout
    assert version.split()[-1] == manifest["version"]  # the plugin moves in lockstep with the program


def test_the_shape_check_is_not_vacuous() -> None:
    for bad in ({"name": "Undercroft Memory"}, {"name": "undercroft", "hooks": "hooks/hooks.json"}, {}):
        try:
            jsonschema.validate(bad, MANIFEST_SCHEMA)
        except jsonschema.ValidationError:
            continue
        raise AssertionError(f"accepted {bad}")


def test_the_hooks_are_the_cli_s_own_fragment() -> None:
    printed = subprocess.run(
        [str(PROGRAM), "hooks", "claude-code", "--program", "undercroft"], capture_output=True, text=True, check=True
    )
    assert json.loads(printed.stdout) == _load("hooks/hooks.json")


def test_the_plugin_s_server_entry_starts_a_working_server(tmp_path: Path) -> None:
    [(name, entry)] = _load(".mcp.json")["mcpServers"].items()
    assert name == "undercroft" and entry == {"command": "undercroft", "args": ["serve-mcp"]}
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env["UNDERCROFT_HOME"] = str(tmp_path / "palace")
    env["PATH"] = f"{PROGRAM.parent}{os.pathsep}{env.get('PATH', '')}"  # as after `uv tool install`
    assert subprocess.run([str(PROGRAM), "init"], env=env, capture_output=True, check=False).returncode == 0
    params = StdioServerParameters(command=entry["command"], args=entry["args"], env=env)

    async def main() -> int:
        with open(os.devnull, "w") as quiet:
            async with stdio_client(params, errlog=quiet) as (read, write), ClientSession(read, write) as session:
                await session.initialize()
                return len((await session.list_tools()).tools)

    assert anyio.run(main) == len(advertised_names())
