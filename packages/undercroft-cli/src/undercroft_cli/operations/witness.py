"""The external witness, emitted and checked: what ``undercroft witness emit|check`` and
``GET|POST /v1/vaults/{id}/witness`` do, said once (off MCP by the maintainer's ruling, O245).

Both are reads. ``emit`` answers ``{out, witness}``: the document (row count, the unkeyed digest over the rows'
preserved bytes, head and generation as corroboration) inline — and ``out`` names the file the CLI also wrote it
to (always ``null`` over /v1). Keep the document off this machine and send back ``witness`` as it stands.
``check`` answers ``{ok: true, verdict: "extends", writes_since, corroboration, signature}``; a vault rolled back
below the witness, or a witness naming another vault, raises the store's ``WitnessFailed`` (an integrity
verdict: exit 2, HTTP 409 with class integrity).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from undercroft_store.integrity.witness import WitnessVerdict, check_witness_document, emit_witness
from undercroft_store.store import VaultStore
from undercroft_vault import SigningIdentity

__all__ = ["check_record", "check_witness", "emit_document", "witness_record"]


def emit_document(store: VaultStore, *, signer: SigningIdentity | None = None) -> str:
    """The witness of the vault as it stands, as its JSON document (``signer`` signs it); the chain must replay
    first (its refusal is an integrity verdict)."""
    return emit_witness(store, signer=signer).to_json()


def witness_record(document: str, *, out: Path | None = None) -> dict[str, Any]:
    """``{out, witness}``: the document inline, and the file it was also written to (``null`` when none)."""
    return {"out": None if out is None else str(out), "witness": json.loads(document)}


def check_witness(store: VaultStore, document: bytes | str, *, sender: str | None = None) -> WitnessVerdict:
    """Check that this vault still extends ``document`` (``sender`` pins who must have signed it): the passing
    verdict; ``WitnessFailed`` otherwise."""
    return check_witness_document(store, document, pinned_sender=sender)


def check_record(verdict: WitnessVerdict) -> dict[str, Any]:
    """``{ok: true, verdict: "extends", writes_since, corroboration, signature}``: a passing check's record."""
    return {
        "ok": True,
        "verdict": "extends",
        "writes_since": verdict.writes_since,
        "corroboration": verdict.corroboration,
        "signature": verdict.signature,
    }
