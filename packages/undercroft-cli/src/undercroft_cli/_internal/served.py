"""The served-model roles, composed from the environment: the http embedder, the LLM runtime, the advisor.

Every URL goes through undercroft_net's policy here, at construction: cleartext to a non-loopback host refuses
(no override), a ``*_CA`` pin replaces the public roots, a garbage pin refuses. A refusal is a run failure
(exit 1) naming the variable. ``undercroft_llm`` is imported inside these functions only, so a command that
uses no served model never loads it (or httpx).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Final

from undercroft_config import settings
from undercroft_config.settings import ServedEndpoint
from undercroft_net import Endpoint, TransportRefused, load_pin, police
from undercroft_store.governance.admission import Advice

from undercroft_cli.errors import Error

if TYPE_CHECKING:
    from undercroft_llm import AdmissionAdvisor, ChatModel, HttpEmbedder

__all__ = [
    "ADVISOR_TIMEOUT_SECONDS",
    "REFINE_TIMEOUT_SECONDS",
    "GateAdvisor",
    "ServedModelRefused",
    "build_advisor",
    "build_chat_model",
    "build_http_embedder",
]

#: How long one advisor consultation may take before it is a non-event (a write waits at most this long).
ADVISOR_TIMEOUT_SECONDS: Final = 10.0
#: How long one refine request may take (a local model distilling one note).
REFINE_TIMEOUT_SECONDS: Final = 120.0


class ServedModelRefused(Error):
    """A served model's declaration cannot be used: its URL, its pin, or the endpoint itself (exit 1)."""


def _endpoint(declared: ServedEndpoint, why: str) -> Endpoint:
    if declared.url is None:
        raise ServedModelRefused(f"{why} needs {declared.url_variable}: declare the served model's URL")
    try:
        pin = load_pin(declared.ca.path, variable=declared.ca_variable) if declared.ca is not None else None
        return police(declared.url, variable=declared.url_variable, pin=pin)
    except TransportRefused as refused:
        raise ServedModelRefused(str(refused)) from None


def build_http_embedder(env: Mapping[str, str]) -> HttpEmbedder:
    """``UNDERCROFT_EMBEDDER=http``: the served embedder ``UNDERCROFT_EMBED_*`` declares (probed now)."""
    from undercroft_llm import EndpointUnusable, HttpEmbedder

    declared = settings.embed_endpoint(env)
    endpoint = _endpoint(declared, "UNDERCROFT_EMBEDDER=http")
    try:
        return HttpEmbedder(
            endpoint,
            model=declared.model,
            api=declared.api,
            key=declared.key.reveal() if declared.key else None,
            dimension=declared.dimension,
        )
    except EndpointUnusable as error:
        raise ServedModelRefused(str(error)) from None


def build_chat_model(
    env: Mapping[str, str] | None = None, *, why: str, timeout: float = REFINE_TIMEOUT_SECONDS
) -> ChatModel:
    """The LLM runtime ``UNDERCROFT_LLM_*`` declares, probed (it answers and serves the model)."""
    from undercroft_llm import ChatModel, EndpointUnusable

    declared = settings.llm_endpoint(os.environ if env is None else env)
    endpoint = _endpoint(declared, why)
    try:
        model = ChatModel(
            endpoint,
            api=str(declared.api),
            model=str(declared.model),
            key=declared.key.reveal() if declared.key else None,
            timeout=timeout,
        )
        model.probe()
    except EndpointUnusable as error:
        raise ServedModelRefused(f"{why}: {error}") from None
    return model


class GateAdvisor:
    """The store's `Advisor` over undercroft_llm's: a failure raises (FAILED), a malformed answer is UNPARSEABLE."""

    def __init__(self, advisor: AdmissionAdvisor) -> None:
        """Wrap the served advisor."""
        self._advisor = advisor

    @property
    def destination(self) -> str:
        """The runtime's origin (what an ``egress/advise/dedup`` record names)."""
        return self._advisor.model.destination

    @property
    def identity(self) -> str:
        """``<api>:<model>`` of the runtime."""
        return self._advisor.model.identity

    def advise(self, content: str, *, wing: str, room: str) -> Advice | None:
        """``Advice.QUARANTINE`` or ``Advice.NO_OBJECTION``; None for an answer outside the schema."""
        from undercroft_llm import MalformedAnswer

        try:
            verdict = self._advisor.verdict(content, wing=wing, room=room)
        except MalformedAnswer:
            return None  # the gate counts it unparseable: a non-event
        return Advice.QUARANTINE if verdict == "quarantine" else Advice.NO_OBJECTION


def build_advisor(env: Mapping[str, str] | None = None, *, timeout: float = ADVISOR_TIMEOUT_SECONDS) -> GateAdvisor:
    """The tier-2 advisor (``UNDERCROFT_ADMISSION_LLM=advisory``); an unusable one refuses (the vault is not opened)."""
    from undercroft_llm import AdmissionAdvisor

    model = build_chat_model(env, why="UNDERCROFT_ADMISSION_LLM=advisory", timeout=timeout)
    return GateAdvisor(AdmissionAdvisor(model))
