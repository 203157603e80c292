"""Rotation re-keys the governance tables too: trust rows and the admission queue read cleanly afterwards."""

from __future__ import annotations

from undercroft_config.values import Admission
from undercroft_core import HashEmbedder
from undercroft_store import Palace
from undercroft_store.governance.admission import AdmissionPolicy, load_fixtures
from undercroft_store.governance.quarantine import install_gate
from undercroft_store.governance.rulings import list_admissions
from undercroft_store.integrity.rotation import rotate_vault
from undercroft_store.kernel.trust import list_trust, set_trust


def test_rotation_rekeys_trust_rows_and_the_queue(palace: Palace, embedder: HashEmbedder) -> None:
    attack = load_fixtures()[0].text
    with palace.open_vault("default", embedder) as store:
        install_gate(store, AdmissionPolicy(mode=Admission.QUARANTINE))
        set_trust(store, "team", "trusted")
        set_trust(store, "scraped", "quarantined")
        (result,) = store.remember(attack, wing="notes", room="inbox", added_by="t")
        assert result.diverted
        before_trust = [(t.wing, t.trust) for t in list_trust(store)]
        before_queue = [item.to_dict() for item in list_admissions(store)]
    assert before_queue, "the premise: the queue holds a row before the rotation"

    report = rotate_vault(palace, "default", embedder)
    assert report.generation_after == report.generation_before + 1

    with palace.open_vault("default", embedder) as store:
        # Readers whose contract is "tag-verified on the way out" answer cleanly under the new keys.
        assert [(t.wing, t.trust) for t in list_trust(store)] == before_trust
        assert [item.to_dict() for item in list_admissions(store)] == before_queue
        assert store.verify().ok
