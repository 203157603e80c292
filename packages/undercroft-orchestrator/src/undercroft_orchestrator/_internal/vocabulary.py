"""What each plane may forward: the data plane's closed allowlist and the operator plane's closed vocabulary.

The data plane (``/t/<subpath>``, a tenant bearer) reaches only whole shapes of the tenant's own vault: vault
lifecycle and every operator route stay out of reach. The operator plane (``/admin/tenants/{id}/ops/<subpath>``
and ``undercroft-orchestrator ops``) forwards a closed set of (method, subpath) pairs; drawer reads and key
rotation are deliberately not among them.
"""

from __future__ import annotations

import re

__all__ = ["OPERATIONS", "OPERATOR_SUBPATHS", "data_subpath_ok", "operator_route", "operator_subpath_ok"]

_SEGMENT = r"[^/]+"
_DATA_SHAPES = tuple(
    re.compile(shape)
    for shape in (
        r"drawers",
        rf"drawers/{_SEGMENT}",  # one segment: a drawer id, or check-duplicate
        r"search",
        r"stats",
        r"stats/history",
        r"export",
        r"import",
        r"taxonomy",
        r"kg/stats",
        r"kg/entities",
        r"kg/query",
        r"kg/timeline",
        r"kg/receipts",
        r"kg/rel",
        rf"kg/canonical/{_SEGMENT}",
        r"index/status",
        r"dedup",
        r"tunnels",
        rf"tunnels/{_SEGMENT}",
        rf"tunnels/{_SEGMENT}/drawers",
        r"diary",
        r"diary/agents",
        r"wake-up",
        r"closets",
        r"hallways",
    )
)


def data_subpath_ok(subpath: str) -> bool:
    """True when ``subpath`` (what follows ``/t/``) is one of the data plane's whole shapes."""
    if subpath in ("", ".", "..") or "//" in subpath or any(part in (".", "..") for part in subpath.split("/")):
        return False
    return any(shape.fullmatch(subpath) for shape in _DATA_SHAPES)


OPERATIONS: dict[str, tuple[str, str]] = {
    "verify": ("POST", "verify"),
    "repair": ("POST", "repair"),
    "anchor": ("POST", "anchor"),
    "supersessions": ("GET", "supersessions"),
    "admission": ("GET", "admission"),
    "admission-rule": ("POST", "admission"),
    "trust": ("GET", "trust"),
    "trust-set": ("POST", "trust"),
    "retention": ("GET", "retention"),
    "retention-set": ("POST", "retention"),
    "retention-sweep": ("POST", "retention/sweep"),
    "forget": ("POST", "forget"),
    "verify-forgetting": ("POST", "verify-forgetting"),
    "authority": ("POST", "kg/authority"),
    "backup-create": ("POST", "backups"),
    "backups": ("GET", "backups"),
    "backup-restore": ("POST", "backups/restore"),
    "witness": ("GET", "witness"),
    "witness-check": ("POST", "witness"),
    "export": ("GET", "export"),
    "import": ("POST", "import"),
    "refine": ("POST", "refine"),
}
"""``ops <tenant> <op>``: each operation's (method, /v1 subpath) on the tenant's vault."""

_OPERATOR_PAIRS = frozenset(OPERATIONS.values())
OPERATOR_SUBPATHS = frozenset(subpath for _method, subpath in _OPERATOR_PAIRS) | {"history", "rotate"}
"""Every subpath that belongs to the operator plane (a tenant asking for one is told so)."""


def operator_subpath_ok(method: str, subpath: str) -> bool:
    """True when ``method subpath`` is in the operator plane's closed vocabulary."""
    return (method, subpath) in _OPERATOR_PAIRS


def operator_route(subpath: str) -> bool:
    """True when ``subpath`` names an operator route (export and import are on both planes)."""
    return subpath in OPERATOR_SUBPATHS and not data_subpath_ok(subpath)
