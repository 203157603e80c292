"""`localhost` is loopback only while this machine resolves it to loopback and nothing else.

A hostile or careless /etc/hosts (``localhost`` → a LAN address) must turn an http://localhost URL into a
refusal, not into cleartext to another machine. The resolver's answer is simulated at the socket layer.
"""

from __future__ import annotations

import socket

import pytest
from undercroft_net import TransportRefused, police
from undercroft_net import policy as policy_module


def _resolver(*addresses: str):  # type: ignore[no-untyped-def]
    def getaddrinfo(host: str, port: int, *args: object, **kwargs: object) -> list[tuple[object, ...]]:
        assert host == "localhost"
        return [
            (socket.AF_INET6 if ":" in a else socket.AF_INET, socket.SOCK_STREAM, 6, "", (a, port)) for a in addresses
        ]

    return getaddrinfo


@pytest.mark.parametrize("answers", [("10.0.0.5",), ("127.0.0.1", "192.168.1.9"), ("::1", "fe80::1"), ()])
def test_localhost_that_resolves_elsewhere_is_refused(
    monkeypatch: pytest.MonkeyPatch, answers: tuple[str, ...]
) -> None:
    monkeypatch.setattr(policy_module.socket, "getaddrinfo", _resolver(*answers))
    with pytest.raises(TransportRefused, match="'localhost' does not resolve to loopback"):
        police("http://localhost:8080/v1", variable="UNDERCROFT_OTLP_ENDPOINT")


@pytest.mark.parametrize("answers", [("127.0.0.1",), ("::1", "127.0.0.1")])
def test_localhost_that_resolves_to_loopback_only_is_accepted(
    monkeypatch: pytest.MonkeyPatch, answers: tuple[str, ...]
) -> None:
    monkeypatch.setattr(policy_module.socket, "getaddrinfo", _resolver(*answers))
    endpoint = police("http://localhost:8080/v1", variable="UNDERCROFT_OTLP_ENDPOINT")
    assert endpoint.loopback and endpoint.scheme == "http"
