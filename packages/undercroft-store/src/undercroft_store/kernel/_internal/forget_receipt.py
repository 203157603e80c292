"""The forget receipt's document form: the body the chain binds, its label, JSON in and out.

The body is what the ``forget/<sha256(body)>`` audit label names, so a receipt whose body was edited
names a label the chain never held — checkable without the vault key, which is what keeps a receipt
checkable after a rotation destroyed the key its tags were made under.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from typing import Any

from undercroft_core.errors import InvalidInput
from undercroft_core.ids import validate_drawer_id

from undercroft_store.errors import Error

__all__ = [
    "FORGET_LABEL_PREFIX",
    "RECEIPT_FORMAT",
    "ForgottenDrawer",
    "InvalidReceipt",
    "ReceiptBody",
    "parse_receipt",
]

#: The ``format`` field of every forget receipt this build writes and reads.
RECEIPT_FORMAT = "undercroft.forget-receipt.v1"
#: Audit label prefix of the record binding a receipt body: ``forget/<sha256 hex of the body>``.
FORGET_LABEL_PREFIX = "forget/"
_HEX64 = re.compile(r"[0-9a-f]{64}")


class InvalidReceipt(Error, InvalidInput):
    """A forget receipt document that does not parse (malformed JSON, a missing or mistyped field)."""


@dataclass(frozen=True)
class ForgottenDrawer:
    """One destroyed drawer: its id and the UNKEYED SHA-256 of its UTF-8 content (checkable by a data subject)."""

    id: str
    content_sha256: str


@dataclass(frozen=True)
class ReceiptBody:
    """What the chain binds: vault, key generation, the drawers, the tombstone interval, heads, time, reason."""

    vault: str
    generation: int
    forgotten: tuple[ForgottenDrawer, ...]
    interval_start: int
    interval_end: int
    head_before: str
    head_after: str
    at: str
    reason: str

    def to_dict(self) -> dict[str, Any]:
        """The JSON-ready body."""
        return {
            "format": RECEIPT_FORMAT,
            "vault": self.vault,
            "generation": self.generation,
            "forgotten": [{"id": d.id, "content_sha256": d.content_sha256} for d in self.forgotten],
            "interval": {"start": self.interval_start, "end": self.interval_end},
            "head_before": self.head_before,
            "head_after": self.head_after,
            "at": self.at,
            "reason": self.reason,
        }

    def canonical(self) -> bytes:
        """The exact bytes the label digests and a signature covers (compact, sorted keys, ASCII)."""
        return json.dumps(self.to_dict(), sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode("ascii")

    @property
    def label(self) -> str:
        """The audit label of the record binding this body."""
        return FORGET_LABEL_PREFIX + hashlib.sha256(self.canonical()).hexdigest()


def _field(data: dict[str, Any], key: str, kind: type) -> Any:
    value = data.get(key)
    if not isinstance(value, kind) or isinstance(value, bool):
        raise InvalidReceipt(f"forget receipt field {key!r} must be a {kind.__name__}, got {type(value).__name__}")
    return value


def _hex64(value: str, key: str) -> str:
    if not _HEX64.fullmatch(value):
        raise InvalidReceipt(f"forget receipt field {key!r} must be 64 lower-case hex characters")
    return value


def parse_receipt(document: bytes | str) -> tuple[ReceiptBody, int, str, dict[str, Any] | None]:
    """Parse a receipt into (body, record height, record label, attestation or None); `InvalidReceipt` if malformed.

    The label is returned as written, not checked: an edited body is a failed verdict, not bad input.
    """
    try:
        data = json.loads(document)
    except (ValueError, UnicodeDecodeError) as error:
        raise InvalidReceipt(f"forget receipt is not JSON: {error}") from None
    if not isinstance(data, dict):
        raise InvalidReceipt("forget receipt must be a JSON object")
    if data.get("format") != RECEIPT_FORMAT:
        raise InvalidReceipt(f"forget receipt format must be {RECEIPT_FORMAT!r}, got {data.get('format')!r}")
    interval = _field(data, "interval", dict)
    forgotten = []
    for entry in _field(data, "forgotten", list):
        if not isinstance(entry, dict):
            raise InvalidReceipt("each forgotten entry must be an object with id and content_sha256")
        drawer_id = _field(entry, "id", str)
        try:
            validate_drawer_id(drawer_id)
        except InvalidInput as error:
            raise InvalidReceipt(f"forgotten id: {error}") from None
        forgotten.append(ForgottenDrawer(drawer_id, _hex64(_field(entry, "content_sha256", str), "content_sha256")))
    if not forgotten:
        raise InvalidReceipt("forget receipt names no drawer")
    body = ReceiptBody(
        vault=_field(data, "vault", str),
        generation=_field(data, "generation", int),
        forgotten=tuple(forgotten),
        interval_start=_field(interval, "start", int),
        interval_end=_field(interval, "end", int),
        head_before=_hex64(_field(data, "head_before", str), "head_before"),
        head_after=_hex64(_field(data, "head_after", str), "head_after"),
        at=_field(data, "at", str),
        reason=_field(data, "reason", str),
    )
    record = _field(data, "record", dict)
    height, label = _field(record, "height", int), _field(record, "label", str)
    attestation = data.get("attestation")
    if attestation is not None and not isinstance(attestation, dict):
        raise InvalidReceipt("forget receipt attestation must be an object or null")
    return body, height, label, attestation
