"""The two gates above dispatch: the read-only refusal and the quarantine fence.

Each is one check over the tool name and the raw argument map rather than a clause per tool, so a tool added
later inherits both without its author remembering. The quarantine fence matches argument VALUES, not key
names: any string anywhere in the arguments naming the reserved ``quarantine-pending`` wing is refused (so a
save whose whole content is that literal string is refused too — the bluntness is deliberate, a key allowlist
goes stale the moment a tool grows an argument), and any id-shaped argument (``id``, ``*_id``, ``*_ids``,
``supersedes``) naming a drawer resident in that wing is refused. The review queue is an operator surface for
reading as well as for ruling.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping

from undercroft_core.ids import validate_drawer_id
from undercroft_core.vocabulary import QUARANTINE_WING, names_quarantine_wing
from undercroft_store import VaultStore
from undercroft_store.governance.read_audit import InternalRead, silent

from undercroft_cli.mcp.errors import ToolRefused
from undercroft_cli.mcp.inventory import READ

__all__ = [
    "check_quarantine_fence",
    "check_read_only",
    "is_id_argument",
    "names_quarantine_wing",
    "resident_in_quarantine",
]


def check_read_only(tool: str, *, read_only: bool) -> None:
    """Refuse every tool not on the READ list when the server is read-only (fails closed on unknown names)."""
    if read_only and tool not in READ:
        raise ToolRefused(f"server is read-only: {tool} is not allowed")


def is_id_argument(key: str) -> bool:
    """True for an argument that carries a record id (``id``, ``*_id``, ``*_ids``, ``supersedes``)."""
    return key in ("id", "supersedes") or key.endswith(("_id", "_ids"))


def _strings(value: object) -> Iterator[str]:
    """Every string inside ``value`` (lists and objects walked), so a nested argument cannot smuggle the name."""
    if isinstance(value, str):
        yield value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            if isinstance(key, str):
                yield key
            yield from _strings(item)
    elif isinstance(value, list | tuple):
        for item in value:
            yield from _strings(item)


def resident_in_quarantine(store: VaultStore, drawer_id: str) -> bool:
    """True when ``drawer_id`` names a verified drawer resident in the review queue (a tampered row raises)."""
    try:
        validate_drawer_id(drawer_id)
    except ValueError:
        return False  # not a drawer id: nothing of the review queue can be named by it
    # hydrate reads the HMAC-verified row whatever its wing (a verified read, so a forged wing cannot pass);
    # an absent drawer is the handler's to report in its own words. The fence's read is not the agent's:
    # silent, so a call naming an id records only the read its handler makes.
    with silent(store, InternalRead.POLICY_FENCE):
        return any(drawer.wing == QUARANTINE_WING for drawer in store.hydrate([drawer_id]))


def check_quarantine_fence(store: VaultStore, tool: str, arguments: Mapping[str, object]) -> None:
    """Refuse a call whose arguments name the quarantine wing, or whose id arguments name a drawer in it."""
    for key, value in arguments.items():
        for text in _strings({key: value}):
            if names_quarantine_wing(text):
                raise ToolRefused(
                    f"{tool}: '{QUARANTINE_WING}' is the admission review queue; quarantined content is not "
                    "reachable over MCP (an operator surface: undercroft admission list)"
                )
        if is_id_argument(key):
            for text in _strings(value):
                if resident_in_quarantine(store, text):
                    raise ToolRefused(
                        f"{tool}: {text} is quarantine-pending; pending review evidence is operator-only "
                        "(undercroft admission allow|deny)"
                    )
