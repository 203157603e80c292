"""The localisation seam for result strings: ``UNDERCROFT_LANG`` picks a catalogue; errors and help stay English.

Only English is catalogued yet; every other declared language falls back to it key by key, so adding a
language is adding a catalogue, never touching a command.
"""

from __future__ import annotations

import os
from collections.abc import Mapping

__all__ = ["CATALOGUES", "ENGLISH", "language", "message"]

#: English result strings, by key. Fields are ``str.format`` names.
ENGLISH: Mapping[str, str] = {
    "mine.summary": "{verb}: {files} file(s), {drawers} drawer(s) — created {created}, updated {updated}, "
    "unchanged {unchanged}, quarantined {quarantined}, skipped {skipped}",
    "mine.skip": "skipped: {path}: {reason}{detail}",
    "mine.quarantined": "quarantined: {aimed} filed as {landed} (held for review)",
    "mine.dry_run": "dry run: nothing written",
    "mine.would_file": "{verb}: {files} file(s), {drawers} drawer(s) would be filed — {rooms}; skipped {skipped}",
    "delete_by_source.summary": "deleted {count} drawer(s) from {source}",
    "delete_by_source.would": "would delete {count} drawer(s) from {source} (dry run: nothing deleted)",
    "daemon.pass": "sweep {number}: created {created}, unchanged {unchanged}, quarantined {quarantined}, "
    "skipped {skipped}",
    "export.summary": "exported {drawers} drawer(s), {facts} fact(s), {entities} entit(ies), {tunnels} tunnel(s)"
    " to {target}",
    "export.sealed": "sealed bundle for {recipient} written to {target} (manifest {manifest})",
    "import.summary": "imported {drawers} drawer(s) from {source} — created {created}, updated {updated}, "
    "unchanged {unchanged}, quarantined {quarantined}, skipped {skipped}; facts {facts}, tunnels {tunnels}",
    "import.attested": "bundle attestation: {status}{sender}",
    "config.starts": "This environment starts",
    "config.refuses": "This environment would refuse to start",
}
#: Catalogues by language code; a missing key falls back to English.
CATALOGUES: Mapping[str, Mapping[str, str]] = {"en": ENGLISH}


def language(env: Mapping[str, str] | None = None) -> str:
    """The language ``UNDERCROFT_LANG`` declares, ``en`` when unset or not catalogued."""
    declared = (os.environ if env is None else env).get("UNDERCROFT_LANG", "en").strip().lower()
    return declared if declared in CATALOGUES else "en"


def message(key: str, *, env: Mapping[str, str] | None = None, **fields: object) -> str:
    """The result string ``key`` in the declared language, formatted with ``fields``."""
    template = CATALOGUES[language(env)].get(key, ENGLISH[key])
    return template.format(**fields)
