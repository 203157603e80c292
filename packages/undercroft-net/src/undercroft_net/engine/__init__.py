"""The typed /v1 client of an Undercroft engine: calls, clients, results, the assertion, the error classes.

``import undercroft_net.engine`` loads httpx (the clients); the envelope and the policy do not need it.
"""

from __future__ import annotations

from undercroft_net.engine.assertion import ASSERTION_HEADER, assertion_mac, mint_assertion
from undercroft_net.engine.calls import Call, EngineCalls
from undercroft_net.engine.clients import AsyncUndercroftClient, UndercroftClient
from undercroft_net.engine.models import Hit, SearchResult, VaultCreated, VerifyReport, WriteOutcome

__all__ = [
    "ASSERTION_HEADER",
    "AsyncUndercroftClient",
    "Call",
    "EngineCalls",
    "Hit",
    "SearchResult",
    "UndercroftClient",
    "VaultCreated",
    "VerifyReport",
    "WriteOutcome",
    "assertion_mac",
    "mint_assertion",
]
