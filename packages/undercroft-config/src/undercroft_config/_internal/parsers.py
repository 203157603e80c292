"""Parser factories: each returns `str -> value`, raising `Unparsable` with the reason a value is illegal."""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from enum import StrEnum
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

from undercroft_config._internal.pem import read_ca_pin
from undercroft_config.declaration import Adjusted
from undercroft_config.values import OFF, Address, CaPin, Rate, Secret, is_loopback_host

__all__ = [
    "Unparsable",
    "address",
    "ca_pin",
    "choice",
    "flag",
    "integer",
    "number",
    "opaque_list",
    "opaque_path",
    "opaque_text",
    "orchestrator_rate_limit",
    "outward_url",
    "pgvector_dsn",
    "presence",
    "rate",
    "secret",
]

_DIGITS = re.compile(r"[0-9]+\Z")
_DECIMAL = re.compile(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?\Z")


class Unparsable(Exception):
    """The value does not parse; `reason` says what is wrong with it."""

    def __init__(self, reason: str) -> None:
        """Keep the reason."""
        super().__init__(reason)
        self.reason = reason


def _is_off(raw: str) -> bool:
    return raw.strip().lower() == OFF


def _digits(raw: str) -> int:
    text = raw.strip()
    # int() would accept "1_000", "+5" and " 5 "; a declaration is plain decimal digits only.
    if not _DIGITS.match(text):
        raise Unparsable("not a plain decimal integer")
    return int(text)


def integer(minimum: int = 1, maximum: int | None = None, *, off: bool = False) -> Callable[[str], object]:
    """An integer in [minimum, maximum]; with `off`, the word off resolves to None."""

    def parse(raw: str) -> object:
        if off and _is_off(raw):
            return None
        value = _digits(raw)
        if value < minimum or (maximum is not None and value > maximum):
            bound = f"≥ {minimum}" if maximum is None else f"in {minimum}..={maximum}"
            raise Unparsable(f"{value} is out of range (must be {bound})")
        return value

    return parse


def _decimal(raw: str) -> float:
    text = raw.strip()
    if not _DECIMAL.match(text):
        raise Unparsable("not a decimal number")
    value = float(text)
    if not math.isfinite(value):
        raise Unparsable("not a finite number")
    return value


def number(
    low: float, high: float, *, clamp: bool = False, off: object = None, allow_off: bool = False
) -> Callable[[str], object]:
    """A decimal in [low, high]: out of range clamps (with a warning) when `clamp`, else is illegal."""

    def parse(raw: str) -> object:
        if allow_off and _is_off(raw):
            return off
        value = _decimal(raw)
        if low <= value <= high:
            return value
        if clamp:
            bounded = min(max(value, low), high)
            return Adjusted(bounded, f"{value} is outside {low:.2f}–{high:.2f}; clamped to {bounded:.2f}")
        raise Unparsable(f"{value} is outside {low}..={high}")

    return parse


def choice(enum: type[StrEnum], *, off: object = None, allow_off: bool = False) -> Callable[[str], object]:
    """One member of a closed vocabulary (case-insensitive); with `allow_off`, off resolves to `off`."""

    def parse(raw: str) -> object:
        text = raw.strip().lower()
        if allow_off and text == OFF:
            return off
        for member in enum:
            if member.value == text:
                return member
        raise Unparsable("not one of the legal values")

    return parse


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def flag(raw: str) -> object:
    """A boolean switch spelled 1/true/yes/on or 0/false/no/off."""
    text = raw.strip().lower()
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    raise Unparsable("not a boolean switch")


def presence(raw: str) -> object:
    """Any value at all, `0` and `off` included, turns the switch on."""
    return True


def opaque_text(raw: str) -> object:
    """Taken as declared."""
    return raw


def opaque_path(raw: str) -> object:
    """A filesystem path taken as declared (`~` expanded); nothing is opened."""
    return Path(raw).expanduser()


def opaque_list(raw: str) -> object:
    """A comma-separated list, blanks dropped."""
    return tuple(item.strip() for item in raw.split(",") if item.strip())


def secret(min_length: int = 1) -> Callable[[str], object]:
    """A credential, refused when empty, shorter than `min_length` or ending in whitespace (never trimmed)."""

    def parse(raw: str) -> object:
        if raw == "":
            raise Unparsable("empty: a declaration that names nothing")
        if raw != raw.rstrip():
            raise Unparsable(
                "ends in whitespace, which HTTP strips from a header value, so it could never be presented "
                "(strip it at the source, e.g. $(tr -d '\\n' < file))"
            )
        if len(raw) < min_length:
            raise Unparsable(f"{len(raw)} characters, shorter than the {min_length}-character floor")
        return Secret(raw)

    return parse


def outward_url(raw: str) -> object:
    """An outward URL: https to anywhere, or http to a loopback host only. No override exists."""
    text = raw.strip()
    if not text:
        raise Unparsable("empty: a declaration that names no endpoint")
    try:
        parts = urlsplit(text)
        host = parts.hostname
        parts.port  # noqa: B018 - property access validates the port
    except ValueError as error:
        raise Unparsable(f"not a URL ({error})") from None
    if parts.scheme not in ("http", "https") or not host:
        raise Unparsable("not an http(s) URL with a host")
    if parts.scheme == "http" and not is_loopback_host(host):
        raise Unparsable(f"cleartext http to the non-loopback host {host!r}; use https (no override exists)")
    return text


def pgvector_dsn(raw: str) -> object:
    """A libpq DSN (URL or key=value form); a non-loopback host must say sslmode=require or stricter."""
    text = raw.strip()
    if not text:
        raise Unparsable("empty: a declaration that names no database")
    if text.startswith(("postgres://", "postgresql://")):
        try:
            parts = urlsplit(text)
            host = parts.hostname or ""
        except ValueError as error:
            raise Unparsable(f"not a URL ({error})") from None
        sslmode = (parse_qs(parts.query).get("sslmode") or [""])[-1]
    elif "=" in text:
        fields = dict(item.split("=", 1) for item in text.split() if "=" in item)
        host, sslmode = fields.get("host", ""), fields.get("sslmode", "")
    else:
        raise Unparsable("neither a postgres:// URL nor a key=value DSN")
    # No host, or a socket directory, is a local Unix socket: no wire to protect.
    if host and not host.startswith("/") and not is_loopback_host(host):
        if sslmode not in ("require", "verify-ca", "verify-full"):
            raise Unparsable(f"the non-loopback host {host!r} needs sslmode=require (or verify-ca/verify-full)")
    return Secret(text)


def ca_pin(raw: str) -> object:
    """A readable PEM file holding at least one certificate; the ONLY trust roots for its client. off: None."""
    if _is_off(raw):
        return None
    if not raw.strip():
        raise Unparsable("empty: a pin that names no file")
    path = Path(raw).expanduser()
    try:
        count = read_ca_pin(path)
    except ValueError as error:
        raise Unparsable(str(error)) from None
    return CaPin(path, count)


def rate(raw: str) -> object:
    """`<count>/<seconds>`, both positive plain integers; off resolves to None."""
    if _is_off(raw):
        return None
    count_text, slash, seconds_text = raw.strip().partition("/")
    if not slash:
        raise Unparsable("not of the form <count>/<seconds>")
    count, seconds = _digits(count_text), _digits(seconds_text)
    if count < 1 or seconds < 1:
        raise Unparsable("count and seconds must both be ≥ 1")
    return Rate(count, seconds)


def address(raw: str) -> object:
    """`host:port` (`[v6]:port` for IPv6), port in 1..=65535."""
    text = raw.strip()
    if text.startswith("["):
        host, bracket, rest = text[1:].partition("]")
        if not bracket or not rest.startswith(":"):
            raise Unparsable("not of the form [host]:port")
        port_text = rest[1:]
    else:
        host, colon, port_text = text.rpartition(":")
        if not colon:
            raise Unparsable("not of the form host:port")
    if not host:
        raise Unparsable("no host")
    port = _digits(port_text)
    if not 1 <= port <= 65535:
        raise Unparsable(f"port {port} is outside 1..=65535")
    return Address(host, port)


def orchestrator_rate_limit(raw: str) -> object:
    """Requests per minute per tenant: a plain integer; 0 and off (and unset) mean no limit."""
    if _is_off(raw):
        return None
    value = _digits(raw)
    return value or None
