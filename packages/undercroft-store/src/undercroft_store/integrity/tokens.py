"""The late stage's stored token matrices in verify and repair (`kernel.token_table`).

* `token_leg` — the verify leg (``VerifyReport.tokens``): every stored matrix opened under its drawer's
  ``{id}/tok`` domain. A blob that fails its seal or tag (altered bytes, a matrix moved to another drawer's row
  or from another vault), one that opens but is not this format, and a row whose drawer is gone (the delete
  path removes it in the delete's transaction, so an orphan is evidence, and possibly a forgotten text's
  residue) are **failures**: the integrity verdict. A live drawer with no matrix, or whose matrix is stale
  (made from other content, or by another encoder than the one attached), is **reported**, not failed: the
  stage is derived, the search encodes such a drawer in RAM, and ``repair --tokens`` builds it.
* `repair_tokens` — repair's step: failed and orphan rows are always dropped (derived data is never trusted);
  with ``build`` (``repair --tokens``) every missing or stale matrix is encoded from the verified content by
  the attached late encoder, ``batch`` drawers per committed transaction. The step is resumable by
  construction: a matrix names the encoder and the content digest it was made from, so an interrupted run's
  committed batches are current at the next run and counted as ``current``, not encoded again.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Final

from undercroft_vault import AuditRow, Domain, compute_tag, constant_time_equal

from undercroft_store.errors import LateStageMissing, RecordTampered
from undercroft_store.kernel._internal.context import VaultContext
from undercroft_store.kernel._internal.reading import verified_drawer
from undercroft_store.kernel.tier_tables import Envelope
from undercroft_store.kernel.token_codebook import compress_matrices, drop_codebook, read_codebook
from undercroft_store.kernel.token_table import (
    TOKEN_TABLE,
    delete_seqs,
    pack_matrix,
    table_exists,
    unpack_matrix,
    write_rows,
)

__all__ = ["TokenRepair", "TokenVerdict", "repair_tokens", "token_leg"]

_SHOWN: Final = 20  # findings listed per kind in the text form (the JSON carries every one)
_LIVE: Final = "SELECT 1 FROM drawers WHERE seq = ? AND id = ?"


@dataclass
class TokenVerdict:
    """The stored matrices against the drawers: failures fail verify; missing and stale are reported."""

    stored: int = 0
    failed: list[str] = field(default_factory=list)  # "<drawer id>: <why>" or "seq <n>: <why>" (orphan)
    missing: list[str] = field(default_factory=list)  # drawer ids with no matrix
    stale: list[str] = field(default_factory=list)  # drawer ids whose matrix is of other content or encoder

    @property
    def ok(self) -> bool:
        """True when no stored matrix failed (missing and stale ones are not integrity findings)."""
        return not self.failed

    def lines(self) -> list[str]:
        """The leg's lines in `VerifyReport.render`."""
        lines = [
            f"token matrices:   {self.stored} stored, {len(self.failed)} failed, "
            f"{len(self.missing)} missing, {len(self.stale)} stale"
        ]
        lines += [f"  TOKENS: {finding}" for finding in self.failed]
        for marker, findings in (("NO TOKENS", self.missing), ("STALE TOKENS", self.stale)):
            lines += [f"  {marker}: {drawer_id}" for drawer_id in findings[:_SHOWN]]
            if len(findings) > _SHOWN:
                lines.append(f"  {marker}: … {len(findings) - _SHOWN} more (repair --tokens builds them)")
        return lines


@dataclass
class TokenRepair:
    """What repair's token step did."""

    dropped: int = 0  # failed or orphan rows deleted
    built: int = 0  # missing or stale matrices encoded and stored
    current: int = 0  # already current (an interrupted run's committed batches included)
    failures: int = 0  # matrices the encoder degraded to empty (not stored; a later run tries again)
    compressed: int = 0  # matrices PQ-coded by the codebook this run trained (past UNDERCROFT_TOK_PQ_MIN)

    def to_dict(self) -> dict[str, int]:
        """JSON-ready counts."""
        return {
            "dropped": self.dropped,
            "built": self.built,
            "current": self.current,
            "failures": self.failures,
            "compressed": self.compressed,
        }


@dataclass
class _Survey:
    verdict: TokenVerdict
    bad_seqs: list[int]
    to_build: list[tuple[int, str, str]]  # (seq, drawer id, verified content)
    current: int
    codebook_failed: bool = False


def _survey(context: VaultContext, encoder: str | None) -> _Survey | None:
    """Every drawer against its stored matrix (None: the vault holds no token table and no encoder is set)."""
    connection = context.connection
    exists = table_exists(connection)
    if not exists and encoder is None:
        return None
    envelope = Envelope(context)
    blobs = (
        {int(seq): bytes(blob) for seq, blob in connection.execute(f"SELECT seq, blob FROM {TOKEN_TABLE}")}  # noqa: S608
        if exists
        else {}
    )
    verdict = TokenVerdict(stored=len(blobs))
    state = read_codebook(connection, envelope)
    if state.failure is not None:  # every PQ row coded against it is undecodable: failed below as well
        verdict.failed.append(f"codebook: {state.failure}")
    bad: list[int] = []
    to_build: list[tuple[int, str, str]] = []
    current = 0
    rows = connection.execute("SELECT seq, id, meta_json, content, tag FROM drawers ORDER BY seq").fetchall()
    for seq, drawer_id, meta, content, tag in rows:
        blob = blobs.pop(int(seq), None)
        if not constant_time_equal(compute_tag(context.keys, drawer_id, bytes(meta), bytes(content)), bytes(tag)):
            continue  # the drawers leg names it and signals it once; nothing is derived from it here
        try:
            drawer = verified_drawer(context, drawer_id, bytes(meta), bytes(content), bytes(tag))
        except RecordTampered:
            continue  # the drawers leg names it; nothing is derived from a row that does not verify
        if blob is None:
            verdict.missing.append(drawer_id)
            to_build.append((int(seq), drawer_id, drawer.content))
            continue
        plain = envelope.open(Domain.tokens(drawer_id), blob)
        matrix = None if plain is None else unpack_matrix(plain, state.stored)
        if matrix is None:
            why = "fails its seal (altered, or moved from another drawer)" if plain is None else "is not a matrix"
            verdict.failed.append(f"{drawer_id}: the stored matrix {why}")
            bad.append(int(seq))
            to_build.append((int(seq), drawer_id, drawer.content))
        elif not matrix.current(encoder or matrix.encoder, drawer.content):
            verdict.stale.append(drawer_id)
            to_build.append((int(seq), drawer_id, drawer.content))
        else:
            current += 1
    for seq in sorted(blobs):  # rows no live drawer holds: the delete path never leaves one
        verdict.failed.append(f"seq {seq}: a stored matrix with no drawer (orphan)")
        bad.append(seq)
    return _Survey(verdict, bad, to_build, current, state.failure is not None)


def token_leg(context: VaultContext, _rows: list[AuditRow]) -> TokenVerdict | None:
    """The verify leg as the kernel's seam calls it (None: this vault never stored a matrix)."""
    encoder = context.late_encoder
    if not table_exists(context.connection):
        return None
    survey = _survey(context, None if encoder is None else encoder.name)
    return None if survey is None else survey.verdict


def repair_tokens(
    context: VaultContext,
    *,
    build: bool,
    batch: int,
    progress: Callable[[str, int, int], None],
) -> TokenRepair | None:
    """Drop failed and orphan matrices; with ``build``, encode every missing or stale one (None: nothing to do).

    ``build`` needs the late encoder attached to the handle (`VaultStore.attach_late_encoder`)."""
    encoder = context.late_encoder
    if build and encoder is None:
        raise LateStageMissing("repair --tokens needs a late encoder: declare UNDERCROFT_RERANKER=colbert|colbert-ort")
    survey = _survey(context, None if encoder is None else encoder.name)
    if survey is None:
        return None
    report = TokenRepair(current=survey.current)
    connection = context.connection
    if survey.bad_seqs or survey.codebook_failed:
        connection.execute("BEGIN IMMEDIATE")
        try:
            delete_seqs(connection, survey.bad_seqs)
            if survey.codebook_failed:
                drop_codebook(connection)  # never trusted; the rows coded against it went with it
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        report.dropped = len(survey.bad_seqs)
    if not build or encoder is None:
        return report
    envelope = Envelope(context)
    todo = survey.to_build
    for start in range(0, len(todo), batch):
        chunk = todo[start : start + batch]
        before = encoder.late_failures
        matrices = encoder.encode_documents([content for _, _, content in chunk])
        report.failures += encoder.late_failures - before
        rows = [
            (seq, drawer_id, pack_matrix(encoder.name, content, matrix))
            for (seq, drawer_id, content), matrix in zip(chunk, matrices, strict=True)
            if matrix.shape[0] > 0
        ]
        connection.execute("BEGIN IMMEDIATE")  # each batch commits: a killed run keeps what it built
        try:
            # A drawer deleted by another handle since the survey gets no matrix: never an orphan row.
            rows = [row for row in rows if connection.execute(_LIVE, row[:2]).fetchone() is not None]
            write_rows(connection, envelope, rows)
            connection.execute("COMMIT")
        except BaseException:
            if connection.in_transaction:
                connection.execute("ROLLBACK")
            raise
        report.built += len(rows)
        progress("tokens", start + len(chunk), len(todo))
    report.compressed = compress_matrices(context, context.late_pq_min)
    return report
