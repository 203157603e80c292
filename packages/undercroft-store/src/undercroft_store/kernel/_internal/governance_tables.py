"""The governance tables (admission queue, wing trust): DDL only, so `schema` can create them without cycles.

* ``admission_queue`` — one row per quarantined drawer: where it was headed (``intended_id``,
  ``intended_wing``, ``intended_room``, the original ``chunk_index`` and ``id_recipe``), the signal codes and
  offsets that tripped (``signals``, clear JSON, never a content word), ``destination`` (a digest keyed with
  the stored blind-index secret of what the destination held when the text was queued), ``queued_at`` and
  ``tag`` = HMAC(mac, ``admission/<drawer_id>`` ␟ the row's canonical bytes), also the tag of its audit row.
* ``wing_trust`` — one row per assigned wing: ``trust`` (quarantined|standard|trusted), ``at`` and ``tag`` =
  HMAC(mac, ``trust/<wing>`` ␟ trust ␟ at), also the tag of its ``trust/<wing>`` audit row.
"""

from __future__ import annotations

from typing import Final

__all__ = ["GOVERNANCE_DDL", "GOVERNANCE_TABLES", "GOVERNANCE_TAGGED_TABLES", "QUEUE_TABLE", "TRUST_TABLE"]

#: The admission review queue (one row per resident of the quarantine wing).
QUEUE_TABLE: Final = "admission_queue"
#: Operator-assigned wing trust.
TRUST_TABLE: Final = "wing_trust"

GOVERNANCE_DDL: Final = (
    f"""CREATE TABLE {QUEUE_TABLE} (
        drawer_id TEXT PRIMARY KEY,
        intended_id TEXT NOT NULL,
        intended_wing TEXT NOT NULL,
        intended_room TEXT NOT NULL,
        chunk_index INTEGER NOT NULL,
        id_recipe TEXT NOT NULL,
        signals BLOB NOT NULL,
        destination BLOB NOT NULL,
        queued_at TEXT NOT NULL,
        tag BLOB NOT NULL
    ) STRICT""",
    f"""CREATE TABLE {TRUST_TABLE} (
        wing TEXT PRIMARY KEY,
        trust TEXT NOT NULL,
        at TEXT NOT NULL,
        tag BLOB NOT NULL
    ) STRICT""",
)
GOVERNANCE_TABLES: Final = (QUEUE_TABLE, TRUST_TABLE)
#: Both carry HMAC tags: rotation re-keys them through `quarantine.reseal_queue_rows` / `trust.reseal_trust_rows`.
GOVERNANCE_TAGGED_TABLES: Final = (QUEUE_TABLE, TRUST_TABLE)
