"""The control plane's declarations, read once through the same resolvers ``config check`` runs.

Only the ``UNDERCROFT_ORCH_*`` declarations and unknown ``UNDERCROFT_*`` names (likely typos) concern this
program; an engine's declarations in the same environment are the engine's business, not a reason to refuse.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from undercroft_config import Build, Capability, CheckEntry, Status, check, settings, value
from undercroft_config.values import Address, Secret
from undercroft_config.values import CaPin as DeclaredPin
from undercroft_net import CaPin, load_pin
from undercroft_net import Error as NetError

from undercroft_orchestrator.errors import Refused

__all__ = ["DEFAULT_ADDRESS", "Environment", "checked_entries", "read_environment"]

DEFAULT_ADDRESS = Address("127.0.0.1", 8900)
_PREFIX = "UNDERCROFT_ORCH_"
_BUILD = Build.of([Capability.TELEMETRY_METRICS])


def checked_entries(env: Mapping[str, str]) -> tuple[CheckEntry, ...]:
    """``config check``'s verdicts on the declarations this program reads (and on unknown names)."""
    report = check(env, build=_BUILD)
    return tuple(e for e in report.entries if e.name.startswith(_PREFIX) or e.status is Status.UNKNOWN)


@dataclass(frozen=True)
class Environment:
    """The resolved declarations: the state path, the keys' source, the admin token, the engine pin, limits."""

    db: Path
    key: str | None
    admin_token: str | None
    pin: CaPin | None
    address: Address
    metrics_address: Address | None
    metrics_token: str | None
    rate_limit: int | None
    warnings: tuple[str, ...]


def _secret(name: str, env: Mapping[str, str]) -> str | None:
    resolved = value(name, env)
    return resolved.reveal() if isinstance(resolved, Secret) else None


def read_environment(env: Mapping[str, str] | None = None) -> Environment:
    """Resolve every declaration once; `Refused` listing each refusal (nothing has been opened yet)."""
    environment = os.environ if env is None else env
    entries = checked_entries(environment)
    refused = [e.message or e.name for e in entries if e.status is Status.REFUSED]
    if refused:
        raise Refused("refusing to start:\n  " + "\n  ".join(refused))
    warnings = tuple(e.message or e.name for e in entries if e.status in (Status.WARNED, Status.UNKNOWN))
    declared_db = value("UNDERCROFT_ORCH_DB", environment)
    db = Path(str(declared_db)).expanduser() if declared_db else settings.home(environment) / "orchestrator.db"
    declared_pin = value("UNDERCROFT_ORCH_ENGINE_CA", environment)
    try:
        pin = (
            load_pin(declared_pin.path, variable="UNDERCROFT_ORCH_ENGINE_CA")
            if isinstance(declared_pin, DeclaredPin)
            else None
        )
    except NetError as error:
        raise Refused(f"refusing to start:\n  {error}") from None
    address = value("UNDERCROFT_ORCH_ADDR", environment)
    metrics = value("UNDERCROFT_ORCH_METRICS_ADDR", environment)
    rate = value("UNDERCROFT_ORCH_RATE_LIMIT", environment)
    return Environment(
        db=db,
        key=_secret("UNDERCROFT_ORCH_KEY", environment),
        admin_token=_secret("UNDERCROFT_ORCH_ADMIN_TOKEN", environment),
        pin=pin,
        address=address if isinstance(address, Address) else DEFAULT_ADDRESS,
        metrics_address=metrics if isinstance(metrics, Address) else None,
        metrics_token=_secret("UNDERCROFT_ORCH_METRICS_TOKEN", environment),
        rate_limit=rate if isinstance(rate, int) else None,
        warnings=warnings,
    )
