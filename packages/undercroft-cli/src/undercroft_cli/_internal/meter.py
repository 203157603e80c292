"""What long work draws its progress through, without a CLI toolkit: the `Progress` protocol and the `Meter`.

Work that more than one surface runs (an import, an export) takes a `Meter` and never draws by itself: the CLI
passes ``_internal.progress.progress`` (a click bar on a terminal), a server `quiet` — a request's work draws
nothing on the server's terminal.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

__all__ = ["Meter", "Progress", "Silent", "quiet"]


class Progress(Protocol):
    """What a command advances: ``update(n)`` after each unit of work."""

    def update(self, n_steps: int) -> None:
        """Advance by ``n_steps``."""


class Silent:
    """A `Progress` that draws nothing."""

    def update(self, n_steps: int) -> None:
        """Nothing to draw."""


Meter = Callable[[int, str], AbstractContextManager[Progress]]
"""What draws a unit of work: called with its length and label, it yields the `Progress` to advance."""


@contextmanager
def quiet(length: int, label: str) -> Iterator[Progress]:
    """A meter that draws nothing (work a request runs)."""
    yield Silent()
