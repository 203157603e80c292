"""The configuration reference (docs/configuration.md), rendered from the registry so it cannot drift.

Regenerate with `python -m undercroft_config.reference > docs/configuration.md`; a test fails when the
committed page and the registry disagree.
"""

from __future__ import annotations

import sys

from undercroft_config.declaration import Doctrine
from undercroft_config.registry import REGISTRY, SECTIONS

__all__ = ["render_markdown"]

_BEHAVIOUR = {
    Doctrine.WARN: "warns, keeps the default",
    Doctrine.REFUSE: "**refuses to start**",
    Doctrine.PRESENCE: "any value turns it on",
    Doctrine.ACCEPT: "accepted as declared",
}

_PREAMBLE = """# Configuration reference

Every `UNDERCROFT_*` variable Undercroft reads, generated from the registry in `undercroft_config`
(`python -m undercroft_config.reference > docs/configuration.md`; a test keeps this page in step).

`undercroft config check` runs every `UNDERCROFT_*` variable of the current environment through the
resolver start-up runs, opening nothing but the PEM files CA pins name, and reports each as
**validated**, **accepted** (opaque: no parse exists, the consumer validates it), **warned**,
**refused**, or **unknown** (the prefix, but no resolver knows it: likely a typo). An environment with
any refusal would not start.

The doctrine:

- Where the default is already conservative and a declaration merely **adjusts** it, a value that does
  not parse **warns and keeps the default**: you lose the tuning and nothing else.
- Where the declaration **turns a protection on, pins an outward path or names a vector space**, a value
  that does not parse **refuses to start**, with a message naming the variable, the value read (never a
  credential: its length and shape only) and what is legal. Declining is declarable: `off` is legal for
  every protection and every CA pin. Endpoints and credentials are declined by leaving them unset.
- Outward URLs follow the transport rule: `https` anywhere, `http` only to a loopback host, no override.
- Credentials are refused when empty or ending in whitespace (HTTP strips a header value's trailing
  whitespace, so such a token could never be presented); they are never trimmed for you.
- Numbers are plain decimal digits: `1_000`, `1e3` and `100/min` do not parse.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_markdown() -> str:
    """The whole reference page as Markdown."""
    lines = [_PREAMBLE]
    for section in SECTIONS:
        entries = [entry for entry in REGISTRY.values() if entry.section == section]
        lines.append(f"## {section}\n")
        lines.append("| variable | type | default | legal values | class | a bad value | meaning |")
        lines.append("| --- | --- | --- | --- | --- | --- | --- |")
        for entry in entries:
            lines.append(
                f"| `{entry.name}` | {_cell(entry.type)} | {_cell(entry.default)} | {_cell(entry.legal)} "
                f"| {entry.declaration_class.value} | {_BEHAVIOUR[entry.doctrine]} | {_cell(entry.summary)} |"
            )
        lines.append("")
    return "\n".join(lines)


if __name__ == "__main__":
    sys.stdout.write(render_markdown())
