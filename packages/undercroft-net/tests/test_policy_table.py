"""The transport policy as a table: every URL, pin and redirect with its verdict.

A verdict is either ``OK`` (the policy accepts and these are the host, port and loopback flag it ruled on) or a
fragment of the refusal's rule. Every refusal must also name the declaring variable.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from undercroft_net import CaPin, TransportRefused, load_pin, police, police_redirect

VAR = "UNDERCROFT_TEST_URL"
CLEAR = "cleartext http is allowed only to loopback"
USERINFO = "userinfo is refused"
SCHEME = "the scheme must be https"
NUMERIC = "canonical dotted-quad"

# (url, verdict): verdict is (host, port, loopback) when accepted, else a fragment of the rule.
URLS: list[tuple[str, tuple[str, int, bool] | str]] = [
    # https: any host
    ("https://example.com", ("example.com", 443, False)),
    ("https://example.com:8443/v1/embed?x=1", ("example.com", 8443, False)),
    ("HTTPS://EXAMPLE.COM/", ("example.com", 443, False)),
    ("https://10.0.0.7:6333", ("10.0.0.7", 6333, False)),
    ("https://[2001:db8::1]:443/", ("2001:db8::1", 443, False)),
    ("https://qdrant_tls:6333", ("qdrant_tls", 6333, False)),
    ("https://xn--bcher-kva.de/", ("xn--bcher-kva.de", 443, False)),  # punycode host, over TLS
    ("https://[::ffff:127.0.0.1]/", ("::ffff:127.0.0.1", 443, False)),
    # http: loopback named as such
    ("http://127.0.0.1:11434", ("127.0.0.1", 11434, True)),
    ("http://127.0.0.1", ("127.0.0.1", 80, True)),
    ("http://127.255.255.254:9/", ("127.255.255.254", 9, True)),
    ("http://127.8.9.10/", ("127.8.9.10", 80, True)),
    ("HTTP://127.0.0.1:8080/api", ("127.0.0.1", 8080, True)),
    ("http://[::1]:8080/", ("::1", 8080, True)),
    ("http://[0:0:0:0:0:0:0:1]/", ("0:0:0:0:0:0:0:1", 80, True)),
    ("http://[::0001]/", ("::0001", 80, True)),
    ("http://localhost:11434", ("localhost", 11434, True)),
    ("http://LOCALHOST:11434", ("localhost", 11434, True)),
    # http: anything else refused
    ("http://example.com", CLEAR),
    ("http://10.0.0.7:6333", CLEAR),
    ("http://192.168.1.10/", CLEAR),
    ("http://localhost./", CLEAR),  # the FQDN is a DNS name, not the loopback name
    ("http://foo.localhost/", CLEAR),
    ("http://localhost.example.com/", CLEAR),
    ("http://127.0.0.1.nip.io/", CLEAR),  # resolves to loopback, is not named loopback
    ("http://[::ffff:127.0.0.1]/", CLEAR),  # IPv4-mapped is not one of the loopback forms
    ("http://[::2]/", CLEAR),
    ("http://xn--lcalhost-6vf/", CLEAR),  # punycode look-alike of localhost (Cyrillic o)
    ("http://xn--bcher-kva.de/", CLEAR),
    # unspecified addresses: a bind address, never a destination
    ("http://0.0.0.0:8080/", "unspecified address"),
    ("https://0.0.0.0/", "unspecified address"),
    ("http://[::]/", "unspecified address"),
    ("https://[::ffff:0.0.0.0]/", "unspecified address"),
    # userinfo tricks
    ("http://127.0.0.1@evil.com/", USERINFO),
    ("http://evil.com@127.0.0.1/", USERINFO),
    ("https://user:secret@example.com/", USERINFO),
    ("http://127.0.0.1:80@evil.com/", USERINFO),
    ("http://127.0.0.1\\@evil.com/", "backslash"),
    # numeric spellings resolvers disagree about
    ("http://127.1/", NUMERIC),
    ("http://2130706433/", NUMERIC),
    ("http://0x7f.0.0.1/", NUMERIC),
    ("http://0177.0.0.1/", NUMERIC),
    ("http://127.000.000.001/", NUMERIC),
    ("https://1.2.3/", NUMERIC),
    # schemes
    ("ftp://127.0.0.1/", SCHEME),
    ("file:///etc/passwd", SCHEME),
    ("ws://127.0.0.1/", SCHEME),
    ("wss://example.com/", SCHEME),
    ("unix:///run/x.sock", SCHEME),
    ("127.0.0.1:8080", SCHEME),
    ("//example.com/", SCHEME),
    ("https:example.com", "must be absolute"),
    # hosts and ports
    ("http://", "names no host"),
    ("https:///path", "names no host"),
    ("http://:8080/", "names no host"),
    ("http://127.0.0.1:0/", "port 0"),
    ("http://127.0.0.1:65536/", "the port is not a number"),
    ("http://127.0.0.1:http/", "the port is not a number"),
    ("https://exa%6Dple.com/", "percent-encoding"),
    ("http://[fe80::1%25eth0]/", "percent-encoding"),
    ("https://bücher.de/", "non-ASCII"),
    ("http://１２７.０.０.１/", "non-ASCII"),  # fullwidth digits: NFKC would make them loopback
    ("http://127.0.0.1 /", "whitespace"),
    ("http://127.0.0.1/\r\nHost: evil", "whitespace"),
    ("http://127.0.0.1\t/", "whitespace"),
    ("", "empty"),
    ("https://exa_mple-.com/", "not a valid DNS name"),
    ("https://a..b/", "not a valid DNS name"),
    ("https://127.0.0.1]/", "does not parse"),
    ("http://[127.0.0.1]/", "does not parse"),
]


def test_the_table_is_at_least_forty_rows() -> None:
    assert len(URLS) >= 40


@pytest.mark.parametrize(("url", "verdict"), URLS)
def test_url_verdict(url: str, verdict: tuple[str, int, bool] | str) -> None:
    if isinstance(verdict, tuple):
        endpoint = police(url, variable=VAR)
        assert (endpoint.host, endpoint.port, endpoint.loopback) == verdict
        assert endpoint.variable == VAR
        assert police(endpoint.url, variable=VAR) == endpoint  # the normal form is a fixed point
    else:
        with pytest.raises(TransportRefused) as caught:
            police(url, variable=VAR)
        assert verdict in caught.value.rule, caught.value.rule
        assert str(caught.value).startswith(f"{VAR}: refused ")
        assert caught.value.variable == VAR


def test_a_refusal_never_echoes_a_password() -> None:
    with pytest.raises(TransportRefused) as caught:
        police("https://admin:hunter2@example.com/", variable=VAR)
    assert "hunter2" not in str(caught.value)
    assert "***@example.com" in str(caught.value)


def test_the_variable_name_is_required() -> None:
    with pytest.raises(TypeError):
        police("https://example.com", variable="")


# ---------------------------------------------------------------------------------------------------------------
# CA pins
# ---------------------------------------------------------------------------------------------------------------

PIN_VAR = "UNDERCROFT_TEST_CA"


def _pins(pem: bytes, key_pem: bytes, other_pem: bytes) -> list[tuple[str, bytes | None, int | str]]:
    """(name, file bytes or None for a missing file, certificate count or a fragment of the refusal)."""
    body = pem.decode().splitlines()
    return [
        ("one root", pem, 1),
        ("two roots in one file", pem + other_pem, 2),
        ("a bundle with comments between blocks", b"# Issuer: test\n" + pem + b"\n# another\n" + other_pem, 2),
        ("CRLF line endings", pem.replace(b"\n", b"\r\n"), 1),
        ("an empty file", b"", "pins nothing"),
        ("text with no certificate", b"just some words\n", "pins nothing"),
        ("binary garbage", bytes(range(256)), "non-ASCII"),
        ("a private key alone", key_pem, "not a CERTIFICATE"),
        ("a root followed by its private key", pem + key_pem, "not a CERTIFICATE"),
        (
            "garbage inside the armour",
            b"-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n",
            "does not parse",
        ),
        ("bad base64", b"-----BEGIN CERTIFICATE-----\n!!!!\n-----END CERTIFICATE-----\n", "not valid base64"),
        ("an unterminated block", "\n".join(body[:-1]).encode(), "unterminated"),
        ("mismatched armour", pem.replace(b"END CERTIFICATE", b"END X509 CRL"), "not a CERTIFICATE"),
        ("a missing file", None, "cannot be read"),
    ]


def test_pin_table(tmp_path: Path, authority, other_authority) -> None:  # type: ignore[no-untyped-def]
    rows = _pins(authority.pem(), authority.key_pem(), other_authority.pem())
    assert len(rows) >= 10
    for number, (name, content, verdict) in enumerate(rows):
        path = tmp_path / f"pin{number}.crt"
        if content is not None:
            path.write_bytes(content)
        if isinstance(verdict, int):
            pin = load_pin(path, variable=PIN_VAR)
            assert isinstance(pin, CaPin) and pin.count == verdict, name
        else:
            with pytest.raises(TransportRefused) as caught:
                load_pin(path, variable=PIN_VAR)
            assert verdict in caught.value.rule, (name, caught.value.rule)
            assert caught.value.variable == PIN_VAR, name


def test_a_pin_on_a_cleartext_url_refuses(pin_file: Path) -> None:
    pin = load_pin(pin_file, variable=PIN_VAR)
    with pytest.raises(TransportRefused, match="would protect nothing"):
        police("http://127.0.0.1:8080", variable=VAR, pin=pin)
    assert police("https://127.0.0.1:8443", variable=VAR, pin=pin).pin is pin


# ---------------------------------------------------------------------------------------------------------------
# Redirects
# ---------------------------------------------------------------------------------------------------------------

REDIRECTS: list[tuple[str, str, str | None]] = [
    ("https://example.com/a", "https://example.com/b", None),
    ("https://example.com/a", "https://other.example.org/b", None),
    ("http://127.0.0.1:8080/a", "http://127.0.0.1:8080/b", None),
    ("http://127.0.0.1:8080/a", "https://example.com/b", None),
    ("https://example.com/a", "http://example.com/b", CLEAR),
    ("https://example.com/a", "http://127.0.0.1/b", "may not downgrade"),  # a remote host steering us inward
    ("https://127.0.0.1/a", "http://localhost/b", "may not downgrade"),
    ("http://127.0.0.1:8080/a", "http://evil.com/b", CLEAR),
    ("http://127.0.0.1:8080/a", "http://127.0.0.1@evil.com/b", USERINFO),
    ("https://example.com/a", "ftp://example.com/b", SCHEME),
    ("https://example.com/a", "https://0.0.0.0/b", "unspecified address"),
]


@pytest.mark.parametrize(("origin", "location", "verdict"), REDIRECTS)
def test_redirect_verdict(origin: str, location: str, verdict: str | None) -> None:
    endpoint = police(origin, variable=VAR)
    if verdict is None:
        assert police_redirect(endpoint, location).variable == VAR
    else:
        with pytest.raises(TransportRefused) as caught:
            police_redirect(endpoint, location)
        assert verdict in caught.value.rule
        assert caught.value.variable == VAR


def test_a_redirect_keeps_the_pin(pin_file: Path) -> None:
    pin = load_pin(pin_file, variable=PIN_VAR)
    endpoint = police("https://127.0.0.1:8443", variable=VAR, pin=pin)
    assert police_redirect(endpoint, "https://localhost:9443/x").pin is pin


def test_nothing_in_the_environment_widens_the_rule(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in ("UNDERCROFT_ALLOW_HTTP", "UNDERCROFT_INSECURE", "HTTP_PROXY", "NO_PROXY", "SSL_CERT_FILE"):
        monkeypatch.setenv(name, "1")
    with pytest.raises(TransportRefused):
        police("http://example.com", variable=VAR)


# ---------------------------------------------------------------------------------------------------------------
# The policy's parser and httpx's agree on every URL the policy accepts.
# ---------------------------------------------------------------------------------------------------------------

import httpx  # noqa: E402
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

PIECES = [
    "http",
    "https",
    "HTTP",
    "ftp",
    "://",
    ":/",
    "//",
    "/",
    "\\",
    "@",
    ":",
    "#",
    "?",
    "%",
    "%40",
    "[",
    "]",
    ".",
    "127.0.0.1",
    "127.1",
    "::1",
    "::ffff:127.0.0.1",
    "0.0.0.0",
    "localhost",
    "localhost.",
    "evil.com",
    "xn--lcalhost-6vf",
    "user",
    "pw",
    "8080",
    "0",
    "65536",
    " ",
    "\t",
    "\n",
    "\u200b",
    "１",
    "é",
    "a",
]
AUTHORITY_PIECES = [
    "127.0.0.1",
    "[::1]",
    "[::ffff:127.0.0.1]",
    "localhost",
    "LOCALHOST",
    "evil.com",
    "a",
    "xn--lcalhost-6vf",
    ":8080",
    ":",
    "@",
    ".",
    "[",
    "]",
    "%40",
    "0.0.0.0",
    "\\",
    "１",
    "127.1",
]
TAIL_PIECES = ["/", "?", "#", "@evil.com", "@", "\\", "/x", ":80", "%2F", "//evil.com"]
SHAPED = st.tuples(
    st.sampled_from(["http://", "https://", "HTTP://", "HTTPS://"]),
    st.lists(st.sampled_from(AUTHORITY_PIECES), min_size=1, max_size=4).map("".join),
    st.lists(st.sampled_from(TAIL_PIECES), max_size=3).map("".join),
).map("".join)
URL_TEXT = st.one_of(SHAPED, st.lists(st.sampled_from(PIECES), min_size=1, max_size=10).map("".join))


@settings(max_examples=1500, deadline=None)
@given(URL_TEXT)
def test_an_accepted_url_is_tls_or_loopback_as_httpx_reads_it(url: str) -> None:
    try:
        endpoint = police(url, variable=VAR)
    except TransportRefused:
        return
    for spelling in (url, endpoint.url):
        parsed = httpx.URL(spelling)
        assert parsed.raw_host.decode("ascii").lower() == endpoint.host, (spelling, parsed.raw_host, endpoint.host)
        assert parsed.scheme == endpoint.scheme
        assert (parsed.port or {"http": 80, "https": 443}[parsed.scheme]) == endpoint.port
        assert parsed.userinfo == b""
    assert endpoint.scheme == "https" or endpoint.loopback


@pytest.mark.parametrize(
    ("url", "host"),
    [
        ("http://127.0.0.1:8080/@evil.com", "127.0.0.1"),
        ("http://127.0.0.1?@evil.com", "127.0.0.1"),
        ("http://127.0.0.1#@evil.com", "127.0.0.1"),
        ("http://evil.com#@127.0.0.1", None),
        ("http://evil.com?@127.0.0.1", None),
        ("http://127.0.0.1./", None),
        ("http://[::1]x/", None),
    ],
)
def test_where_the_host_ends(url: str, host: str | None) -> None:
    if host is None:
        with pytest.raises(TransportRefused):
            police(url, variable=VAR)
    else:
        assert police(url, variable=VAR).host == host == httpx.URL(url).host
