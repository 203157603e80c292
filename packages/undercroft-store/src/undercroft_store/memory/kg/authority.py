"""The authority tier: ``authority_class``, ``review_state`` and ``canonical_key`` on facts, and `canonical`.

All three are closed-vocabulary (the key is free text, sealed, looked up through its keyed blind value),
HMAC-covered and audited. `canonical(key)` answers at most one active approved fact, or nothing. Declaring
an approved fact onto a key another active approved fact holds closes that holder in the same transaction
(its history stays). The tier changes no score anywhere: it is a door beside retrieval, not a weight.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from undercroft_store.kernel._internal.read_door import audited_read
from undercroft_store.kernel._internal.transaction import audited, open_blind, readable
from undercroft_store.memory.kg._internal.rows import FACT_SELECT, load_fact, update_fact, verified_fact
from undercroft_store.memory.kg.errors import InvalidFact
from undercroft_store.memory.kg.facts import (
    AUTHORITY_CLASSES,
    REVIEW_STATES,
    Fact,
    canonical_blind,
    check_choice,
    check_term,
    with_changes,
)

if TYPE_CHECKING:
    from undercroft_store.store import VaultStore

__all__ = ["AuthorityChange", "canonical", "declare_authority"]


class AuthorityChange:
    """What `declare_authority` did: the updated fact and the previous key holder it closed, if any."""

    __slots__ = ("displaced", "fact")

    def __init__(self, fact: Fact, displaced: Fact | None) -> None:
        """Record the outcome."""
        self.fact = fact
        self.displaced = displaced


def declare_authority(
    store: VaultStore,
    fact_id: str,
    *,
    authority_class: str | None = None,
    review_state: str | None = None,
    canonical_key: str | None = None,
) -> AuthorityChange:
    """Set the tier columns of an active fact (operator surface); promotion displaces the key's holder."""
    context = store._context
    if authority_class is not None:
        check_choice(authority_class, AUTHORITY_CLASSES, "authority class")
    if review_state is not None:
        check_choice(review_state, REVIEW_STATES, "review state")
    key = check_term(canonical_key, "canonical key") if canonical_key is not None else None
    displaced: Fact | None = None
    with open_blind(context) as blind, audited(context) as records:
        at = context.now()
        fact = load_fact(context, check_term(fact_id, "fact id"))
        if not fact.active:
            raise InvalidFact(f"fact {fact_id} is closed (valid_to {fact.valid_to}): only an active fact takes a tier")
        changed = with_changes(
            fact,
            authority_class=authority_class or fact.authority_class,
            review_state=review_state or fact.review_state,
            canonical_key=key if key is not None else fact.canonical_key,
        )
        if changed.review_state == "approved" and changed.canonical_key is not None:
            holder = _holder(store, canonical_blind(blind, changed.canonical_key))
            if holder is not None and holder.id != changed.id:
                displaced = with_changes(holder, valid_to=at, superseded_by=changed.id)
                update_fact(context, blind, displaced, at, records)
                changed = with_changes(changed, supersedes=changed.supersedes or holder.id)
        update_fact(context, blind, changed, at, records)
    return AuthorityChange(changed, displaced)


def _holder(store: VaultStore, blind_key: str) -> Fact | None:
    context = store._context
    row = context.connection.execute(
        f"{FACT_SELECT} WHERE canonical = ? AND review_state = 'approved' AND valid_to IS NULL "
        "ORDER BY seq DESC LIMIT 1",
        (blind_key,),
    ).fetchone()
    return None if row is None else verified_fact(context, row)


@audited_read("kg-canonical", subject=lambda a: str(a["key"]))
def canonical(store: VaultStore, key: str) -> Fact | None:
    """The one active approved fact holding `key` (an indexed equality on its blind value), or None."""
    context = readable(store._context)
    word = check_term(key, "canonical key")
    with open_blind(context) as blind:
        return _holder(store, canonical_blind(blind, word))
