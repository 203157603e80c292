"""The outbound transport policy: TLS to any host, cleartext only to loopback, CA pins replace the public roots.

Every outward URL of the code base (served embedder, LLM, OTLP collector, remote indexes, the orchestrator's
hop to its engines) passes :func:`police` when its client is constructed, so a bad declaration refuses while
the operator who typed it is still there — not at the first request. There is no environment variable, flag
or argument that weakens the rule; the only inputs are the URL, the name of the variable that declared it
(for the message) and an optional CA pin, which can only narrow what is trusted.

The rule, exactly:

* ``https`` to any host; ``http`` only to loopback. Loopback is *named*, never resolved: a dotted-quad IPv4
  literal in 127.0.0.0/8, the IPv6 literal ``::1`` (any spelling of it), or the name ``localhost`` — and
  ``localhost`` only when this machine resolves it to loopback and nothing else. A hostname that happens to
  resolve to 127.0.0.1 is not loopback; neither are ``localhost.``, ``*.localhost``, ``0.0.0.0`` nor the
  IPv4-mapped ``::ffff:127.0.0.1``.
* Refused for every scheme: userinfo (``http://127.0.0.1@evil.com`` is a request to ``evil.com``, and a
  password in a URL ends up in logs), an empty host, an unspecified address (``0.0.0.0``, ``::``), a numeric
  host that is not a canonical dotted quad (``127.1``, ``2130706433``, ``0x7f.0.0.1``: resolvers disagree on
  them), a non-ASCII host (declare the ``xn--`` form: no homograph or normalisation ever decides the verdict),
  whitespace, control characters, backslashes, percent signs in the host, and port 0.
* A CA pin (:func:`load_pin`) is a PEM file whose certificates become the ONLY roots: a file that pins
  nothing (no certificate), garbage, or a non-certificate block (a private key) refuses. A pin declared for a
  cleartext URL refuses too: it would protect nothing, and the operator asked for protection.
* A redirect is policed like a declaration (:func:`police_redirect`), and it never downgrades https to http.
"""

from __future__ import annotations

import binascii
import ipaddress
import re
import socket
import ssl
from dataclasses import dataclass, field
from pathlib import Path
from typing import NoReturn
from urllib.parse import SplitResult, urlsplit

import certifi

from undercroft_net.errors import TransportRefused

__all__ = ["CaPin", "Endpoint", "is_loopback_host", "load_pin", "police", "police_redirect", "ssl_context"]

_SCHEMES = {"http": 80, "https": 443}
_IPV4_LOOPBACK = ipaddress.IPv4Network("127.0.0.0/8")
_IPV6_LOOPBACK = ipaddress.IPv6Address("::1")
_LABEL = re.compile(r"[a-z0-9_](?:[a-z0-9_-]{0,61}[a-z0-9_])?")
_NUMERIC_LABEL = re.compile(r"[0-9]+|0x[0-9a-f]*")
_AUTHORITY = re.compile(r"(?P<host>\[[^\[\]]*\]|[^\[\]:]*)(?::(?P<port>.*))?", re.S)
_PEM_BLOCK = re.compile(r"-----BEGIN ([A-Z0-9 ]+)-----(.*?)-----END ([A-Z0-9 ]+)-----", re.S)
_PIN_MAX_BYTES = 1 << 20

RULE_SCHEME = "the scheme must be https, or http to loopback (127.0.0.0/8, ::1, localhost); there is no override"
RULE_CLEARTEXT = (
    "cleartext http is allowed only to loopback (127.0.0.0/8, ::1, localhost named as such); use https — "
    "there is no override"
)


@dataclass(frozen=True)
class CaPin:
    """A loaded CA pin: the certificates (DER) that replace the public roots for one outward path."""

    variable: str
    path: Path
    certificates: tuple[bytes, ...] = field(repr=False)

    @property
    def count(self) -> int:
        """How many certificates the pin holds (at least one, or it would not have loaded)."""
        return len(self.certificates)


@dataclass(frozen=True)
class Endpoint:
    """A URL the policy accepted: normalised, with the variable it came from and the pin that governs it.

    Only :func:`police` makes one that means anything; the clients of :mod:`undercroft_net.client` re-police
    it at construction and police every request they send, so a hand-built ``Endpoint`` gains nothing.
    """

    variable: str
    url: str
    scheme: str
    host: str
    port: int
    loopback: bool
    pin: CaPin | None = None

    @property
    def origin(self) -> str:
        """``scheme://host:port`` (IPv6 in brackets), the part of the URL the policy ruled on."""
        return f"{self.scheme}://{_url_host(self.host)}:{self.port}"


def _redact(url: str) -> str:
    """The URL for a message: any userinfo (it may hold a password) replaced by ``***``."""
    scheme, sep, rest = url.partition("://")
    if not sep:
        return url
    authority, slash, tail = rest.partition("/")
    if "@" in authority:
        authority = "***@" + authority.rsplit("@", 1)[1]
    return f"{scheme}{sep}{authority}{slash}{tail}"


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def _address(host: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    try:
        return ipaddress.ip_address(host)
    except ValueError:
        return None


def is_loopback_host(host: str) -> bool:
    """True for a loopback host named as such: a dotted-quad IPv4 literal in 127.0.0.0/8, ``::1``, ``localhost``.

    ``host`` is as a URL parser hands it over (lower-cased, IPv6 without brackets). Nothing is resolved here:
    ``localhost`` is checked against this machine's resolver by :func:`police`.
    """
    if host == "localhost":
        return True
    address = _address(host)
    if isinstance(address, ipaddress.IPv4Address):
        return address in _IPV4_LOOPBACK
    if isinstance(address, ipaddress.IPv6Address):
        return address == _IPV6_LOOPBACK and address.scope_id is None
    return False


def _localhost_is_loopback_only(port: int) -> bool:
    """Whether this machine resolves ``localhost`` to loopback addresses and nothing else (normally /etc/hosts)."""
    try:
        answers = socket.getaddrinfo("localhost", port, type=socket.SOCK_STREAM)
    except OSError:
        return False
    addresses = [_address(str(answer[4][0]).split("%", 1)[0]) for answer in answers]
    return bool(addresses) and all(
        a is not None and (a in _IPV4_LOOPBACK if isinstance(a, ipaddress.IPv4Address) else a == _IPV6_LOOPBACK)
        for a in addresses
    )


def _check_host(host: str, refuse: _Refuser) -> None:
    if host == "":
        refuse("the URL names no host")
    if "%" in host:
        refuse("a host may not carry percent-encoding or an IPv6 zone id")
    address = _address(host)
    if address is not None:
        mapped = address.ipv4_mapped if isinstance(address, ipaddress.IPv6Address) else None
        if address.is_unspecified or (mapped is not None and mapped.is_unspecified):
            refuse("an unspecified address (0.0.0.0, ::) is a bind address, not a destination")
        return
    if ":" in host:
        refuse("the host is not a valid IPv6 literal")
    name = host[:-1] if host.endswith(".") else host
    labels = name.split(".")
    if len(name) > 253 or not all(_LABEL.fullmatch(label) for label in labels):
        refuse("the host is not a valid DNS name (ASCII letters, digits, '-', '_'; declare IDNs in xn-- form)")
    if _NUMERIC_LABEL.fullmatch(labels[-1]):
        refuse("a numeric host must be a canonical dotted-quad IPv4 address (127.1, 2130706433 and 0x7f… are not)")


class _Refuser:
    """Raises the refusal for one declaration, so every check names the same variable and redacted value."""

    def __init__(self, variable: str, url: str) -> None:
        self.variable = variable
        self.value = _redact(url)

    def __call__(self, rule: str) -> NoReturn:
        raise TransportRefused(self.variable, self.value, rule)


def _split(url: str, refuse: _Refuser) -> SplitResult:
    if not isinstance(url, str):
        refuse(f"the URL must be a string, got {type(url).__name__}")
    if url == "":
        refuse("the URL is empty")
    if any(not ("\x21" <= ch <= "\x7e") for ch in url):
        refuse("the URL holds whitespace, a control or a non-ASCII character (percent-encode it; IDNs in xn-- form)")
    if "\\" in url:
        refuse("the URL holds a backslash (parsers disagree about where its host ends)")
    try:
        parts = urlsplit(url)
    except ValueError as error:
        refuse(f"the URL does not parse ({error})")
    if parts.scheme not in _SCHEMES:
        refuse(RULE_SCHEME + f" (got scheme {parts.scheme or 'none'!r})")
    if not url.lower().startswith(parts.scheme + "://"):
        refuse("the URL must be absolute: scheme://host[:port][/path]")
    if "@" in parts.netloc:
        refuse("userinfo is refused: the URL would reach the host after '@', and a password in a URL leaks to logs")
    authority = _AUTHORITY.fullmatch(parts.netloc)
    if authority is None:
        refuse("the host is malformed (a stray bracket or colon: an IPv6 host is written [addr]:port)")
    if authority.group("port") is not None and not authority.group("port").isdigit():
        refuse("the port is not a number in 1..65535")
    return parts


def police(url: str, *, variable: str, pin: CaPin | None = None) -> Endpoint:
    """The one door for an outward URL: accept it as an :class:`Endpoint`, or raise :class:`TransportRefused`.

    ``variable`` names the declaration (``UNDERCROFT_LLM_URL``) so the message tells the operator what to fix;
    ``pin`` is the loaded ``*_CA`` of that path, if one is declared. Nothing here can widen the rule.
    """
    if not isinstance(variable, str) or variable == "":
        raise TypeError("police() needs the name of the variable that declared the URL")
    refuse = _Refuser(variable, url)
    parts = _split(url, refuse)
    host = parts.hostname or ""
    if parts.netloc.startswith("[") != (":" in host):
        refuse("an IPv6 host must be written in brackets, and only an IPv6 host may be")
    _check_host(host, refuse)
    try:
        port = parts.port
    except ValueError:
        refuse("the port is not a number in 1..65535")
    if port == 0:
        refuse("port 0 is not a destination")
    port = port or _SCHEMES[parts.scheme]
    loopback = is_loopback_host(host)
    if parts.scheme == "http":
        if not loopback:
            refuse(RULE_CLEARTEXT)
        if pin is not None:
            refuse(f"{pin.variable} pins a CA for a cleartext URL: the pin would protect nothing; use https")
    if host == "localhost" and not _localhost_is_loopback_only(port):
        refuse("'localhost' does not resolve to loopback and nothing else on this machine; use 127.0.0.1 or ::1")
    tail = parts.path + (f"?{parts.query}" if parts.query else "")
    normalised = f"{parts.scheme}://{_url_host(host)}:{port}{tail}"
    return Endpoint(variable, normalised, parts.scheme, host, port, loopback, pin)


def police_redirect(endpoint: Endpoint, location: str) -> Endpoint:
    """Police a redirect target reached from ``endpoint``: the same rule and pin, and never an https→http step.

    ``location`` must be absolute (resolve a relative ``Location`` against the request URL first).
    """
    target = police(location, variable=endpoint.variable, pin=endpoint.pin)
    if endpoint.scheme == "https" and target.scheme != "https":
        raise TransportRefused(endpoint.variable, _redact(location), "a redirect may not downgrade https to http")
    return target


def load_pin(path: str | Path, *, variable: str) -> CaPin:
    """Load a ``*_CA`` pin: a PEM file of one or more CERTIFICATE blocks, which become the ONLY trust roots.

    Refuses (naming ``variable``) a missing or unreadable file, a file with no certificate, a block that is not
    a certificate (a private key has no business in a pin), bad base64, or a certificate OpenSSL cannot parse.
    Text outside the blocks (comments, as in most CA bundles) is allowed.
    """
    location = Path(path)
    refuse = _Refuser(variable, str(location))
    try:
        raw = location.read_bytes()
    except OSError as error:
        refuse(f"the CA pin file cannot be read ({error.strerror or error})")
    if len(raw) > _PIN_MAX_BYTES:
        refuse(f"the CA pin file is larger than {_PIN_MAX_BYTES} bytes")
    try:
        text = raw.decode("ascii")
    except UnicodeDecodeError:
        refuse("the CA pin file is not PEM text (it holds non-ASCII bytes)")
    blocks = _PEM_BLOCK.findall(text)
    if text.count("-----BEGIN ") != len(blocks):
        refuse("the CA pin file holds an unterminated or malformed PEM block")
    if not blocks:
        refuse("the CA pin file pins nothing: it holds no CERTIFICATE block")
    certificates: list[bytes] = []
    for number, (label, body, end) in enumerate(blocks, start=1):
        if label != "CERTIFICATE" or end != label:
            refuse(f"PEM block {number} is {label!r}, not a CERTIFICATE: a pin holds public certificates only")
        try:
            der = binascii.a2b_base64("".join(body.split()), strict_mode=True)
        except binascii.Error:
            refuse(f"certificate {number} is not valid base64")
        try:
            ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT).load_verify_locations(cadata=der)
        except ssl.SSLError:
            refuse(f"certificate {number} does not parse as an X.509 certificate")
        certificates.append(der)
    return CaPin(variable, location, tuple(certificates))


def ssl_context(pin: CaPin | None) -> ssl.SSLContext:
    """A verifying TLS client context: the pin's certificates as the only roots, else certifi's public roots.

    Built from nothing the environment can reach: not ``SSL_CERT_FILE``/``SSL_CERT_DIR`` (the system default
    paths are never loaded) and not ``SSLKEYLOGFILE`` (no session secret is ever written out). Hostname checks
    and certificate verification are on, TLS 1.2 is the floor.
    """
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.check_hostname = True
    context.verify_mode = ssl.CERT_REQUIRED
    if pin is None:
        context.load_verify_locations(cafile=certifi.where())
    else:
        for der in pin.certificates:
            context.load_verify_locations(cadata=der)
    return context
