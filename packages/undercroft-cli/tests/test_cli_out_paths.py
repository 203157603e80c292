"""Every ``--out`` takes a new path or an existing regular file, nothing else, and never chmods what it did not create.

A FIFO (made with ``os.mkfifo``), a symlink to a device and a directory are refused with exit 1 before the
command does anything: their mode is unchanged, an export appends no egress record, a forget destroys
nothing. An existing regular file is replaced by a fresh 0600 file (its old inode, and so its old mode, is
left alone); a new path is created 0600.
"""

from __future__ import annotations

import os
import sqlite3
import stat
from collections.abc import Callable
from pathlib import Path

import pytest

Cli = Callable[..., tuple[int, str, str]]


@pytest.fixture
def run(cli_run: Cli) -> Cli:
    return cli_run


def _egress(tmp_path: Path) -> list[str]:
    with sqlite3.connect(tmp_path / "palace" / "vaults" / "default" / "vault.db") as db:
        return [str(r[0]) for r in db.execute("SELECT record_id FROM audit WHERE record_id LIKE 'egress/%'")]


def _specials(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo, 0o644)
    device = tmp_path / "null-link"
    device.symlink_to(os.devnull)  # refused as a link: /dev/null itself is never opened, let alone chmod'ed
    directory = tmp_path / "adir"
    directory.mkdir(mode=0o755)
    return {
        "fifo": (fifo, "is a FIFO, not a regular file"),
        "device symlink": (device, "is a symlink; refusing to write through it"),
        "directory": (directory, "is a directory"),
    }


def _modes(paths: dict[str, tuple[Path, str]]) -> dict[str, int]:
    modes = {name: os.lstat(path).st_mode for name, (path, _) in paths.items()}
    modes[os.devnull] = os.stat(os.devnull).st_mode
    return modes


@pytest.mark.parametrize("kind", ["fifo", "device symlink", "directory"])
def test_export_refuses_a_special_out_and_records_no_egress(run: Cli, tmp_path: Path, kind: str) -> None:
    run("remember", "Alice chose GraphQL.", "--wing", "work")
    specials = _specials(tmp_path)
    before, egress = _modes(specials), _egress(tmp_path)
    path, reason = specials[kind]
    code, _, err = run("export", "--out", str(path))
    assert code == 1 and reason in err and "Traceback" not in err
    assert _modes(specials) == before
    assert _egress(tmp_path) == egress  # nothing left the vault, so the chain does not say it did


@pytest.mark.parametrize("kind", ["fifo", "device symlink"])
def test_every_out_option_refuses_a_special_file(run: Cli, tmp_path: Path, kind: str) -> None:
    drawer = run("remember", "Forget this line.", "--wing", "scratch")[1].split()[1]
    specials = _specials(tmp_path)
    before = _modes(specials)
    path, reason = specials[kind]
    for argv in (
        ("witness", "emit", "--out", str(path)),
        ("forget", drawer, "--out", str(path)),
        ("retention", "sweep", "--out", str(path)),
        ("bundle", "keygen", "--out", str(path)),
        ("bundle", "sign-keygen", "--out", str(path)),
    ):
        code, _, err = run(*argv)
        assert code == 1 and reason in err, (argv, code, err)
    assert _modes(specials) == before
    assert "Forget this line." in run("drawer", "get", drawer)[1]  # the refused forget destroyed nothing


def test_an_existing_regular_file_is_replaced_not_chmodded(run: Cli, tmp_path: Path) -> None:
    run("remember", "Alice chose GraphQL.", "--wing", "work")
    target = tmp_path / "export.jsonl"
    target.write_text("old\n")
    target.chmod(0o644)
    other = tmp_path / "hardlink.jsonl"
    os.link(target, other)  # a second name for the operator's old file: its mode and bytes stay
    assert run("export", "--out", str(target))[0] == 0
    assert stat.S_IMODE(target.stat().st_mode) == 0o600 and "GraphQL" in target.read_text()
    assert stat.S_IMODE(other.stat().st_mode) == 0o644 and other.read_text() == "old\n"
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(".tmp")]  # no reservation left behind


class _FullDisk:
    """``os`` as private_file sees it, except that fsync fails as on a full disk (fault injection)."""

    def __getattr__(self, name: str) -> object:
        return getattr(os, name)

    @staticmethod
    def fsync(descriptor: int) -> None:
        raise OSError(28, "No space left on device")


def test_an_export_whose_write_fails_records_no_egress_and_leaves_no_file(
    run: Cli, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from undercroft_cli._internal import private_file

    run("remember", "Alice chose GraphQL.", "--wing", "work")
    egress = _egress(tmp_path)
    target = tmp_path / "export.jsonl"
    with monkeypatch.context() as fault:
        fault.setattr(private_file, "os", _FullDisk())
        code, _, err = run("export", "--out", str(target))
    assert code == 1 and "No space left on device" in err and not target.exists()
    assert _egress(tmp_path) == egress  # the bytes never landed, so the chain does not say they left
    assert run("export", "--out", str(target))[0] == 0 and _egress(tmp_path) == [*egress, "egress/export"]
