"""What an offline reader of a SEALED vault reads, column by column: the exposure inventory (issue 29).

This is the single statement of a sealed vault's at-rest exposure. Two things hold it to the truth:
``tests/test_store_exposure.py`` writes a sealed vault through every surface and fails on any table, column or
``meta`` key not listed here, on any entry listed here that no longer exists, and on any stored value that does
not have its entry's shape (a clear word where ``blind`` or ``sealed`` is declared); and
``test_store_exposure_docs.py`` checks the table in docs/security.md row for row against `EXPOSURE`.

Shapes (what the test checks every value against):

* ``sealed`` — an AEAD blob (XChaCha20-Poly1305 under the vault key, its own AAD domain), raw or base64:
  reveals its size only;
* ``blind`` — 32 hex characters, a truncated HMAC under the long-lived blind-index secret: reveals equality
  between rows, never the value;
* ``keyed`` — a keyed MAC or fingerprint (tags, dedup fingerprints, receipts): equality only;
* ``id`` — a record id: keyed on a vault whose ``drawer_id_recipe`` is ``hmac-v1`` (drawer ids) and always
  for facts, entities and tunnels; an older vault's drawer ids are the public digest (see the drawer-id entry);
* ``label`` — an audit label: an operation prefix and the id or blind value of its subject;
* ``count`` — a number (sequence, counter, height, size of a policy);
* ``chain-time`` — a UTC instant equal to the ``at`` of an audit record (when the chain recorded the write);
* ``vocabulary`` — one of a closed, engine-defined set of words (trust classes, id recipes, review states),
  or NULL;
* ``null`` — always NULL on a vault created by this release (the column serves older vaults' rows);
* ``clear`` — a value stored in the clear on purpose; its entry says what it is and why.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

__all__ = ["CLEAR_JSON", "EXPOSURE", "FILES", "META_KEYS", "SHAPES", "Exposed", "markdown_table"]

#: The shapes an entry may declare.
SHAPES: Final = ("sealed", "blind", "keyed", "id", "label", "count", "chain-time", "vocabulary", "null", "clear")


@dataclass(frozen=True, slots=True)
class Exposed:
    """One column (or ``meta`` key) of a sealed vault: its shape and what an offline reader learns from it."""

    table: str
    column: str
    shape: str
    reveals: str


def _rows(table: str, *columns: tuple[str, str, str]) -> tuple[Exposed, ...]:
    return tuple(Exposed(table, column, shape, reveals) for column, shape, reveals in columns)


_DRAWER_ID = (
    "the drawer id: on a vault whose drawer_id_recipe is hmac-v1 (every sealed vault created since keyed ids), "
    "an HMAC under the vault's key of (recipe, wing, room, source path, chunk index): equality only, it "
    "confirms no guess. A vault created before keeps the public sha256-v1 recipe, whose id confirms a COMPLETE "
    "guess of all four (docs/security.md, residuals)"
)
_TAG = ("tag", "keyed", "the row's HMAC tag")
_CHAIN_TIME = "when the chain recorded the write (equal to its audit record's at)"

#: Every column of every table a sealed vault may hold.
EXPOSURE: Final[tuple[Exposed, ...]] = (
    *_rows(
        "drawers",
        ("seq", "count", "write order and the number of drawers"),
        ("id", "id", _DRAWER_ID),
        ("wing", "blind", "which drawers share a wing"),
        ("room", "blind", "which drawers share a room"),
        ("kind", "blind", "which drawers share a declared kind, and which declare none (NULL)"),
        ("supersedes", "blind", "which drawers supersede another (NULL: none), and equality of the target"),
        ("meta_json", "sealed", "size only (names, source path, writer, hall, dates, mentions, claims are inside)"),
        ("content", "sealed", "size only (compress-then-encrypt: weakly correlated with compressibility)"),
        ("embedding", "sealed", "size only"),
        ("fingerprint", "keyed", "which drawers hold identical content (the dedup key)"),
        _TAG,
    ),
    *_rows(
        "audit",
        ("seq", "count", "the chain's order and height"),
        ("record_id", "label", "the operation and the id or blind value of its subject (never a name)"),
        ("tag", "keyed", "the record's tag (folded into the chain)"),
        ("at", "chain-time", "when each write, delete, assignment or ruling happened"),
    ),
    *_rows(
        "chain_meta",
        ("id", "count", "the single row's key"),
        ("head", "keyed", "the committed chain head"),
        ("height", "count", "the number of audit records"),
    ),
    *_rows(
        "tombstones",
        ("drawer_id", "id", "which drawer ids were deleted (see the drawer id)"),
        _TAG,
        ("at", "chain-time", _CHAIN_TIME),
    ),
    *_rows(
        "kg_entities",
        ("id", "blind", "an entity's identity (equality)"),
        ("name", "sealed", "size only"),
        ("meta_json", "clear", "created_at only: " + _CHAIN_TIME),
        _TAG,
    ),
    *_rows(
        "kg_facts",
        ("seq", "count", "fact order and count"),
        ("id", "id", "a fact's keyed id"),
        ("subject", "blind", "which facts share a subject"),
        ("predicate", "blind", "which facts share a predicate"),
        ("object", "blind", "which facts share an object"),
        ("valid_from", "null", "nothing: the window is sealed in meta_json (kgwindow/{id}); NULL"),
        (
            "valid_to",
            "vocabulary",
            "whether the fact's window is closed (closed, or NULL while open): active-fact SQL needs it",
        ),
        ("source_drawer", "id", "which drawer a fact was extracted from"),
        ("authority_class", "vocabulary", "the fact's authority tier"),
        ("review_state", "vocabulary", "the fact's review state"),
        ("canonical", "blind", "which facts share a canonical key (NULL: none)"),
        (
            "meta_json",
            "clear",
            "the fact's blind terms, sealed window, closed flag, tiers, links and keyed provenance fingerprint "
            "(field by field below; no drawer label, no extractor, confidence, grounding or span)",
        ),
        ("terms", "sealed", "size only (subject, predicate, canonical key, extractor, confidence, grounding, span)"),
        ("value", "sealed", "size only"),
        _TAG,
    ),
    *_rows(
        "tunnels",
        ("id", "id", "a tunnel's keyed id"),
        ("from_wing", "blind", "which tunnels leave the same wing"),
        ("from_room", "blind", "which tunnels leave the same room (NULL: the whole wing)"),
        ("to_wing", "blind", "which tunnels reach the same wing"),
        ("to_room", "blind", "which tunnels reach the same room (NULL: the whole wing)"),
        ("meta_json", "sealed", "size only (the ends and the creation time are inside)"),
        ("label", "sealed", "size only"),
        _TAG,
    ),
    *_rows(
        "supersessions",
        ("drawer_id", "id", "the superseding drawer"),
        ("superseded_id", "id", "the superseded drawer"),
        ("meta_json", "clear", "the link's time (" + _CHAIN_TIME + "), keyed receipt and superseded id"),
        _TAG,
    ),
    *_rows(
        "admission_queue",
        ("drawer_id", "id", "the queue slot (its index is keyed: not an oracle)"),
        ("intended_id", "id", "the id the diverted write aimed at (see the drawer id)"),
        ("intended_wing", "blind", "which queued writes aimed at the same wing"),
        ("intended_room", "blind", "which queued writes aimed at the same room"),
        ("chunk_index", "count", "the intended drawer's chunk position"),
        ("id_recipe", "vocabulary", "whether the intended drawer was an API save or a sourced chunk"),
        ("signals", "sealed", "size only (signal codes, offsets and the intended names are inside)"),
        ("destination", "keyed", "whether the destination changed since the write was queued (equality)"),
        ("queued_at", "chain-time", _CHAIN_TIME),
        _TAG,
    ),
    *_rows(
        "wing_trust",
        ("wing", "blind", "that a wing has a trust assignment (and, by equality, which drawers are in it)"),
        ("trust", "vocabulary", "the assigned class (quarantined | standard | trusted)"),
        ("at", "chain-time", _CHAIN_TIME),
        _TAG,
    ),
    *_rows(
        "retention_policy",
        ("wing", "blind", "that a wing has a retention policy"),
        ("room", "blind", "its room (the empty string: the whole wing)"),
        ("max_age_seconds", "count", "the declared maximum age: an operator setting, no content value"),
        ("at", "chain-time", _CHAIN_TIME),
        _TAG,
    ),
    *_rows(
        "sqlite_sequence",
        ("name", "clear", "the engine's table names"),
        ("seq", "count", "the highest seq each table has used"),
    ),
    *_rows(
        "meta",
        ("key", "clear", "the engine's own key names (each value is listed in META_KEYS)"),
        ("value", "clear", "per key, as META_KEYS states"),
    ),
    *_rows(
        "tier_pq_meta",
        ("name", "clear", "the candidate tier's artifact names (derived index, rebuilt on rotation)"),
        ("blob", "sealed", "size only (codebook, probe pages)"),
    ),
    *_rows(
        "tier_pq_rows",
        ("seq", "count", "which drawers hold a PQ code"),
        ("blob", "sealed", "size only (the code and its keyed mark)"),
    ),
    *_rows(
        "search_snapshot",
        ("part", "count", "how many parts the search snapshot holds (derived, dropped on forget and rotation)"),
        ("blob", "sealed", "size only (the embedding matrix and the drawers' term bags, as of one state)"),
    ),
)

#: Every ``meta`` key of a sealed vault → (shape, what it reveals).
META_KEYS: Final[dict[str, tuple[str, str]]] = {
    "schema_version": ("count", "the schema version"),
    "level": ("vocabulary", "that the vault is sealed"),
    "vault_id": ("clear", "the vault's name, which is also its directory name and in its manifest"),
    "keycheck": ("keyed", "a marker proving the key generation"),
    "blind_secret": ("sealed", "size only: the blind-index secret"),
    "append_counter": ("count", "how many API saves have been allocated"),
    "metadata": ("vocabulary", "that the metadata is at rest sealed (sealed-v1)"),
    "embedder": ("clear", "the embedder identity (model name and dimension)"),
    "label_names": ("sealed", "size only: the registry of blind values → names"),
    "kg_windows": ("vocabulary", "that the facts' windows and details are sealed (sealed-v2)"),
    "drawer_id_recipe": ("vocabulary", "how drawer ids are derived: hmac-v1 (keyed) or sha256-v1 (public)"),
}

#: Every field of each column the inventory declares ``clear`` JSON (``meta_json``) → what it reveals. The
#: exposure test fails on a stored document whose keys differ from its entry, so a field added to one of these
#: documents is in the clear until it is stated here (or sealed).
CLEAR_JSON: Final[dict[str, dict[str, str]]] = {
    "kg_entities": {"created_at": _CHAIN_TIME},
    "supersessions": {
        "at": _CHAIN_TIME,
        "receipt": "a keyed receipt over the link (equality only)",
        "superseded": "the superseded drawer's id (as the superseded_id column)",
    },
    "kg_facts": {
        "authority_class": "the authority tier (as its column)",
        "canonical": "the canonical key's blind value (as its column)",
        "created_at": _CHAIN_TIME,
        "o": "the object's blind value (as the object column)",
        "p": "the predicate's blind value (as the predicate column)",
        "review_state": "the review state (as its column)",
        "s": "the subject's blind value (as the subject column)",
        "source_drawer": "the source drawer's id (as its column)",
        "source_fp": "a keyed provenance fingerprint (equality only)",
        "superseded_by": "the id of the fact that replaced this one (NULL: none)",
        "supersedes": "the id of the fact this one replaced (NULL: none)",
        "closed": "whether the window is closed (as the valid_to column)",
        "window": "sealed (kgwindow/{id}, one fixed size): nothing — the validity start and end are inside",
    },
}

#: Every file of a sealed vault's directory → what it reveals.
FILES: Final[dict[str, str]] = {
    "vault.db": "the database above",
    "vault.db-wal": "the database's write-ahead log (the same rows)",
    "vault.db-shm": "the WAL index (no row data)",
    "vault.json": "the manifest: vault name, level, key generation, salt, the chain anchor's count and head, its MAC",
}


def markdown_table() -> str:
    """The inventory as the Markdown docs/security.md carries between its exposure markers (generated here,
    checked by a test: print it with ``python -m undercroft_store.integrity.exposure``)."""
    lines = ["| table | column | at rest | what an offline reader learns |", "| --- | --- | --- | --- |"]
    lines += [f"| `{e.table}` | `{e.column}` | {e.shape} | {e.reveals} |" for e in EXPOSURE]
    lines += ["", "| `meta` key | at rest | what an offline reader learns |", "| --- | --- | --- |"]
    lines += [f"| `{key}` | {shape} | {reveals} |" for key, (shape, reveals) in META_KEYS.items()]
    lines += ["", "| clear JSON | field | what an offline reader learns |", "| --- | --- | --- |"]
    lines += [
        f"| `{table}.meta_json` | `{name}` | {reveals} |"
        for table, fields in CLEAR_JSON.items()
        for name, reveals in fields.items()
    ]
    lines += ["", "| file | what it holds |", "| --- | --- |"]
    lines += [f"| `{name}` | {holds} |" for name, holds in FILES.items()]
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    print(markdown_table(), end="")
