"""The in-process broker of the live stream: validated events in, per-vault frames out, samples kept in a ring.

`Broker` is a `Sink` for events only (counters, histograms and gauges are the metric sink's): every event the
shim validated whose ``vault`` names a subscribed vault is handed to each of that vault's subscribers, and
every ``sample`` event is also kept in that vault's bounded ring (``history``). The broker never touches a
store: what it delivers is exactly the metadata the producers emitted, which the shim has already reduced to
short scalars (no content, query or key has a shape it accepts). Stdlib only.

Delivery is a callback the subscriber supplies (an event-loop hand-off on a server); it runs on the
producer's thread, so it must be quick and must not block. A callback that raises is dropped from the
broker rather than allowed to fail the write that emitted the event.
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from itertools import count

from undercroft_obs._internal.metadata import EventValue
from undercroft_obs.names import EVENT_SAMPLE

__all__ = ["HISTORY_CAPACITY", "Broker", "Frame", "Subscription"]

HISTORY_CAPACITY = 300
"""Samples kept per vault (ten minutes at the default 2 s tick); ``?window=`` is at most this."""


@dataclass(frozen=True)
class Frame:
    """One live-stream frame: the event name and its (already validated) metadata."""

    event: str
    data: Mapping[str, EventValue]


Deliver = Callable[[Frame], None]


@dataclass(frozen=True)
class Subscription:
    """A handle on one subscriber of one vault (pass it back to `Broker.unsubscribe`)."""

    vault: str
    token: int = field(compare=True)


class Broker:
    """Per-vault subscribers and the per-vault sample ring, behind one lock."""

    def __init__(self, *, capacity: int = HISTORY_CAPACITY) -> None:
        """Start with no subscriber and empty rings of ``capacity`` samples each."""
        if capacity < 1:
            raise ValueError("the history ring holds at least one sample")
        self.capacity = capacity
        self._lock = threading.Lock()
        self._subscribers: dict[str, dict[int, Deliver]] = {}
        self._rings: dict[str, deque[Mapping[str, EventValue]]] = {}
        self._tokens = count(1)

    def subscribe(self, vault: str, deliver: Deliver) -> Subscription:
        """Deliver every later frame of ``vault`` to ``deliver`` until `unsubscribe`."""
        with self._lock:
            token = next(self._tokens)
            self._subscribers.setdefault(vault, {})[token] = deliver
        return Subscription(vault, token)

    def unsubscribe(self, subscription: Subscription) -> None:
        """Stop delivering to ``subscription`` (idempotent)."""
        with self._lock:
            delivers = self._subscribers.get(subscription.vault, {})
            delivers.pop(subscription.token, None)
            if not delivers:
                self._subscribers.pop(subscription.vault, None)

    def subscribed(self) -> frozenset[str]:
        """The vaults with at least one subscriber now."""
        with self._lock:
            return frozenset(self._subscribers)

    def history(self, vault: str, window: int | None = None) -> list[Mapping[str, EventValue]]:
        """The last ``window`` samples of ``vault`` (all kept when None), oldest first."""
        with self._lock:
            ring = list(self._rings.get(vault, ()))
        return ring if window is None else ring[-window:] if window > 0 else []

    def forget(self, vault: str) -> None:
        """Drop ``vault``'s ring (the vault was deleted or rotated away)."""
        with self._lock:
            self._rings.pop(vault, None)

    # --- the Sink protocol: events only ---------------------------------------------------------------
    def event(self, name: str, metadata: Mapping[str, EventValue]) -> None:
        """Keep a sample in its vault's ring; hand the frame to that vault's subscribers."""
        vault = metadata.get("vault")
        if not isinstance(vault, str):
            return
        frame = Frame(name, dict(metadata))
        with self._lock:
            if name == EVENT_SAMPLE:
                self._rings.setdefault(vault, deque(maxlen=self.capacity)).append(frame.data)
            delivers = list(self._subscribers.get(vault, {}).items())
        for token, deliver in delivers:
            try:
                deliver(frame)
            except Exception:  # noqa: BLE001 -- a broken subscriber must never fail the producer's write
                self.unsubscribe(Subscription(vault, token))

    def counter(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Counters are the metric sink's."""

    def histogram(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Histograms are the metric sink's."""

    def gauge(self, name: str, value: float, labels: Mapping[str, str]) -> None:
        """Gauges are the metric sink's."""
