"""Trace spans through the shim: producers open `span` blocks; the installed `Tracer` decides where they go.

The default tracer drops every span (nothing is kept, nothing leaves the process). A span's name must be in
`names.SPAN_NAMES` and its attributes among the keys `names.SPAN_ATTRIBUTES` declares for it, each a short
scalar (a ``str`` of at most 64 characters on one line, an ``int``, a finite ``float``, a ``bool`` or
``None``, which is omitted): there is no key for content, a query, a wing or room name, a drawer id or a
credential, so none can be attached. Validation runs whatever tracer is installed, so the default build's
tests catch a producer that would leak. Spans nest through ``contextvars`` (the OTLP tracer's context),
which also carries them onto a worker thread that copies the context, as the server's store threads do.
"""

from __future__ import annotations

import math
import threading
from collections.abc import Iterator, Mapping
from contextlib import AbstractContextManager, contextmanager, nullcontext
from typing import Protocol, runtime_checkable

from undercroft_obs.errors import InvalidMetadata, UnknownName
from undercroft_obs.names import SPAN_ATTRIBUTES

__all__ = ["NullTracer", "SpanHandle", "SpanValue", "Tracer", "current_tracer", "install_tracer", "span"]

SpanValue = str | int | float | bool

_MAX_TEXT = 64


class SpanHandle(Protocol):
    """An open span: attributes learnt during the block (a hit count, a status) are set on it."""

    def set(self, key: str, value: SpanValue) -> None:
        """Attach one validated attribute."""


@runtime_checkable
class Tracer(Protocol):
    """Where spans go. ``start`` returns a context manager that ends the span (marking an error on raise)."""

    def start(self, name: str, attributes: Mapping[str, SpanValue]) -> AbstractContextManager[SpanHandle]:
        """Open span ``name`` with ``attributes``, nested under the current one."""


class _NullHandle:
    def set(self, key: str, value: SpanValue) -> None:
        """Drop an attribute."""


class NullTracer:
    """The default tracer: drops every span."""

    def start(self, name: str, attributes: Mapping[str, SpanValue]) -> AbstractContextManager[SpanHandle]:
        """A span that goes nowhere."""
        return nullcontext(_NullHandle())


_lock = threading.Lock()
_tracer: Tracer = NullTracer()


def install_tracer(tracer: Tracer) -> Tracer:
    """Route every later span to ``tracer``; return the tracer it replaces."""
    global _tracer
    if not isinstance(tracer, Tracer):
        raise TypeError(f"{type(tracer).__name__} does not implement the Tracer interface")
    with _lock:
        previous, _tracer = _tracer, tracer
    return previous


def current_tracer() -> Tracer:
    """The tracer spans go to now."""
    return _tracer


def _value(name: str, key: str, value: object) -> SpanValue:
    allowed = SPAN_ATTRIBUTES[name]
    if key not in allowed:
        raise InvalidMetadata(f"span {name!r}: attribute {key!r} is not one of {sorted(allowed)}")
    if isinstance(value, bool | int):
        return value
    if isinstance(value, float):
        if not math.isfinite(value):
            raise InvalidMetadata(f"span {name!r}: {key} is not finite")
        return value
    if isinstance(value, str):
        if len(value) > _MAX_TEXT or any(ch in value for ch in "\r\n\x00"):
            raise InvalidMetadata(f"span {name!r}: {key} is not a single line of at most {_MAX_TEXT} characters")
        return value
    raise InvalidMetadata(f"span {name!r}: {key} is a {type(value).__name__}; spans carry short scalars only")


class _Checked:
    """The handle producers see: validates each attribute before the tracer's handle gets it."""

    def __init__(self, name: str, inner: SpanHandle) -> None:
        self._name = name
        self._inner = inner

    def set(self, key: str, value: object) -> None:
        """Attach one attribute (None is omitted; anything but a short scalar under a declared key raises)."""
        if value is not None:
            self._inner.set(key, _value(self._name, key, value))


@contextmanager
def span(name: str, /, **attributes: object) -> Iterator[_Checked]:
    """Open span ``name`` for the ``with`` block; raises `UnknownName` / `InvalidMetadata` before the block."""
    if name not in SPAN_ATTRIBUTES:
        raise UnknownName(f"span {name!r} is not registered in undercroft_obs.names.SPAN_NAMES")
    clean = {key: _value(name, key, value) for key, value in attributes.items() if value is not None}
    with _tracer.start(name, clean) as handle:
        yield _Checked(name, handle)
