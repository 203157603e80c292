"""``UNDERCROFT_SEARCH_TRACE``: a per-phase timing trace of each search to stderr, with pool size and scope.

Only metadata is printed (phase names, milliseconds, counts, the declared scope's labels): never the query.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from typing import TextIO

__all__ = ["SearchTrace"]


class SearchTrace:
    """Collects phase durations; ``emit`` writes one line when enabled, nothing otherwise."""

    def __init__(self, enabled: bool, *, clock: Callable[[], float] = time.perf_counter, stream: TextIO | None = None):
        """Start timing (``clock`` and ``stream`` are injectable for tests)."""
        self.enabled = enabled
        self._clock = clock
        self._stream = stream
        self._last = clock()
        self._started = self._last
        self.phases: list[tuple[str, float]] = []

    def mark(self, phase: str) -> None:
        """Close the phase that just ran under ``phase``."""
        now = self._clock()
        self.phases.append((phase, now - self._last))
        self._last = now

    def total(self) -> float:
        """Seconds since the trace started."""
        return self._clock() - self._started

    def emit(self, *, scope: str, searched: int, pool: int, admitted: int, tier: str) -> None:
        """Print ``search trace: …`` to stderr (or the injected stream) when enabled."""
        if not self.enabled:
            return
        phases = " ".join(f"{name}={seconds * 1000:.2f}ms" for name, seconds in self.phases)
        line = (
            f"search trace: {phases} total={self.total() * 1000:.2f}ms "
            f"tier={tier} scope={scope} searched={searched} pool={pool} admitted={admitted}\n"
        )
        (self._stream or sys.stderr).write(line)
