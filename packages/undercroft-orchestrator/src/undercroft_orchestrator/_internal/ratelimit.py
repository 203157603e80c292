"""The per-tenant request rate screen (``UNDERCROFT_ORCH_RATE_LIMIT`` requests per minute, per process)."""

from __future__ import annotations

import time
from collections import deque

__all__ = ["RateLimit"]

_WINDOW_SECONDS = 60.0


class RateLimit:
    """A sliding one-minute window per tenant; ``None`` as the limit admits everything."""

    def __init__(self, per_minute: int | None) -> None:
        """``per_minute`` requests per tenant per minute, or ``None`` for no limit."""
        self.per_minute = per_minute
        self._seen: dict[str, deque[float]] = {}

    def admit(self, tenant: str, now: float | None = None) -> float | None:
        """``None`` when the request may pass, else the seconds until the window admits another."""
        if self.per_minute is None:
            return None
        moment = time.monotonic() if now is None else now
        window = self._seen.setdefault(tenant, deque())
        while window and window[0] <= moment - _WINDOW_SECONDS:
            window.popleft()
        if len(window) >= self.per_minute:
            return max(window[0] + _WINDOW_SECONDS - moment, 0.001)
        window.append(moment)
        return None
