"""The small helper the catalogue modules declare with."""

from __future__ import annotations

from collections.abc import Callable, Mapping

from undercroft_config.capabilities import Capability
from undercroft_config.declaration import Declaration, Doctrine

__all__ = ["constant", "declare", "selects", "switches_on"]


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
    requires: Callable[[object], Capability | None] | None = None,
    unbuilt: str | None = None,
) -> Declaration:
    """Build one declaration; the fallback defaults to None (unset means absent), `requires` to nothing."""
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
        requires=requires if requires is not None else _nothing,
        unbuilt=unbuilt,
    )


def _nothing(_value: object) -> Capability | None:
    return None


def selects(prefix: str) -> Callable[[object], Capability | None]:
    """`requires` for a closed vocabulary: value `v` selects `<prefix>/v`; None (unset, off) selects nothing."""

    def requires(value: object) -> Capability | None:
        return None if value is None else Capability(f"{prefix}/{value}")

    return requires


def switches_on(capability: Capability) -> Callable[[object], Capability | None]:
    """`requires` for a declaration whose every declared value (not off, not false) turns `capability` on."""

    def requires(value: object) -> Capability | None:
        return None if value is None or value is False else capability

    return requires
