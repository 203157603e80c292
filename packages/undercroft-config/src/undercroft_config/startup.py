"""The start-up resolver every entry point runs before it opens anything: `config check`'s report, enforced.

`start(env, build=...)` runs `check` — the same function `config check` prints — and raises `StartRefused`
listing every refusal, or returns the lines a program prints once on stderr: each warning (a tuning value
that does not parse, the default kept) and each unknown `UNDERCROFT_*` name (a likely typo, never silently
ignored). Because start-up and `config check` are one call over one `Build`, they cannot disagree.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

from undercroft_config.capabilities import Build
from undercroft_config.check import check
from undercroft_config.declaration import Status
from undercroft_config.errors import StartRefused

__all__ = ["start"]


def start(env: Mapping[str, str] | None = None, *, build: Build) -> tuple[str, ...]:
    """Resolve every declaration of `env` (default `os.environ`) for a program shipping `build`.

    Raises `StartRefused` when any declaration refuses; otherwise returns the warning and unknown-name
    messages, in name order, for the caller to print once (a library never prints).
    """
    report = check(os.environ if env is None else env, build=build)
    refused = report.with_status(Status.REFUSED)
    if refused:
        raise StartRefused(tuple(e.name for e in refused), tuple(e.message or e.name for e in refused))
    return tuple(e.message or e.name for e in report.entries if e.status in (Status.WARNED, Status.UNKNOWN))
