"""The small helper the catalogue modules declare with."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from undercroft_config.declaration import Declaration, Doctrine

__all__ = ["constant", "declare"]


def constant(value: object) -> Callable[[Mapping[str, str]], object]:
    """A fallback that does not depend on the environment."""
    return lambda _env: value


def declare(
    name: str,
    section: str,
    type_: str,
    default: str,
    legal: str,
    doctrine: Doctrine,
    summary: str,
    parse: Callable[[str], object],
    fallback: Callable[[Mapping[str, str]], object] | None = None,
    *,
    secret: bool = False,
    display: Callable[[str], str] | None = None,
) -> Declaration:
    """Build one declaration; the fallback defaults to None (unset means absent)."""
    return Declaration(
        name=name,
        section=section,
        type=type_,
        default=default,
        legal=legal,
        doctrine=doctrine,
        summary=summary,
        parse=parse,
        fallback=fallback if fallback is not None else constant(None),
        secret=secret,
        display=display,
    )
