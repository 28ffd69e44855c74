"""A folder that is not a lake is refused by every command that would write in it (``run``, ``migrate``), as ``query``
refuses it: one line naming the folder and what it holds, exit 2, every file in it intact. Only a missing or empty
folder becomes a lake; a format-1 lake (no marker) is told apart from a folder by the old lake's own signs. A run's
start touches only the temp files the lake's writers make, and only in the lake's own table folders."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dialogbench.cli import main
from dialogbench.lake import manifest
from dialogbench.lake.version import MARKER, NotALake, ensure_current, lake_format, migrate, refuse_foreign
from dialogbench.run.registry import open_lake, run_for
from tests.damage import killed_before_the_data_rename
from tests.lake.test_version import old_lake


def files_of(root) -> dict[str, bytes]:
    """Every file under ``root`` (links too, as their target's name): what a refused command must leave as it was."""
    found = {}
    for folder, dirs, names in os.walk(root):
        for name in names + [d for d in dirs if os.path.islink(os.path.join(folder, d))]:
            path = os.path.join(folder, name)
            found[os.path.relpath(path, root)] = (os.readlink(path).encode() if os.path.islink(path)
                                                  else open(path, "rb").read())
    return found


def home_like(root):
    """A user's folder: a dotfile, notes with temp files named as the lake names its own, a ``runs`` folder (a
    lake table's name) holding the user's own Parquet file."""
    (root / "notes").mkdir(parents=True)
    (root / ".bashrc").write_text("export PATH=$HOME/bin:$PATH\n")
    (root / "notes" / "x.parquet.tmp").write_bytes(b"an editor's swap file")
    (root / "notes" / ".draft-0123abcd.parquet.tmp").write_bytes(b"named like a lake's temp file")
    (root / "notes" / "todo.json.tmp").write_text("{}")
    (root / "runs").mkdir()
    pq.write_table(pa.table({"when": ["monday"], "km": [5.2]}), root / "runs" / "jogging.parquet")
    (root / "runs" / ".jogging-89abcdef.parquet.tmp").write_bytes(b"half a file")
    return root


def one_line(text: str) -> str:
    lines = text.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in text, text
    return lines[0]


def test_a_home_like_folder_is_refused_by_the_runs_lake_opening_and_migrate_every_file_intact(tmp_path, capsys,
                                                                                               config_file):
    home = home_like(tmp_path / "home")
    before = files_of(home)
    lake = open_lake(home)
    for opening in (refuse_foreign, ensure_current, migrate, lake_format):  # the CLI's check, a run's start, migrate
        with pytest.raises(NotALake, match=rf"^{home}: not a dialogbench lake \(no lake.json.*\.bashrc"):
            opening(lake)
    assert main(["migrate", "--lake", str(home)]) == 2
    error = one_line(capsys.readouterr().err)
    assert error.startswith(f"error: {home}: not a dialogbench lake") and ".bashrc" in error
    assert main(["run", "--config", str(config_file()), "--lake", str(home)]) == 2  # before preflight and the lease
    assert one_line(capsys.readouterr().err) == error
    assert files_of(home) == before and not (home / MARKER).exists() and not (home / ".lease").exists()


def test_the_flows_start_refuses_it_before_sweeping(tmp_path, make_config):
    """A deployment's run (no CLI): the flow's ``start-run`` task opens the lake and refuses before its sweep."""
    from tasks.lifecycle import start_run

    home = home_like(tmp_path / "home")
    before = files_of(home)
    with pytest.raises(NotALake, match="not a dialogbench lake"):
        start_run.fn(run_for(make_config(overrides={"lake": str(home)})))
    assert files_of(home) == before


@pytest.mark.parametrize("case", ["columns", "unpartitioned", "not parquet", "readme", "link"])
def test_a_folder_of_table_names_is_not_an_old_lake_unless_its_files_are_a_lakes(tmp_path, case):
    """No dotfile to give it away: only ``runs/`` (a table's name) holding a file the lake did not write. ``migrate``
    would adopt (record) it, a run would refuse with "run migrate": both refuse it as not a lake, and touch nothing."""
    root = tmp_path / "folder"
    folder = root / "runs" / ("" if case == "unpartitioned" else "run_id=r1")
    folder.mkdir(parents=True)
    runs_columns = {"run_id": ["r1"], "stage": ["x"]}
    if case == "columns":
        pq.write_table(pa.table({"run_id": ["r1"], "km": [5.2]}), folder / "part-1.parquet")
    elif case == "unpartitioned":
        pq.write_table(pa.table(runs_columns), folder / "part-1.parquet")
    elif case == "not parquet":
        (folder / "part-1.parquet").write_bytes(b"PAR1 but not really")
    elif case == "readme":
        pq.write_table(pa.table(runs_columns), folder / "part-1.parquet")
        (folder / "README.txt").write_text("my runs")
    else:
        (tmp_path / "elsewhere.parquet").write_bytes(b"mine")
        (folder / "part-1.parquet").symlink_to(tmp_path / "elsewhere.parquet")
    before = files_of(root)
    for opening in (ensure_current, migrate):
        with pytest.raises(NotALake, match=rf"^{root}: not a dialogbench lake .*runs/"):
            opening(open_lake(root))
    assert files_of(root) == before and not list(root.rglob(".*.json"))  # nothing adopted


def test_a_format_1_lake_as_it_was_written_still_migrates(tmp_path):
    """The old lake's signs, not its records (format 1 had none): its files, in their partition folders, with its
    tables' columns; its reports and catalog beside them."""
    lake = old_lake(tmp_path / "lake")
    for record in [p for p in lake.root.rglob(".*.json") if manifest.is_record(p)]:
        record.unlink()
    (lake.root / "reports").mkdir()
    (lake.root / "reports" / "report.html").write_text("<html></html>")
    assert lake_format(lake) == 1
    with pytest.raises(Exception, match="dialogbench migrate --lake"):
        ensure_current(lake)
    result = migrate(lake)
    assert result["from_format"] == 1 and result["judgment_files_split"] == 4 and result["files_quarantined"] == 0
    assert lake_format(lake) == 5 and (lake.root / "reports" / "report.html").read_text() == "<html></html>"


def test_a_new_or_empty_folder_still_becomes_a_lake(tmp_path):
    for root in (tmp_path / "missing", tmp_path / "empty", tmp_path / "checkout"):
        if root.name != "missing":
            root.mkdir()
        if root.name == "checkout":
            (root / "raw").mkdir()  # a checkout's data_lake: its vendored datasets
        refuse_foreign(open_lake(root))
        ensure_current(open_lake(root))
        assert lake_format(open_lake(root)) == 5


def test_the_run_start_sweep_touches_only_temp_files_the_lakes_writers_made(tmp_path, monkeypatch):
    lake = open_lake(tmp_path / "lake")
    ensure_current(lake, tables="files")  # a folder lake's temp files and records
    rows = pa.table({"cell_key": ["a"], "stage": ["s"], "run_id": ["r1"]})
    committed = lake.write("failures", rows, partition={"stage": "s"}, name="fixed.parquet")
    folder = committed.parent
    named_tmp = manifest.of(committed).tmp  # the temp name its record holds: a stale copy of that name is the lake's
    (folder / named_tmp).write_bytes(b"not the committed size")

    with killed_before_the_data_rename(monkeypatch):  # its record names its temp file, which is complete
        lake.write("failures", rows, partition={"stage": "s"}, name="second.parquet")
    killed_early = folder / manifest.temp_name("third.parquet")  # killed mid-write: the lake's name, no record yet
    killed_early.write_bytes(b"PAR1 half")
    record_tmp = folder / manifest.record_temp_name("third.parquet")
    record_tmp.write_text("{")
    strays = {folder / "x.parquet.tmp": b"not the lake's", folder / "notes.json.tmp": b"{}",
              folder / ".x.parquet.tmp": b"hidden, not a lake temp name",
              lake.root / "mine" / ".part-a-0123abcd.parquet.tmp": b"a lake's name, outside its table folders",
              lake.root / "reports" / ".part-b-0123abcd.parquet.tmp": b"in reports, never swept"}
    for path, data in strays.items():
        path.parent.mkdir(exist_ok=True)
        path.write_bytes(data)

    assert lake.clean_temp_files() == 4
    assert not (folder / named_tmp).exists() and not killed_early.exists() and not record_tmp.exists()
    assert (folder / "second.parquet").exists() and manifest.of(folder / "second.parquet").tmp is not None
    assert {p: p.read_bytes() for p in strays} == strays
    assert sorted(lake.read("failures").column("cell_key").to_pylist()) == ["a", "a"]


def test_a_file_or_a_file_where_a_table_goes_is_refused_in_one_line(tmp_path, capsys):
    (tmp_path / "afile").write_text("mine")
    (tmp_path / "folder").mkdir()
    (tmp_path / "folder" / "runs").write_text("a file where the runs table's folder goes")
    for root, what in ((tmp_path / "afile", "not a folder"), (tmp_path / "folder", "its runs is not a folder")):
        assert main(["migrate", "--lake", str(root)]) == 2
        error = one_line(capsys.readouterr().err)
        assert f"{root}: not a dialogbench lake" in error and what in error
    assert (tmp_path / "afile").read_text() == "mine"
    assert sorted(p.name for p in (tmp_path / "folder").iterdir()) == ["runs"]  # no lease file left either
