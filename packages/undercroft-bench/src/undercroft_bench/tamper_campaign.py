"""The raw-file tamper campaign: random single-bit flips in vault.db and vault.json, classified by the product.

Each trial copies a closed reference palace, flips ONE bit at a uniformly random byte of ``vault.db`` (its
WAL checkpointed in, so the main file holds every page) or of ``vault.json`` — the file is picked with
probability ``json_share`` for the manifest, so the small manifest gets as many trials as its risk deserves
rather than its 0.3 % share of the bytes — and then asks the library, in process, what it makes of it:

* ``refused``  — opening fails with an integrity verdict (an `IntegrityError`, or SQLite's own
  ``SQLITE_CORRUPT``/``SQLITE_NOTADB``, which every surface maps to exit 2);
* ``detected`` — it opens, and verify reports VERIFY FAILED or raises an integrity verdict; a trial whose
  verify passed but whose reads then raised an integrity verdict is ``detected`` at stage ``read``;
* ``harmless`` — it opens, verify passes and every readable section (`tamper_vault.snapshot`: the full
  export plus the surfaces' reads) is byte-identical to the reference;
* ``derived``  — hmac-only only: verify passes and the one value changed at rest is a drawer's clear
  ``embedding``, which the specification places outside the HMAC envelope ("derived data outside the HMAC
  envelope: tampering with it can hide records from search … but can never forge a record"); the export's
  codes and the search ranking may differ. Counted and listed, not a defect of this build;
* ``silent``   — verify passes and something readable differs (a defect);
* ``exit1``    — a typed failure that is not an integrity verdict (the CLI would exit 1 where 2 is due);
* ``crash``    — any other exception (a traceback; a defect).

Every ``cli_every``-th trial is also run through the real ``undercroft verify`` program on its own copy,
and its exit code compared with the one the in-process class implies.
"""

from __future__ import annotations

import os
import random
import shutil
import sqlite3
import subprocess
import sys
import tempfile
import time
from collections import Counter
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from undercroft_core import HashEmbedder
from undercroft_core.errors import IntegrityError, UndercroftError
from undercroft_store import Palace

from undercroft_bench._internal.sqlite_pages import PageMap, page_map
from undercroft_bench._internal.tamper_vault import VAULT, build_vault, snapshot
from undercroft_bench.errors import Error

__all__ = [
    "CLASSES",
    "CampaignReport",
    "CampaignSettings",
    "Trial",
    "classify_error",
    "flip_bit",
    "format_campaign",
    "judge",
    "run_campaign",
]

#: Every class a trial can land in; the last three are defects.
CLASSES = ("refused", "detected", "harmless", "derived", "silent", "exit1", "crash")
DEFECTS = ("silent", "exit1", "crash")
_MALFORMED = frozenset({"SQLITE_CORRUPT", "SQLITE_NOTADB"})
_FILES = ("vault.db", "vault.json")


@dataclass(frozen=True, slots=True)
class CampaignSettings:
    """One campaign: how many trials, the seed, the manifest's share of trials, the level, the CLI sample."""

    trials: int = 1000
    seed: int = 0
    json_share: float = 0.5
    level: str = "sealed"
    cli_every: int = 50

    def validate(self) -> None:
        """Raise the bench's `Error` on a value the campaign cannot run with."""
        if self.trials < 1:
            raise Error(f"--trials must be at least 1, got {self.trials}")
        if not 0.0 <= self.json_share <= 1.0:
            raise Error(f"--json-share must lie in [0, 1], got {self.json_share}")
        if self.level not in ("sealed", "hmac-only"):
            raise Error(f"--level must be sealed or hmac-only, got {self.level!r}")
        if self.cli_every < 0:
            raise Error(f"--cli-every must be 0 (never) or positive, got {self.cli_every}")


@dataclass(slots=True)
class Trial:
    """One flip and what the product made of it."""

    index: int
    file: str
    offset: int
    bit: int
    page: int | None
    owner: str | None
    outcome: str = ""
    stage: str = ""
    message: str = ""
    differs: list[str] = field(default_factory=list)
    cli_exit: int | None = None
    cli_agrees: bool | None = None


@dataclass(slots=True)
class CampaignReport:
    """The settings, the trials, the wall time and the reference's sizes."""

    settings: CampaignSettings
    trials: list[Trial]
    seconds: float
    sizes: dict[str, int]

    def counts(self, file: str | None = None) -> dict[str, int]:
        """Trials per class (all files, or one)."""
        tally = Counter(t.outcome for t in self.trials if file is None or t.file == file)
        return {name: tally.get(name, 0) for name in CLASSES}

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: settings, counts per file, every trial."""
        return {
            "settings": asdict(self.settings),
            "seconds": round(self.seconds, 2),
            "sizes": self.sizes,
            "counts": {"all": self.counts(), **{f: self.counts(f) for f in _FILES}},
            "trials": [asdict(t) for t in self.trials],
        }


def classify_error(error: BaseException) -> str:
    """``integrity`` for a verdict (exit 2 on every surface), ``exit1`` for a typed run failure, else ``crash``."""
    if isinstance(error, IntegrityError):
        return "integrity"
    if isinstance(error, sqlite3.DatabaseError):
        return "integrity" if getattr(error, "sqlite_errorname", "") in _MALFORMED else "exit1"
    if isinstance(error, UndercroftError | OSError | ValueError):  # what run_cli maps to exit 1
        return "exit1"
    return "crash"


def flip_bit(path: Path, offset: int, bit: int) -> None:
    """XOR bit ``bit`` (0-7) of the byte at ``offset`` of ``path``, in place."""
    with path.open("r+b") as handle:
        handle.seek(offset)
        byte = handle.read(1)[0]
        handle.seek(offset)
        handle.write(bytes([byte ^ (1 << bit)]))


def _describe(error: BaseException) -> str:
    return f"{type(error).__name__}: {error}"[:300]


def _rows(database: Path) -> dict[str, list[tuple[object, ...]]]:
    """Every table's rows as raw values (TEXT as bytes, nothing decoded; ``drawers.embedding`` left out),
    opened immutable: nothing is written."""
    connection = sqlite3.connect(f"file:{database}?mode=ro&immutable=1", uri=True)
    tables: dict[str, list[tuple[object, ...]]] = {}
    try:
        names = [r[0] for r in connection.execute("SELECT name FROM sqlite_master WHERE type = 'table'")]
        connection.text_factory = bytes
        for name in names:
            cursor = connection.execute(f'SELECT * FROM "{name}"')  # noqa: S608 - names from the schema
            columns = [d[0] for d in cursor.description]
            keep = [i for i, column in enumerate(columns) if not (name == "drawers" and column == "embedding")]
            tables[name] = [tuple(row[i] for i in keep) for row in cursor]
        return tables
    finally:
        connection.close()


def _only_embeddings_differ(reference: Path, tampered: Path) -> bool:
    """True when the single change at rest is in ``drawers.embedding`` (every other column of every table equal)."""
    try:
        before, after = _rows(reference), _rows(tampered)
    except (sqlite3.Error, UnicodeDecodeError):
        return False
    return before == after


def judge(home: Path, reference: dict[str, bytes], trial: Trial, *, reference_db: Path, level: str) -> None:
    """Open, verify and read the tampered palace ``home`` in process and fill in ``trial``'s outcome.

    ``reference`` is the untampered snapshot, ``reference_db`` the untampered vault.db (for the raw row diff
    that tells a ``derived`` hmac-only embedding change from a ``silent`` one)."""
    stage = "open"
    try:
        with Palace(home, read_only=True) as palace, palace.open_vault(VAULT, HashEmbedder(), read_only=True) as store:
            stage = "verify"
            report = store.verify()
            if not report.ok:
                trial.outcome, trial.stage = "detected", stage
                trial.message = report.render().splitlines()[-1][:300]
                detail = [line for line in report.render().splitlines() if "TAMPERED" in line or "BROKEN" in line]
                trial.message = "; ".join([*detail[:2], trial.message])[:300]
                return
            stage = "read"
            seen = snapshot(store)
    except Exception as error:  # noqa: BLE001 - the campaign's point is to classify whatever escapes
        kind = classify_error(error)
        trial.stage, trial.message = stage, _describe(error)
        trial.outcome = kind if kind != "integrity" else ("refused" if stage == "open" else "detected")
        return
    trial.stage = "read"
    trial.differs = [name for name in reference if seen.get(name) != reference[name]]
    if not trial.differs:
        trial.outcome = "harmless"
    elif (
        level == "hmac-only"
        and trial.owner == "drawers"  # the flip is in the table's own pages, not an index the rows cannot show
        and _only_embeddings_differ(reference_db, home / "vaults" / VAULT / "vault.db")
    ):
        trial.outcome = "derived"
    else:
        trial.outcome = "silent"


def _cli(home: Path) -> int:
    """The exit code of the real ``undercroft verify`` on ``home``."""
    program = shutil.which("undercroft", path=str(Path(sys.executable).parent)) or "undercroft"
    env = {k: v for k, v in os.environ.items() if not k.startswith("UNDERCROFT_")}
    env["UNDERCROFT_HOME"] = str(home)
    done = subprocess.run([program, "verify", "--vault", VAULT], env=env, capture_output=True, timeout=120, check=False)
    return done.returncode


def _expected_exit(trial: Trial) -> int:
    if trial.outcome == "refused" or (trial.outcome == "detected" and trial.stage in ("open", "verify")):
        return 2
    return 1 if trial.outcome in ("exit1", "crash") and trial.stage in ("open", "verify") else 0


def _pick(rng: random.Random, index: int, settings: CampaignSettings, sizes: dict[str, int], pages: PageMap) -> Trial:
    name = "vault.json" if rng.random() < settings.json_share else "vault.db"
    offset, bit = rng.randrange(sizes[name]), rng.randrange(8)
    page, owner = pages.locate(offset) if name == "vault.db" else (None, None)
    return Trial(index=index, file=name, offset=offset, bit=bit, page=page, owner=owner)


def run_campaign(settings: CampaignSettings, *, workdir: Path | None = None) -> CampaignReport:
    """Build the reference vault, then run every trial; nothing outside a temporary directory is touched."""
    settings.validate()
    rng = random.Random(settings.seed)  # noqa: S311 - reproducible flip positions, not secret
    with tempfile.TemporaryDirectory(dir=workdir) as scratch:
        root = Path(scratch)
        template = root / "reference"
        build_vault(template, level=settings.level)
        vault_dir = template / "vaults" / VAULT
        pages = page_map(vault_dir / "vault.db")
        sizes = {name: (vault_dir / name).stat().st_size for name in _FILES}
        probe = root / "probe"
        shutil.copytree(template, probe)
        with Palace(probe, read_only=True) as palace, palace.open_vault(VAULT, HashEmbedder(), read_only=True) as store:
            if not store.verify().ok:
                raise Error("the reference vault does not verify: the campaign has nothing to compare against")
            reference = snapshot(store)
        trials: list[Trial] = []
        started = time.perf_counter()
        for index in range(settings.trials):
            trial = _pick(rng, index, settings, sizes, pages)
            home = root / f"trial-{index}"
            shutil.copytree(template, home)
            flip_bit(home / "vaults" / VAULT / trial.file, trial.offset, trial.bit)
            if settings.cli_every and index % settings.cli_every == 0:
                twin = root / f"cli-{index}"
                shutil.copytree(home, twin)
            judge(home, reference, trial, reference_db=vault_dir / "vault.db", level=settings.level)
            if settings.cli_every and index % settings.cli_every == 0:
                trial.cli_exit = _cli(twin)
                trial.cli_agrees = trial.cli_exit == _expected_exit(trial)
                shutil.rmtree(twin, ignore_errors=True)
            shutil.rmtree(home, ignore_errors=True)
            trials.append(trial)
        seconds = time.perf_counter() - started
    return CampaignReport(settings=settings, trials=trials, seconds=seconds, sizes=sizes)


def format_campaign(report: CampaignReport) -> list[str]:
    """The summary table: class counts per file, CLI agreement, and one line per defect trial."""
    s = report.settings
    lines = [
        f"tamper campaign: {len(report.trials)} single-bit flips, seed {s.seed}, level {s.level}, "
        f"json share {s.json_share:g}, {report.seconds:.1f} s",
        f"reference: vault.db {report.sizes['vault.db']} bytes, vault.json {report.sizes['vault.json']} bytes",
        f"{'file':<11}" + "".join(f"{name:>10}" for name in CLASSES) + f"{'trials':>10}",
    ]
    for file in (*_FILES, None):
        counts = report.counts(file)
        label = file or "all"
        lines.append(f"{label:<11}" + "".join(f"{counts[n]:>10}" for n in CLASSES) + f"{sum(counts.values()):>10}")
    at_read = sum(1 for t in report.trials if t.outcome == "detected" and t.stage == "read")
    lines.append(f"detected only at read (verify passed, a read raised the verdict): {at_read}")
    sampled = [t for t in report.trials if t.cli_exit is not None]
    agree = sum(1 for t in sampled if t.cli_agrees)
    lines.append(f"undercroft verify subprocess: {agree}/{len(sampled)} exit codes agree with the in-process class")
    for t in report.trials:
        if t.outcome in DEFECTS or t.cli_agrees is False:
            where = f"page {t.page} ({t.owner})" if t.page is not None else "manifest"
            lines.append(
                f"  #{t.index} {t.outcome} {t.file}@{t.offset} bit {t.bit} {where} stage {t.stage}"
                f"{' differs ' + ','.join(t.differs) if t.differs else ''} cli={t.cli_exit}: {t.message}"
            )
    return lines
