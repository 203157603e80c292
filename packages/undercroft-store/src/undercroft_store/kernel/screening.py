"""The screening decision every drawer write must state: apply the admission screen, or a named bypass.

`writes.write_drawers` takes ``screening=`` as a required keyword with no default, so a new write path
cannot forget the screen: it must either pass `Screen()` or say why not with `Bypass(reason)`, where the
reason comes from a closed set. Until governance lands the screen admits everything — the seam is real,
the policy is not yet.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

from undercroft_store.errors import InvalidDrawer

__all__ = ["Bypass", "BypassReason", "Screen", "Screening"]


class BypassReason(Enum):
    """Why a write skips the admission screen (closed set; each is a path that was screened before)."""

    ALREADY_DIVERTED = "already-diverted"  # a flagged write re-entering the path into the quarantine wing
    RESTORE = "restore"  # a verified backup being restored
    ROTATION = "rotation"  # re-keying rows that are already in the vault
    MIGRATION = "migration"  # an embedder or schema migration of rows already in the vault
    REPAIR = "repair"  # re-embedding or backfilling rows already in the vault


@dataclass(frozen=True, slots=True)
class Screen:
    """Apply the admission screen to every drawer of the batch."""


@dataclass(frozen=True, slots=True)
class Bypass:
    """Skip the admission screen, for a reason from the closed set."""

    reason: BypassReason

    def __post_init__(self) -> None:
        if not isinstance(self.reason, BypassReason):
            raise InvalidDrawer(f"a bypass needs a BypassReason, got {self.reason!r}")


#: The screening decision a write states.
Screening = Screen | Bypass
