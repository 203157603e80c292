"""``undercroft_check_erasure_receipt``: check a caller-supplied forgetting receipt against this vault.

A read (it mutates nothing), which is why it is on MCP while forgetting itself is operator-only. The verdict
is ``verified``, ``recorded`` (a key rotation destroyed the replay key: a narrower claim, not a tamper
verdict) or ``failed``.
"""

from __future__ import annotations

from undercroft_store.governance.forgetting import verify_forgetting

from undercroft_cli.mcp.arguments import Arguments
from undercroft_cli.mcp.tools.base import ToolSession, ToolSpec, string

__all__ = ["ERASURE_TOOLS"]


def _check(session: ToolSession, args: Arguments) -> str:
    verdict = verify_forgetting(session.store, args.required_text("attestation"), pinned_sender=args.text("sender"))
    return f"verdict: {verdict.status}\n{verdict.render()}"


ERASURE_TOOLS: tuple[ToolSpec, ...] = (
    ToolSpec(
        "undercroft_check_erasure_receipt",
        "Check an erasure receipt (the JSON document forget issued) against this vault: verified, recorded "
        "(a key rotation since: a narrower claim, not tampering) or failed.",
        {"attestation": string("the receipt document, as JSON"), "sender": string("pin the signer (hex)")},
        _check,
        required=("attestation",),
    ),
)
