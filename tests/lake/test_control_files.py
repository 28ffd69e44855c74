"""A lake's control files in the wrong shape, or a lake that cannot be written, stop a command with one line naming
the file and why (exit 2), never a traceback: a ``.lease`` that is a folder, a ``catalog.duckdb`` that is a folder
(said by a run's preflight and by ``verify`` / ``repair`` before anything moves, not after a whole run computed), a
read-only lake under every command that takes the lease, and a file the command cannot write met past the lease."""

from __future__ import annotations

import errno
import os
import socket
import subprocess
from contextlib import contextmanager
from pathlib import Path
from typing import Iterator

import pyarrow as pa
import pytest

from dialogbench.run.registry import run_for
from dialogbench.cli import main
from dialogbench.lake import Lake
from dialogbench.lake.catalog import CATALOG, build_catalog, catalog_problem
from dialogbench.lake.lease import LakeNotWritable, lake_lease
from dialogbench.lake.links import LakeLinkError
from dialogbench.lake.version import FORMAT
from dialogbench.run.preflight import check
from dialogbench.run.registry import open_lake
from tests.damage import truncate

LEASED = ("verify", "repair", "catalog", "report", "explore", "migrate")  # every command that takes the lease


@pytest.fixture
def lake(tmp_path) -> Lake:
    lake = open_lake(tmp_path / "lake")
    lake.write("generations", pa.table({"value": pa.array([1, 2], pa.int64())}), partition={"model": "a"})
    (lake.root / "lake.json").write_text(f'{{"format": {FORMAT}}}\n')
    return lake


def one_error(capsys) -> str:
    err = capsys.readouterr().err
    lines = [line for line in err.splitlines() if line.startswith("error:") or "Traceback" in line]
    assert len(lines) == 1, err
    return lines[0]


def contents(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None) for p in sorted(root.rglob("*"))}


@pytest.mark.parametrize("command", LEASED)
def test_a_lease_that_is_a_folder_is_one_line(lake, capsys, command):
    (lake.root / ".lease").mkdir()
    assert main([command, "--lake", str(lake.root)]) == 2
    assert f"{lake.root / '.lease'} is not a regular file (a folder)" in one_error(capsys)


def test_a_lease_that_is_a_socket_or_fifo_is_refused_naming_it(lake):
    os.mkfifo(lake.root / ".lease")
    with pytest.raises(LakeLinkError, match="a FIFO"):
        with lake_lease(lake.root):
            pass
    (lake.root / ".lease").unlink()
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(lake.root / ".lease"))
        with pytest.raises(LakeLinkError, match="a socket"):
            with lake_lease(lake.root):
                pass


def test_a_catalog_that_is_a_folder_is_said_before_any_work(lake, make_config, capsys):
    """A run's preflight names it (before, the run computed every cell, then failed renaming the new catalog over the
    folder with a traceback); ``verify`` refuses before it quarantines anything; ``catalog`` names it."""
    (lake.root / CATALOG).mkdir()
    assert "a folder" in str(catalog_problem(lake.root))
    config = make_config()  # its lake is tmp_path / "lake", this one
    assert any(f"{lake.root / CATALOG} is not a regular file (a folder)" in p for p in check(run_for(config)).inputs)
    damaged = lake.files("generations")[0]
    truncate(damaged)
    for command in ("verify", "repair", "catalog"):
        assert main([command, "--lake", str(lake.root)]) == 2, command
        assert f"{lake.root / CATALOG} is not a regular file (a folder)" in one_error(capsys), command
    assert damaged.exists() and not (lake.root / "_quarantine").exists()  # verify moved nothing
    with pytest.raises(LakeLinkError):
        build_catalog(lake)
    (lake.root / CATALOG).rmdir()
    (lake.root / f"{CATALOG}.wal").mkdir()
    assert "catalog.duckdb.wal is not a regular file" in str(catalog_problem(lake.root))


@contextmanager
def read_only(root: Path) -> Iterator[str]:
    """``root`` made read-only for the ``with`` block; yields why a write fails there. Root, whom permissions do not
    stop, gets a read-only bind mount of the folder on itself; others mode 0555 / 0444 on everything."""
    if os.geteuid() != 0:
        paths = [root, *root.rglob("*")]
        for path in paths:
            path.chmod(0o555 if path.is_dir() else 0o444)
        try:
            yield "Permission denied"
        finally:
            for path in paths:
                path.chmod(0o755 if path.is_dir() else 0o644)
        return
    bound = subprocess.run(["mount", "--bind", str(root), str(root)], capture_output=True, text=True)
    if bound.returncode:
        pytest.skip(f"root, and no bind mount to make a read-only lake ({bound.stderr.strip()})")
    try:
        remounted = subprocess.run(["mount", "-o", "remount,bind,ro", str(root)], capture_output=True, text=True)
        if remounted.returncode:
            pytest.skip(f"root, and no read-only remount ({remounted.stderr.strip()})")
        yield "Read-only file system"
    finally:
        subprocess.run(["umount", "-l", str(root)], check=True)


def test_a_read_only_lake_is_one_line_for_every_command_that_takes_the_lease(lake, capsys):
    """Before, each command that writes the lake ended in a traceback (exit 1) opening ``.lease``. ``query`` still
    reads a read-only lake."""
    assert main(["catalog", "--lake", str(lake.root)]) == 0  # a lease file and a catalog exist
    capsys.readouterr()
    before = contents(lake.root)
    with read_only(lake.root) as why:
        for command in LEASED:
            assert main([command, "--lake", str(lake.root)]) == 2, command
            line = one_error(capsys)
            assert f"cannot write its lease file {lake.root / '.lease'} ({why})" in line, (command, line)
        with pytest.raises(LakeNotWritable):
            with lake_lease(lake.root):
                pass
        assert main(["query", "select count(*) from generations", "--lake", str(lake.root), "--format", "csv"]) == 0
        assert capsys.readouterr().out.splitlines()[-1] == "2"
    assert contents(lake.root) == before


def test_a_file_that_cannot_be_written_past_the_lease_is_one_line(lake, capsys, monkeypatch):
    """A folder of the lake mounted read-only under a writable lake: the move into quarantine fails there."""
    truncate(lake.files("generations")[0])

    def refuse(_lake, damaged):
        if damaged:
            raise OSError(errno.EROFS, os.strerror(errno.EROFS), str(damaged[0].path))

    monkeypatch.setattr("dialogbench.lake.verify.quarantine", refuse)
    assert main(["verify", "--lake", str(lake.root)]) == 2
    line = one_error(capsys)
    assert f"cannot write {lake.files('generations')[0]} (Read-only file system)" in line, line


def test_a_file_where_the_quarantine_folder_goes_is_one_line(lake, capsys):
    (lake.root / "_quarantine").write_text("not a folder")
    truncate(lake.files("generations")[0])
    assert main(["verify", "--lake", str(lake.root)]) == 2
    line = one_error(capsys)
    assert f"cannot write {lake.root / '_quarantine'}/" in line and "(Not a directory)" in line, line


@pytest.mark.parametrize("shape, said", [("folder", "lake.json is not a regular file (a folder)"),
                                         ("fifo", "lake.json is not a regular file (a FIFO)"),
                                         ("garbage", "lake.json: not a lake format marker")])
def test_a_format_marker_in_the_wrong_shape_is_one_line_for_readers_and_writers(lake, capsys, shape, said):
    """Held before (the red team's control-file cases): kept so."""
    marker = lake.root / "lake.json"
    marker.unlink()
    {"folder": marker.mkdir, "fifo": lambda: os.mkfifo(marker), "garbage": lambda: marker.write_text("{{{")}[shape]()
    for args in (["query", "select 1"], ["verify"], ["catalog"]):
        assert main([*args, "--lake", str(lake.root)]) == 2, args
        assert said in one_error(capsys), args
