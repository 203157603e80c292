"""Localised result strings (issue 18 §8): the catalogues agree with English, every key is used, and a
language with no catalogue falls back to English with a note — while errors, help and exit codes stay English.

Both directions of the key inventory: every catalogue holds exactly English's keys with exactly the same
``str.format`` fields, every key is named by the CLI's code, and every key the code passes to ``message``
exists in English (else the command would raise at run time).
"""

from __future__ import annotations

import ast
import os
import string
import subprocess
import sys
from pathlib import Path

import pytest
from undercroft_cli._internal.i18n import CATALOGUED, catalogue, language, message

SOURCE = Path(__file__).resolve().parents[1] / "src" / "undercroft_cli"
PROGRAM = Path(sys.executable).parent / "undercroft"
SPEC_LANGUAGES = {"de", "es", "fr", "hi", "it", "ko", "pt", "ru", "zh"}


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def _source_literals() -> tuple[set[str], set[str]]:
    """Every string constant in the CLI's code, and the first arguments of every ``message(...)`` call."""
    literals: set[str] = set()
    asked: set[str] = set()
    for path in SOURCE.rglob("*.py"):
        if path.name == "i18n.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str):
                literals.add(node.value)
            if isinstance(node, ast.Call) and getattr(node.func, "id", None) == "message" and node.args:
                for value in ast.walk(node.args[0]):
                    if isinstance(value, ast.Constant) and isinstance(value.value, str):
                        asked.add(value.value)
    return literals, asked


def test_every_spec_language_has_a_catalogue_shipped_as_data() -> None:
    assert set(CATALOGUED) == SPEC_LANGUAGES | {"en"}
    shipped = {path.stem for path in (SOURCE / "_internal" / "catalogues").glob("*.json")}
    assert shipped == set(CATALOGUED)


@pytest.mark.parametrize("code", sorted(SPEC_LANGUAGES))
def test_every_catalogue_has_exactly_englishs_keys_and_fields(code: str) -> None:
    english, other = catalogue("en"), catalogue(code)
    assert set(other) == set(english), f"{code}: missing {set(english) - set(other)}, extra {set(other) - set(english)}"
    for key, template in english.items():
        assert _fields(other[key]) == _fields(template), (code, key)
        assert other[key] != template, f"{code}.{key} is English, not translated"


def test_every_key_is_used_and_every_used_key_exists() -> None:
    literals, asked = _source_literals()
    keys = set(catalogue("en"))
    assert not (keys - literals), f"catalogue keys no command uses: {sorted(keys - literals)}"
    assert asked and not (asked - keys), f"message() keys with no English entry: {sorted(asked - keys)}"


def test_a_language_is_read_from_locale_like_spellings() -> None:
    assert language({"UNDERCROFT_LANG": "pt-BR"}) == "pt" and language({"UNDERCROFT_LANG": "zh_CN.UTF-8"}) == "zh"
    assert language({"UNDERCROFT_LANG": ""}) == "en" and language({}) == "en"
    assert message("deleted.id", env={"UNDERCROFT_LANG": "DE"}, id="x") == "gelöscht: x"


def _run(home: Path, lang: str | None, *args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env["UNDERCROFT_HOME"] = str(home)
    if lang is not None:
        env["UNDERCROFT_LANG"] = lang
    return subprocess.run([str(PROGRAM), *args], env=env, capture_output=True, text=True, timeout=120)


def test_results_are_localised_while_errors_help_and_exit_codes_stay_english(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    created = _run(home, "de", "init")
    assert created.returncode == 0 and created.stdout.startswith("erstellt: Tresor 'default' in ")
    assert "note:" not in created.stderr
    assert _run(home, "fr", "init").stdout.startswith("déjà présent : coffre 'default'")
    refused = _run(home, "de", "vault", "delete", "default")  # a usage error: English, exit 1
    assert refused.returncode == 1 and "is irreversible: pass --yes to confirm" in refused.stderr
    helped = _run(home, "zh", "--help")
    assert helped.returncode == 0 and "Commands" in helped.stdout and "Show this message and exit." in helped.stdout


def test_an_uncatalogued_language_falls_back_to_english_with_one_note(tmp_path: Path) -> None:
    home = tmp_path / "palace"
    ran = _run(home, "tlh", "init")
    assert ran.returncode == 0 and ran.stdout.startswith("created: vault 'default' in ")
    assert ran.stderr.count("note: UNDERCROFT_LANG='tlh' has no catalogue") == 1
    assert "result strings are in English" in ran.stderr
