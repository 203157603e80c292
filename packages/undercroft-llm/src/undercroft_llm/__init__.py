"""Undercroft's served-model roles: the http embedder, refine's extractor and the admission advisor.

Every request leaves through undercroft_net's policed client, built from an Endpoint the transport policy
accepted; nothing here reads the environment (the CLI's composition root resolves the declarations).
"""

from undercroft_llm.advisor import ADVISOR_SYSTEM, AdmissionAdvisor, parse_verdict
from undercroft_llm.embedder import EMBED_APIS, PROBE_TEXT, HttpEmbedder
from undercroft_llm.errors import EndpointUnusable, Error, MalformedAnswer, ModelCallFailed
from undercroft_llm.grounding import Grounded, ground
from undercroft_llm.refine import REFINE_SYSTEM, Distilled, Extraction, Extractor, parse_facts
from undercroft_llm.runtime import LLM_APIS, ChatModel

__version__ = "0.1.0"

__all__ = [
    "ADVISOR_SYSTEM",
    "EMBED_APIS",
    "LLM_APIS",
    "PROBE_TEXT",
    "REFINE_SYSTEM",
    "AdmissionAdvisor",
    "ChatModel",
    "Distilled",
    "EndpointUnusable",
    "Error",
    "Extraction",
    "Extractor",
    "Grounded",
    "HttpEmbedder",
    "MalformedAnswer",
    "ModelCallFailed",
    "__version__",
    "ground",
    "parse_facts",
    "parse_verdict",
]
