"""The configuration reference (docs/configuration.md), rendered from the registry so it cannot drift.

The page's last section says which capabilities a program ships, so it is rendered for that program's
`Build`: regenerate with `python -m undercroft_cli._internal.reference > docs/configuration.md` (the CLI
passes its composition root's build); tests fail when the committed page and the registry disagree.
"""

from __future__ import annotations

from undercroft_config._internal.parsers import Unparsable
from undercroft_config.capabilities import Build, Capability
from undercroft_config.declaration import Doctrine
from undercroft_config.registry import REGISTRY, SECTIONS

__all__ = ["render_capabilities", "render_markdown", "render_tables"]

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

It is not a copy of start-up: it *is* start-up's resolver. Every `undercroft` command and `serve-mcp`
run the same check over the same build before opening anything, so the two cannot disagree:

- any refusal stops the program with **exit 1** before a vault, a socket or a file is opened, naming every
  refusing variable at once (`serve-mcp` therefore never answers an MCP `initialize`);
- each warning, and each unknown name, is printed **once on stderr** at start (`warning: …`), and the
  program runs with the default kept;
- a test drives every declared variable with a legal value, `garbage`, an empty value and a
  whitespace-tailed value through `config check`, a real CLI start and a real `serve-mcp` start, and
  asserts one verdict (`tests/e2e/test_e2e_config_doctrine.py`).

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
- A legal value that **selects a component this build does not have** — an embedder, a reranker, a
  retrieval tier, the admission advisor, a remote index, the trace exporter, the metrics endpoint —
  **refuses to start** whatever the variable's doctrine for an unparsable value, naming the variable and
  the missing component: running without what was selected would silently ignore it. What this build
  has is the last section of this page.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render_tables() -> str:
    """The preamble and one table per section: everything but the build's capabilities."""
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


#: Values probed through every declaration's own parse to find what selects each capability.
_PROBES = (
    "hash",
    "onnx",
    "ort",
    "http",
    "colbert",
    "colbert-ort",
    "pq",
    "fde",
    "hnsw",
    "advisory",
    "on",
    "https://index.invalid",
    "postgres://index.invalid/x?sslmode=require",
)


def _selectors() -> dict[Capability, list[str]]:
    """Capability -> the declarations (and values) that select it, found by each declaration's parse."""
    found: dict[Capability, list[str]] = {capability: [] for capability in Capability}
    for entry in REGISTRY.values():
        if entry.type == "CA pin":
            continue  # a pin's parse reads a file; no pin selects a component
        for probe in _PROBES:
            try:
                needed = entry.requires(entry.parse(probe))
            except Unparsable:
                continue
            shown = f"`{entry.name}` (any value)" if "://" in probe else f"`{entry.name}={probe}`"
            if needed is not None and shown not in found[needed]:
                found[needed].append(shown)
    return found


def render_capabilities(build: Build) -> str:
    """The section naming every capability a declaration can select and whether `build` ships it."""
    lines = [
        "## what this build has\n",
        "A declaration selecting a capability marked *no* refuses to start, naming the variable. The list is",
        "the CLI's composition root (`undercroft_cli._internal.composition.BUILD`, filled from the",
        "components it wires), read by `config check` and start-up alike; an issue that wires a component",
        "flips its row.\n",
        "| capability | component | selected by | in this build |",
        "| --- | --- | --- | --- |",
    ]
    for capability, selectors in _selectors().items():
        shipped = "yes" if build.has(capability) else "no"
        lines.append(f"| `{capability.value}` | {capability.description} | {', '.join(selectors)} | {shipped} |")
    lines.append("")
    return "\n".join(lines)


def render_markdown(build: Build) -> str:
    """The whole reference page as Markdown, for a program shipping `build`."""
    return render_tables() + "\n" + render_capabilities(build)
