"""Running one declaration through its resolver against an explicit environment mapping."""

from __future__ import annotations

import logging
import os
from collections.abc import Mapping

from undercroft_config._internal.parsers import Unparsable
from undercroft_config.declaration import Adjusted, Declaration, Doctrine, Resolution, Status
from undercroft_config.errors import Refused
from undercroft_config.registry import declaration

__all__ = ["evaluate", "resolve", "value"]

_log = logging.getLogger("undercroft_config")
# A library never prints: without a configured handler, warnings stay data (Resolution.message).
_log.addHandler(logging.NullHandler())


def _environment(env: Mapping[str, str] | None) -> Mapping[str, str]:
    return os.environ if env is None else env


def _fallback_text(entry: Declaration, fallback: object) -> str:
    return entry.default if fallback is None else f"{fallback}"


def evaluate(name: str, env: Mapping[str, str] | None = None) -> Resolution:
    """Resolve `name` without raising for a refusal: a refused value comes back with status REFUSED.

    Opens nothing but what a CA pin names. Raises `UnknownDeclaration` for an unregistered name.
    """
    entry = declaration(name)
    environment = _environment(env)
    raw = environment.get(name)
    if raw is None:
        return Resolution(name, Status.UNSET, entry.fallback(environment))
    ok = Status.ACCEPTED if entry.doctrine in (Doctrine.ACCEPT, Doctrine.PRESENCE) else Status.VALIDATED
    try:
        parsed = entry.parse(raw)
    except Unparsable as problem:
        shown = entry.shown(raw)
        if entry.doctrine is Doctrine.REFUSE:
            message = f"{name}={shown} refuses to start: {problem.reason}; legal: {entry.legal}"
            return Resolution(name, Status.REFUSED, None, message, raw)
        fallback = entry.fallback(environment)
        message = (
            f"{name}={shown} does not parse ({problem.reason}; legal: {entry.legal}); "
            f"keeping the default {_fallback_text(entry, fallback)}"
        )
        return Resolution(name, Status.WARNED, fallback, message, raw)
    if isinstance(parsed, Adjusted):
        return Resolution(name, Status.WARNED, parsed.value, f"{name}={entry.shown(raw)}: {parsed.message}", raw)
    return Resolution(name, ok, parsed, None, raw)


def resolve(name: str, env: Mapping[str, str] | None = None) -> Resolution:
    """Resolve `name`; raise `Refused` when the declaration refuses to start.

    A warning is returned in `Resolution.message` (and logged on the `undercroft_config` logger); nothing
    is printed.
    """
    outcome = evaluate(name, env)
    if outcome.status is Status.REFUSED:
        entry = declaration(name)
        raise Refused(name, entry.shown(outcome.raw or ""), outcome.message or name)
    if outcome.status is Status.WARNED:
        _log.warning("%s", outcome.message)
    return outcome


def value(name: str, env: Mapping[str, str] | None = None) -> object:
    """The resolved value of `name` (the default when unset or, for a warning, when unusable)."""
    return resolve(name, env).value
