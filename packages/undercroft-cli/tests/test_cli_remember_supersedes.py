"""`undercroft remember --supersedes ID`: the supersession MCP's `undercroft_save` takes, from the CLI.

The new words are filed as one drawer beside the replaced one (its wing, room and kind) with the keyed receipt
link, through the same `operations.saving.save`; what that door cannot carry is refused (exit 1) before anything
is written, and the old drawer stays."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import init_home, run_in_process


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_undercroft_env: None) -> Path:
    return init_home(monkeypatch, tmp_path / "palace")


def _ok(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = run_in_process(capsys, *args)
    assert code == 0, f"{args} -> {code}\n{out}\n{err}"
    return out


def _drawer_count(capsys: pytest.CaptureFixture[str]) -> int:
    return len(json.loads(_ok(capsys, "drawer", "list", "--json", "--limit", "1000")))


def test_a_supersession_files_beside_the_old_drawer_and_links_it(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    [old] = json.loads(_ok(capsys, "remember", "We deploy on Fridays", "--wing", "ops", "--room", "release", "--json"))[
        "results"
    ]
    [new] = json.loads(_ok(capsys, "remember", "We never deploy on Fridays", "--supersedes", old["id"], "--json"))[
        "results"
    ]
    assert (new["outcome"], new["wing"], new["room"]) == ("created", "ops", "release")
    assert new["id"] != old["id"]
    links = json.loads(_ok(capsys, "supersessions", "--json"))["supersessions"]
    assert [(link["drawer_id"], link["superseded_id"], link["verdict"]) for link in links] == [
        (new["id"], old["id"], "verified")
    ]
    assert json.loads(_ok(capsys, "drawer", "get", old["id"], "--json"))["content"] == "We deploy on Fridays"
    assert _ok(capsys, "verify").count("VERIFY FAILED") == 0


@pytest.mark.parametrize(
    ("extra", "says"),
    [
        (("--supersedes", "d-absent"), "--supersedes names no live drawer"),
        (("--wing", "elsewhere"), "argument 'wing' asks for 'elsewhere'"),
        (("--vector", "[1, 0]"), "cannot accompany 'supersedes'"),
    ],
)
def test_what_a_supersession_cannot_carry_is_refused_and_writes_nothing(
    home: Path, capsys: pytest.CaptureFixture[str], extra: tuple[str, ...], says: str
) -> None:
    [old] = json.loads(_ok(capsys, "remember", "The cache is warm", "--wing", "ops", "--json"))["results"]
    before = _drawer_count(capsys)
    args = ["remember", "The cache is cold", "--supersedes", old["id"], *extra]
    if extra[0] == "--supersedes":
        args = ["remember", "The cache is cold", *extra]
    code, _, err = run_in_process(capsys, *args)
    assert code == 1, err
    assert says in err
    assert _drawer_count(capsys) == before
    assert json.loads(_ok(capsys, "supersessions", "--json"))["supersessions"] == []
