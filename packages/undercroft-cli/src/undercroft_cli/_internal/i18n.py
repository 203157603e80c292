"""Localised result strings: ``UNDERCROFT_LANG`` picks a catalogue; errors, help and exit codes stay English.

The catalogues are data files shipped in this distribution (``_internal/catalogues/<code>.json``, one per
language of the spec's i18n list: de es fr hi it ko pt ru zh, plus en), each a flat ``key -> str.format
template`` map. English is the default and the fallback: an unset or empty ``UNDERCROFT_LANG`` is English; a
language with no catalogue is English too, and the first result string of the run says so once on standard
error (a note, never a failure — a result string must not stop a command that already did its work).
Errors, ``--help`` and exit codes are never localised: they are the contract scripts and logs read.

``tests/test_cli_i18n.py`` checks that every catalogue has exactly English's keys with the same fields, and
that every key is used by a command.
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Mapping
from functools import cache
from importlib import resources

__all__ = ["CATALOGUED", "catalogue", "language", "message"]

#: Every language with a catalogue: English first, then the spec's nine (docs/languages.md).
CATALOGUED = ("en", "de", "es", "fr", "hi", "it", "ko", "pt", "ru", "zh")

_noted: set[str] = set()  # the uncatalogued values already noted in this process (one note each per run)


@cache
def catalogue(code: str) -> Mapping[str, str]:
    """The catalogue of language ``code`` (one of `CATALOGUED`), read once from its data file."""
    if code not in CATALOGUED:
        raise KeyError(f"no catalogue for {code!r}")
    text = resources.files("undercroft_cli._internal").joinpath("catalogues", f"{code}.json").read_text("utf-8")
    loaded = json.loads(text)
    if not isinstance(loaded, dict) or not all(isinstance(v, str) for v in loaded.values()):
        raise ValueError(f"catalogue {code}.json is not a flat object of strings")
    return loaded


def language(env: Mapping[str, str] | None = None) -> str:
    """The catalogued language ``UNDERCROFT_LANG`` declares (``de``, ``pt-BR`` → ``pt``); ``en`` otherwise."""
    declared = (os.environ if env is None else env).get("UNDERCROFT_LANG", "").strip().lower()
    if not declared:
        return "en"
    base = declared.replace("_", "-").split("-", 1)[0].split(".", 1)[0]  # pt-BR, zh_CN.UTF-8 → pt, zh
    if base in CATALOGUED:
        return base
    if declared not in _noted:
        _noted.add(declared)
        print(
            f"note: UNDERCROFT_LANG={declared!r} has no catalogue (catalogued: {', '.join(CATALOGUED)}); "
            "result strings are in English",
            file=sys.stderr,
        )
    return "en"


def message(key: str, *, env: Mapping[str, str] | None = None, **fields: object) -> str:
    """The result string ``key`` in the declared language, formatted with ``fields`` (English when missing)."""
    english = catalogue("en")[key]  # an unknown key is a programming error: KeyError, in every language
    template = catalogue(language(env)).get(key, english)
    return template.format(**fields)
