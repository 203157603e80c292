"""The control plane's state: sealed credentials, MAC'd tokens and rows, the key check, one-statement rotation."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from undercroft_orchestrator._internal.ratelimit import RateLimit
from undercroft_orchestrator._internal.sealing import Keys
from undercroft_orchestrator._internal.state import State
from undercroft_orchestrator.errors import Refused, StateError

SECRET = "engine-bearer-secret-value"


@pytest.fixture
def state(tmp_path: Path) -> State:
    opened = State(tmp_path / "state.db", Keys("k" * 43))
    opened.add_instance("a", "http://127.0.0.1:9001", SECRET, "assertion-secret-value")
    opened.add_instance("b", "http://127.0.0.1:9002", "other-bearer", None)
    return opened


def test_credentials_and_tokens_never_sit_in_the_file(state: State) -> None:
    token = state.create_tenant("acme", "a")
    raw = state.path.read_bytes()
    assert SECRET.encode() not in raw and b"assertion-secret-value" not in raw
    assert token.encode() not in raw
    assert state.instance("a").bearer == SECRET
    found = state.tenant_by_token(token)
    assert found is not None and found.id == "acme"


def test_a_wrong_key_refuses_to_open(state: State) -> None:
    with pytest.raises(StateError, match="does not open the state database"):
        State(state.path, Keys("another-key" * 4))


def test_rotation_kills_the_old_token_in_the_same_statement(state: State) -> None:
    old = state.create_tenant("acme", "a")
    new = state.rotate_tenant("acme")
    assert state.tenant_by_token(old) is None
    found = state.tenant_by_token(new)
    assert found is not None and found.rotated_at is not None


def test_an_edited_row_is_an_integrity_failure(state: State) -> None:
    token = state.create_tenant("acme", "a")
    with sqlite3.connect(state.path) as db:
        db.execute("UPDATE tenants SET instance = 'b' WHERE id = 'acme'")
    with pytest.raises(StateError, match="does not match its MAC"):
        state.tenant_by_token(token)


def test_sealed_credentials_are_bound_to_their_instance_and_url(state: State) -> None:
    with sqlite3.connect(state.path) as db:
        db.execute("UPDATE instances SET url = 'http://127.0.0.1:6666' WHERE name = 'a'")
    with pytest.raises(StateError, match="do not open"):
        state.instance("a")


def test_bad_names_and_conflicts_are_refused_and_change_nothing(state: State) -> None:
    before = state.last_write()
    for bad in ("", "Acme", "a b", "-x", "x" * 64, "../etc", "acme\n"):
        with pytest.raises(Refused, match="not legal"):
            state.create_tenant(bad, "a")
    with pytest.raises(Refused, match="no instance named 'zzz'"):
        state.create_tenant("acme", "zzz")
    with pytest.raises(Refused, match="already registered"):
        state.add_instance("a", "http://127.0.0.1:9", None, None)
    assert state.tenants() == [] and state.last_write() == before
    state.create_tenant("acme", "a")
    with pytest.raises(Refused, match="still holds tenants acme"):
        state.remove_instance("a")


def test_a_replica_refuses_every_change(state: State) -> None:
    replica = State(state.path, Keys("k" * 43), read_only=True)
    with pytest.raises(StateError, match="read replica"):
        replica.create_tenant("acme", "a")
    assert [i["name"] for i in replica.instances()] == ["a", "b"]


def test_the_rate_screen_holds_a_minute_window_per_tenant() -> None:
    screen = RateLimit(2)
    assert screen.admit("t", 0.0) is None and screen.admit("t", 1.0) is None
    assert screen.admit("t", 2.0) == pytest.approx(58.0)
    assert screen.admit("other", 2.0) is None
    assert screen.admit("t", 60.5) is None
    assert RateLimit(None).admit("t") is None
