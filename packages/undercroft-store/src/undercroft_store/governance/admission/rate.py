"""The per-writer rate screen (UNDERCROFT_ADMISSION_RATE=<count>/<seconds>).

A writer is keyed on the handler-stamped `added_by` — the surface that took the write — never on a
writer's own claim, so renaming oneself buys no fresh budget. A writer that already has `count` committed
writes inside the trailing `seconds` window trips `rate-anomaly`. The screen only counts what the store
tells it was committed (`record`), diverted writes included, so flooding into quarantine is still
flooding; a store seeds it from its write history at open (`seed`). The clock is injected.
"""

from __future__ import annotations

import time
from collections import deque
from collections.abc import Callable, Iterable
from typing import Final

from undercroft_config.values import Rate
from undercroft_core.errors import InvalidInput

from undercroft_store.governance.admission.signals import Finding, Signal, Subject

__all__ = ["RATE_FINDING", "RateScreen"]

#: The one finding this screen reports: the write as a whole, no span.
RATE_FINDING: Final = Finding(Subject.WRITE, 0, 0, Signal.RATE_ANOMALY)


class RateScreen:
    """Trailing-window counts of committed writes per writer. Deterministic under an injected clock.

    Memory is bounded by `count` moments per writer with writes inside the window; `count()` therefore
    saturates at the declared count, which is all the check needs.
    """

    def __init__(self, rate: Rate, *, clock: Callable[[], float] = time.time) -> None:
        if not isinstance(rate, Rate) or rate.count < 1 or rate.seconds < 1:
            raise InvalidInput(f"a rate screen needs a Rate with count and seconds ≥ 1, got {rate!r}")
        self.rate = rate
        self._clock = clock
        self._writes: dict[str, deque[float]] = {}

    def _window(self, writer: str, now: float) -> deque[float] | None:
        window = self._writes.get(writer)
        if window is None:
            return None
        horizon = now - self.rate.seconds
        while window and window[0] <= horizon:
            window.popleft()
        if not window:
            del self._writes[writer]  # forget idle writers so the map stays bounded by active ones
            return None
        return window

    @staticmethod
    def _writer(writer: str) -> str:
        if not isinstance(writer, str) or not writer:
            raise InvalidInput(f"a rate-screened writer is the non-empty handler-stamped added_by, got {writer!r}")
        return writer

    def count(self, writer: str) -> int:
        """Committed writes by `writer` inside the trailing window, now (saturating at the declared count)."""
        window = self._window(self._writer(writer), self._clock())
        return 0 if window is None else len(window)

    def check(self, writer: str) -> Finding | None:
        """`RATE_FINDING` when `writer` already has `count` committed writes in the window, else None."""
        return RATE_FINDING if self.count(writer) >= self.rate.count else None

    def record(self, writer: str, at: float | None = None) -> None:
        """Count one committed write by `writer` (at the clock's now unless `at` is given)."""
        key = self._writer(writer)
        moment = self._clock() if at is None else float(at)
        # Only the latest `count` moments can decide the check, so the window never holds more.
        window = self._writes.setdefault(key, deque(maxlen=self.rate.count))
        if window and moment < window[-1]:
            # Out of order (a seed after live writes): keep the deque sorted so pruning stays a popleft.
            ordered = sorted([*window, moment])
            window.clear()
            window.extend(ordered)
        else:
            window.append(moment)

    def seed(self, writer: str, moments: Iterable[float]) -> None:
        """Count earlier committed writes by `writer` (e.g. read from the store's history at open)."""
        for moment in sorted(moments):
            self.record(writer, moment)
