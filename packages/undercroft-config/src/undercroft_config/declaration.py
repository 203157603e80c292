"""What one declaration is: its name, type, default, legal values, class and refuse-or-warn doctrine."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum

from undercroft_config.capabilities import Capability

__all__ = ["Adjusted", "Declaration", "DeclarationClass", "Doctrine", "Resolution", "Status"]


class DeclarationClass(StrEnum):
    """Whether a parse exists to run (validated) or the consumer is the only judge (opaque)."""

    VALIDATED = "validated"
    OPAQUE = "opaque"


class Doctrine(StrEnum):
    """What a value that does not parse does."""

    #: The default is conservative and the declaration merely adjusts it: warn and keep the default.
    WARN = "warn"
    #: The declaration turns a protection on, pins an outward path or names a vector space: refuse to start.
    REFUSE = "refuse"
    #: Presence-triggered switch: any value, even `0` or `off`, turns it on; unset it to turn it off.
    PRESENCE = "presence"
    #: Accepted as declared; validated by whatever consumes it.
    ACCEPT = "accept"


class Status(StrEnum):
    """The verdict on one variable of an environment."""

    UNSET = "unset"
    VALIDATED = "validated"
    ACCEPTED = "accepted"
    WARNED = "warned"
    REFUSED = "refused"
    UNKNOWN = "unknown"


@dataclass(frozen=True)
class Adjusted:
    """A parser's answer when it had to change what was declared (a clamp, a removed value): warns."""

    value: object
    message: str


@dataclass(frozen=True)
class Declaration:
    """One `UNDERCROFT_*` declaration and its resolver."""

    name: str
    #: Documentation section: core, models, retrieval, remote-index, server, llm, telemetry, orchestrator, bench.
    section: str
    #: The resolved value's type, in words (int, float, enum, path, rate, CA pin, URL, secret, …).
    type: str
    #: The default as documentation states it.
    default: str
    #: What is legal, in words; quoted in every warning and refusal.
    legal: str
    doctrine: Doctrine
    summary: str
    #: str -> value; raises `_internal.parsers.Unparsable` or returns `Adjusted`.
    parse: Callable[[str], object] = field(repr=False)
    #: The value when unset (or when a WARN declaration does not parse); may read other declarations.
    fallback: Callable[[Mapping[str, str]], object] = field(repr=False)
    #: A credential: messages describe its shape and never echo it.
    secret: bool = False
    #: How a raw value is shown in messages when it is not a secret but may carry one (a DSN password).
    display: Callable[[str], str] | None = field(default=None, repr=False)
    #: resolved value -> the capability it selects (None: nothing to select); a build lacking it refuses.
    requires: Callable[[object], Capability | None] = field(default=lambda _value: None, repr=False)
    #: What this declaration tunes that is not built yet (None: built). Such a value is validated and changes
    #: nothing; `config check` and start-up say so rather than let it read as applied.
    unbuilt: str | None = None

    @property
    def declaration_class(self) -> DeclarationClass:
        """Opaque for accepted and presence-triggered declarations, validated otherwise."""
        if self.doctrine in (Doctrine.ACCEPT, Doctrine.PRESENCE):
            return DeclarationClass.OPAQUE
        return DeclarationClass.VALIDATED

    def shown(self, raw: str) -> str:
        """The value as messages may show it."""
        if self.secret:
            tail = ", ends in whitespace" if raw != raw.rstrip() else ""
            return f"<{len(raw)} characters{tail}>"
        if self.display is not None:
            return self.display(raw)
        return repr(raw)


@dataclass(frozen=True)
class Resolution:
    """The outcome of running one declaration through its resolver."""

    name: str
    status: Status
    value: object
    #: The warning or refusal, naming the variable, the value read and what is legal; None when clean.
    message: str | None = None
    #: What was read (None when unset); kept out of repr because it may be a credential.
    raw: str | None = field(default=None, repr=False)
