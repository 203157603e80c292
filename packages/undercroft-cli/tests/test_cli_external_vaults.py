"""External-embedding vaults from the CLI: ``vault create --embedder external:<name>@<dim>``, ``remember --vector``,
``search --vector`` and import between vaults of one space — every bad declaration or vector refused with a
precise message (exit 1) and an untouched vault."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from .conftest import init_home, run_in_process

SPACE = "external:team-e5@4"
WORDS = "quokka marmalade at the harbour"


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_undercroft_env: None) -> Path:
    return init_home(monkeypatch, tmp_path / "palace")


def _ok(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, out, err = run_in_process(capsys, *args)
    assert code == 0, f"{args} -> {code}\n{out}\n{err}"
    return out


def _stats(capsys: pytest.CaptureFixture[str], vault: str) -> dict[str, object]:
    return json.loads(_ok(capsys, "stats", "--vault", vault, "--json"))  # type: ignore[no-any-return]


def _refused(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    code, _, err = run_in_process(capsys, *args)
    assert code == 1, f"{args} -> {code}\n{err}"
    return err


def test_an_external_vault_takes_the_callers_vectors_on_save_and_search(
    home: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    created = json.loads(_ok(capsys, "vault", "create", "ext", "--embedder", SPACE, "--json"))
    assert created == {"vault": "ext", "level": "sealed", "embedder": SPACE, "path": str(home / "vaults" / "ext")}
    assert _stats(capsys, "ext")["embedder"] == SPACE  # recorded at creation, before any drawer
    saved = json.loads(_ok(capsys, "remember", WORDS, "--vault", "ext", "--vector", "[1, 0, 0, 0]", "--json"))
    [result] = saved["results"]
    assert result["outcome"] == "created"
    found = _ok(capsys, "search", "quokka", "--vault", "ext", "--vector", "[0.9, 0.1, 0, 0]")
    assert result["id"] in found and WORDS in found
    # The default space still names the composed embedder, and the default vault is untouched by the other.
    assert json.loads(_ok(capsys, "vault", "create", "plain", "--json"))["embedder"].startswith("undercroft-hash")
    _ok(capsys, "verify", "--vault", "ext")


@pytest.mark.parametrize(
    ("declared", "said"),
    [
        ("bogus", "must be hash or external:<name>@<dim>, got 'bogus'"),
        ("external:e5@0", "external embedder must be declared as 'external:<name>@<dim>', got 'external:e5@0'"),
        ("external:@4", "external embedder must be declared as 'external:<name>@<dim>', got 'external:@4'"),
    ],
)
def test_a_malformed_space_is_refused_and_creates_nothing(
    home: Path, capsys: pytest.CaptureFixture[str], declared: str, said: str
) -> None:
    before = sorted(p.name for p in (home / "vaults").iterdir())
    err = _refused(capsys, "vault", "create", "ext", "--embedder", declared)
    assert "--embedder" in err and said in err
    assert sorted(p.name for p in (home / "vaults").iterdir()) == before


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ((WORDS,), f"vault 'ext' stores caller-supplied vectors ({SPACE}): pass the text's embedding with --vector"),
        ((WORDS, "--vector", "[1, 0, 0]"), "the vector has dimension 3, the vault's embedder has 4"),
        ((WORDS, "--vector", "[1, NaN, 0, 0]"), "--vector: must be a finite number at component 1, got nan"),
        ((WORDS, "--vector", "[1, true, 0, 0]"), "--vector: must be a number at component 1, got True"),
        ((WORDS, "--vector", "one two"), "--vector: not a JSON array"),
        ((WORDS, "--vector", "[]"), "--vector: must be a non-empty array of numbers"),
        ((" ".join(["harbour"] * 3000), "--vector", "[1, 0, 0, 0]"), "a supplied vector describes one drawer"),
    ],
)
def test_a_save_without_a_fitting_vector_is_refused_and_writes_nothing(
    home: Path, capsys: pytest.CaptureFixture[str], args: tuple[str, ...], said: str
) -> None:
    _ok(capsys, "vault", "create", "ext", "--embedder", SPACE)
    err = _refused(capsys, "remember", *args, "--vault", "ext")
    assert said in err.replace("\n", " ") or said in err, err
    assert _stats(capsys, "ext")["drawers"] == 0
    _ok(capsys, "verify", "--vault", "ext")


def test_an_import_carries_vectors_within_one_space_and_refuses_another(
    home: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _ok(capsys, "vault", "create", "ext", "--embedder", SPACE)
    _ok(capsys, "remember", WORDS, "--vault", "ext", "--vector", "[1, 0, 0, 0]")
    _ok(capsys, "remember", "hash vault words")
    ext_file, plain_file = tmp_path / "ext.jsonl", tmp_path / "plain.jsonl"
    _ok(capsys, "export", "--vault", "ext", "--out", str(ext_file))
    _ok(capsys, "export", "--out", str(plain_file))

    _ok(capsys, "vault", "create", "twin", "--embedder", SPACE)
    _ok(capsys, "import", str(ext_file), "--vault", "twin")
    assert WORDS in _ok(capsys, "search", "quokka", "--vault", "twin", "--vector", "[0.9, 0.1, 0, 0]")

    _ok(capsys, "vault", "create", "other", "--embedder", "external:other@4")
    for source, space in ((ext_file, SPACE), (plain_file, "undercroft-hash")):
        err = _refused(capsys, "import", str(source), "--vault", "other")
        assert "this vault stores caller-supplied vectors (external:other@4) and cannot embed" in err
        assert f"the export's drawers are in '{space}" in err
    assert _stats(capsys, "other")["drawers"] == 0
    _ok(capsys, "verify", "--vault", "other")

    # The other way is a re-embedding: the default vault's embedder reads the words.
    _ok(capsys, "import", str(ext_file))
    assert WORDS in _ok(capsys, "search", "quokka marmalade")
