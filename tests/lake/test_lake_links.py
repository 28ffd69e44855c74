"""The lake follows no link among its own files: a lake whose ``.lease``, ``lake.json``, ``catalog.duckdb`` or a
table's folder is a symbolic link is refused by every command (exit 2, one line naming it), and the file the link
leads to keeps its bytes; a temp file that is a link is removed, never followed. The lake's root may be a link.

The commands' answers come from ``dialogbench.cli.main`` in this process (``in_process``: the same parser, commands
and error handling, none of them going past its refusal but the lake root's query) rather than from a Python start
per command (~0.5 s of CPU each, 17 of them); ``run``, which would bring Prefect into this process, stays a real CLI
process, with no Prefect server and no Prefect database made for it (``cli_before_prefect``: it is refused before
Prefect starts, and seeding one cost a Prefect migration, ~8 s of CPU once per test process)."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pytest
import yaml

from dialogbench.run.registry import open_lake
from dialogbench.lake import Lake
from dialogbench.lake.lease import holder, lake_lease
from dialogbench.lake.links import LakeLinkError, check_tree
from dialogbench.lake.version import FORMAT, lake_format
from tests.conftest import config_dict
from tests.lake.test_query import in_process
from tests.run.test_preflight import cli_before_prefect

CONTROL = (".lease", "lake.json", "catalog.duckdb")
SECRET = b"the operator's file: never truncated, never written\n"


def small(values: list[int]) -> pa.Table:
    return pa.table({"value": pa.array(values, pa.int64())})


@pytest.fixture
def lake(tmp_path) -> Lake:
    lake = open_lake(tmp_path / "lake")
    lake.write("generations", small([1]), partition={"model": "a"})
    (lake.root / "lake.json").write_text(f'{{"format": {FORMAT}}}\n')
    return lake


def link_out(lake: Lake, name: str, tmp_path: Path) -> Path:
    """``<lake>/<name>`` made a link to a file outside the lake; returns that file."""
    target = tmp_path / f"target-of-{name.strip('.')}"
    target.write_bytes(SECRET)
    path = lake.root / name
    if path.exists():
        path.unlink()
    path.symlink_to(target)
    return target


def test_a_lease_that_is_a_link_is_refused_and_its_target_untouched(lake, tmp_path):
    target = link_out(lake, ".lease", tmp_path)
    with pytest.raises(LakeLinkError, match=r"\.lease is a symbolic link"):
        with lake_lease(lake.root, run_id="r"):
            pass
    assert target.read_bytes() == SECRET
    assert holder(lake.root) == {}  # its note is not read through the link either


def test_a_lease_with_another_hard_link_is_refused(lake, tmp_path):
    other = tmp_path / "other-name"
    other.write_bytes(SECRET)
    os.link(other, lake.root / ".lease")
    with pytest.raises(LakeLinkError, match="2 hard links"):
        with lake_lease(lake.root):
            pass
    assert other.read_bytes() == SECRET


@pytest.mark.parametrize("name", CONTROL)
def test_every_command_refuses_a_linked_control_file_naming_it(lake, tmp_path, name, capfd):
    """query, verify, repair, catalog and report (``main`` in this process) and run (its preflight, before Prefect;
    a real CLI process) all exit 2 with one line naming the link; the file it leads to keeps its bytes."""
    target = link_out(lake, name, tmp_path)
    config = tmp_path / "config.yaml"
    config.write_text(yaml.safe_dump(config_dict(lake.root)))
    commands = {"query": ["query", "select count(*) from generations", "--lake", str(lake.root)],
                "verify": ["verify", "--lake", str(lake.root)], "repair": ["repair", "--lake", str(lake.root)],
                "catalog": ["catalog", "--lake", str(lake.root)], "report": ["report", "--lake", str(lake.root)],
                "run": ["run", "--config", str(config)]}
    for command, args in commands.items():
        done = cli_before_prefect(args, tmp_path) if command == "run" else in_process(args, capfd)
        assert done.returncode == 2, (command, done.stdout, done.stderr[-2000:])
        lines = [line for line in done.stderr.splitlines() if line.startswith("error:") or "Traceback" in line]
        assert len(lines) == 1 and f"{lake.root / name} is a symbolic link -> {target}" in lines[0], (command, lines)
        assert target.read_bytes() == SECRET, command


def test_a_linked_table_or_partition_folder_is_refused(lake, tmp_path, capfd):
    elsewhere = tmp_path / "elsewhere"
    (elsewhere / "model=b").mkdir(parents=True)
    (lake.root / "generations" / "model=b").symlink_to(elsewhere / "model=b")
    with pytest.raises(LakeLinkError, match=r"generations/model=b is a symbolic link"):
        check_tree(lake.root)
    with pytest.raises(LakeLinkError):  # a read that meets it (one made after the command's start) refuses too
        lake.read("generations")
    (lake.root / "generations" / "model=b").unlink()
    (lake.root / "judgments_elsewhere").symlink_to(elsewhere, target_is_directory=True)
    with pytest.raises(LakeLinkError, match="judgments_elsewhere is a symbolic link"):
        lake_format(lake)
    done = in_process(["query", "select 1", "--lake", str(lake.root)], capfd)
    assert done.returncode == 2 and "judgments_elsewhere is a symbolic link" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_temp_file_that_is_a_link_is_removed_never_followed(lake, tmp_path):
    target = tmp_path / "outside.parquet"
    target.write_bytes(SECRET)
    folder = lake.files("generations")[0].parent
    (folder / ".part-x-0123abcd.parquet.tmp").symlink_to(target)
    (folder / ".part-y.parquet.json.0123abcd.json.tmp").symlink_to(target)
    assert lake.clean_temp_files() == 2
    assert not [p for p in folder.iterdir() if p.name.endswith(".tmp")]
    assert target.read_bytes() == SECRET
    assert lake.read("generations").num_rows == 1


def test_the_lake_root_itself_may_be_a_link(lake, tmp_path, capfd):
    alias = tmp_path / "alias"
    alias.symlink_to(lake.root, target_is_directory=True)
    aliased = open_lake(alias)
    check_tree(alias)
    with lake_lease(alias):
        assert aliased.read("generations").num_rows == 1
    done = in_process(["query", "select count(*) as n from generations", "--lake", str(alias), "--format", "csv"],
                      capfd)
    assert done.returncode == 0 and done.stdout.split() == ["n", "1"], done.stderr[-2000:]
