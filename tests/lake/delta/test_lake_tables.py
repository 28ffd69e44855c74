"""A lake whose marker says ``"tables": "delta"``: ``Lake`` writes and reads its tables as Delta tables
(``dialogbench.lake.delta.tables``), and every reader above it (the SQL relations, the pinned query path, verify,
quarantine) sees the same rows a folder lake would give."""

from __future__ import annotations

import json
import multiprocessing
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dialogbench.cells.tables import Table
from dialogbench.lake.delta.tables import NAME_COLUMN
from dialogbench.lake.layout import Layout
from dialogbench.lake.store import Lake
from dialogbench.lake.verify import verify
from dialogbench.lake.version import LakeFormatError, ensure_current

CELLS = Table("cells", pa.schema([("cell_key", pa.string()), ("model", pa.string()), ("i", pa.int64())]),
              partition=("model",), done="true")
GAMES = Table("games", pa.schema([("cell_key", pa.string()), ("end_reason", pa.string())]),
              done="end_reason IS DISTINCT FROM 'backend_error'",
              done_stored="t.end_reason IS DISTINCT FROM 'backend_error'")
LOG = Table("log", pa.schema([("run_id", pa.string()), ("stage", pa.string()), ("n", pa.int64())]),
            partition=("run_id",))
LAYOUT = Layout(tables={t.name: t for t in (CELLS, GAMES, LOG)})


def delta_lake(root: Path) -> Lake:
    lake = Lake(root, layout=LAYOUT)
    ensure_current(lake, tables="delta")
    return Lake(root, layout=LAYOUT)


def rows(table: Table, data: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(data, schema=table.schema)


def query(lake: Lake, sql_of) -> list[tuple]:
    with duckdb.connect() as con:
        return con.sql(sql_of(lake)).fetchall()


def test_a_new_lake_is_marked_delta_and_a_config_asking_otherwise_is_refused(tmp_path):
    lake = delta_lake(tmp_path / "lake")
    assert json.loads((tmp_path / "lake" / "lake.json").read_text()) == {"format": 5, "tables": "delta"}
    assert lake.tables_kind() == "delta"
    with pytest.raises(LakeFormatError, match=r"stores its tables as delta, the config asks for files.*convert"):
        ensure_current(Lake(tmp_path / "lake", layout=LAYOUT), tables="files")
    folder = Lake(tmp_path / "folder", layout=LAYOUT)
    ensure_current(folder, tables="files")
    assert json.loads((tmp_path / "folder" / "lake.json").read_text()) == {"format": 5}
    with pytest.raises(LakeFormatError, match="stores its tables as files, the config asks for delta"):
        ensure_current(Lake(tmp_path / "folder", layout=LAYOUT), tables="delta")


def test_a_cell_written_twice_is_stored_once_and_reads_without_the_name_column(tmp_path):
    lake = delta_lake(tmp_path)
    lake.write("cells", rows(CELLS, [{"cell_key": "a", "model": "m", "i": 1}, {"cell_key": "b", "model": "m", "i": 2}]),
               partition={"model": "m"})
    lake.write("cells", rows(CELLS, [{"cell_key": "a", "model": "m", "i": 9}, {"cell_key": "c", "model": "m", "i": 3}]),
               partition={"model": "m"})
    assert (tmp_path / "cells" / "_delta_log").is_dir()
    assert sorted(query(lake, lambda l: f"SELECT cell_key, i FROM {l.relation_sql('cells', CELLS.schema)}")) == [
        ("a", 1), ("b", 2), ("c", 3)]
    assert NAME_COLUMN not in lake.read("cells").column_names
    assert NAME_COLUMN not in lake.read("cells", CELLS.schema).column_names
    assert all(path.is_relative_to(tmp_path / "cells") for path in lake.files("cells")) and lake.has("cells")
    assert not list((tmp_path / "cells").rglob("*.json.record*")) and not lake.has("log")


def test_a_cell_of_several_rows_is_inserted_whole_and_a_backend_error_row_holds_no_cell(tmp_path):
    delta_lake(tmp_path)
    lengths = Table("lengths", pa.schema([("generation_key", pa.string()), ("turn", pa.int64())]),
                    key="generation_key", done="true")
    lake = Lake(tmp_path, layout=Layout(tables={**LAYOUT.tables, "lengths": lengths}))
    lake.write("lengths", pa.Table.from_pylist([{"generation_key": "g", "turn": t} for t in range(3)],
                                               schema=lengths.schema))
    lake.write("lengths", pa.Table.from_pylist([{"generation_key": "g", "turn": 7}], schema=lengths.schema))
    assert sorted(lake.read("lengths").column("turn").to_pylist()) == [0, 1, 2]
    lake.write("games", rows(GAMES, [{"cell_key": "x", "end_reason": "backend_error"}]))
    lake.write("games", rows(GAMES, [{"cell_key": "x", "end_reason": "won"}]))
    lake.write("games", rows(GAMES, [{"cell_key": "x", "end_reason": "lost"}]))
    assert sorted(lake.read("games").column("end_reason").to_pylist()) == ["backend_error", "won"]


def test_a_named_write_replaces_its_namesake_in_its_partition_only(tmp_path):
    lake = delta_lake(tmp_path)
    for run, n in (("r1", 1), ("r2", 2), ("r1", 3)):
        lake.write("log", rows(LOG, [{"run_id": run, "stage": "s", "n": n}]), partition={"run_id": run},
                   name="s.parquet")
    lake.write("log", rows(LOG, [{"run_id": "r1", "stage": "t", "n": 4}]), partition={"run_id": "r1"},
               name="t.parquet")
    assert sorted(lake.read("log").to_pylist(), key=lambda r: (r["run_id"], r["stage"])) == [
        {"run_id": "r1", "stage": "s", "n": 3}, {"run_id": "r1", "stage": "t", "n": 4},
        {"run_id": "r2", "stage": "s", "n": 2}]
    assert lake.read_named("log", "s.parquet", {"run_id": "r1"}).to_pylist() == [{"run_id": "r1", "stage": "s", "n": 3}]
    assert lake.read_named("log", "u.parquet", {"run_id": "r1"}) is None
    folder = Lake(tmp_path / "folder", layout=LAYOUT)
    folder.write("log", rows(LOG, [{"run_id": "r1", "stage": "s", "n": 5}]), partition={"run_id": "r1"},
                 name="s.parquet")
    assert folder.read_named("log", "s.parquet", {"run_id": "r1"}).column("n").to_pylist() == [5]


def test_the_pinned_query_path_reads_the_delta_files_and_hides_the_name_column(tmp_path):
    from dialogbench.lake.pinned import PinnedLake

    lake = delta_lake(tmp_path)
    lake.write("cells", rows(CELLS, [{"cell_key": "a", "model": "m", "i": 1}]), partition={"model": "m"})
    with duckdb.connect() as con:
        pinned = PinnedLake(lake, con)
        try:
            result = con.sql(f"SELECT * FROM {pinned.relation_sql('cells')}")
            assert result.columns == ["cell_key", "model", "i"] and result.fetchall() == [("a", "m", 1)]
        finally:
            pinned.close()


def test_pinning_for_a_query_child_leaves_the_lake_reading_later_commits(tmp_path):
    """``pin_delta_tables`` (what a query does before forking its child) pins a copy: the lake it was given, shared
    by a long-lived process or by threads that each query, still reads what is committed afterwards."""
    from dialogbench.lake.query import pin_delta_tables

    lake = delta_lake(tmp_path)
    lake.write("cells", rows(CELLS, [{"cell_key": "a", "model": "m", "i": 1}]), partition={"model": "m"})
    pinned = pin_delta_tables(lake)
    lake.write("cells", rows(CELLS, [{"cell_key": "b", "model": "m", "i": 2}]), partition={"model": "m"})
    assert len(pinned.files("cells")) == 1 and len(lake.files("cells")) == 2
    assert pinned.delta("cells") is not lake.delta("cells")


def test_a_table_written_by_an_older_version_takes_a_new_column_and_reads_it_null(tmp_path):
    """A Delta table created before a column was added to the layout: the first write with the column adds it (the
    older rows read it as null), and a write without a column the table has stores nulls in it."""
    lake = delta_lake(tmp_path)
    lake.write("cells", pa.table({"cell_key": ["old"], "model": ["m"]}), partition={"model": "m"})
    lake.write("cells", rows(CELLS, [{"cell_key": "new", "model": "m", "i": 4}]), partition={"model": "m"})
    lake.write("cells", pa.table({"cell_key": ["older"], "i": [5]}), partition={"model": "m"})
    got = query(lake, lambda lake: f"SELECT cell_key, model, i FROM {lake.relation_sql('cells')} ORDER BY cell_key")
    assert got == [("new", "m", 4), ("old", "m", None), ("older", None, 5)]


def test_a_damaged_file_is_quarantined_and_forgotten_so_its_cells_are_missing_again(tmp_path):
    lake = delta_lake(tmp_path)
    lake.write("cells", rows(CELLS, [{"cell_key": "a", "model": "m", "i": 1}]), partition={"model": "m"})
    lake.write("cells", rows(CELLS, [{"cell_key": "b", "model": "m", "i": 2}]), partition={"model": "m"})
    first = next(p for p in lake.files("cells") if pq.read_table(p).column("cell_key").to_pylist() == ["a"])
    first.write_bytes(first.read_bytes()[:50])
    assert [d.problem for d in verify(Lake(tmp_path, layout=LAYOUT))] == ["truncated"]
    again = Lake(tmp_path, layout=LAYOUT)
    assert again.read("cells").column("cell_key").to_pylist() == ["b"]  # the log no longer names the file
    assert list((tmp_path / "_quarantine").rglob(first.name))
    again.write("cells", rows(CELLS, [{"cell_key": "a", "model": "m", "i": 1}]), partition={"model": "m"})
    assert sorted(again.read("cells").column("cell_key").to_pylist()) == ["a", "b"]
    assert verify(Lake(tmp_path, layout=LAYOUT)) == []


def test_a_silent_bit_flip_is_seen_by_the_sha256_its_writer_recorded(tmp_path):
    """Each commit's files are hashed by their writer (``<table>/_checksums``), compaction's too; ``verify`` (full)
    names a file whose flipped bit still decodes as altered, which reading its pages back does not see."""
    from dialogbench.lake.delta.checksums import recorded
    from tests.damage import flip_keeping_readable

    lake = delta_lake(tmp_path)
    for key in ("a", "b", "c"):
        lake.write("cells", rows(CELLS, [{"cell_key": key, "model": "m", "i": 1}]), partition={"model": "m"})
    lake.delta("cells").compact("cells")
    lake.write("cells", rows(CELLS, [{"cell_key": "d", "model": "m", "i": 1}]), partition={"model": "m"})
    files = lake.files("cells")
    sums = recorded(tmp_path / "cells")
    assert len(files) == 2 and all(sums.get(f.name) for f in files) and len(sums) == 5  # 3 + compacted + 1
    lake.delta("cells").store.vacuum("cells", retention_hours=0, full=True)
    assert recorded(tmp_path / "cells") == sums  # vacuum leaves the _ folder alone
    compacted = next(f for f in files if pq.read_metadata(f).num_rows == 3)
    flip_keeping_readable(compacted)
    assert [(d.path.name, d.problem) for d in verify(Lake(tmp_path, layout=LAYOUT))] == [(compacted.name, "altered")]
    assert Lake(tmp_path, layout=LAYOUT).read("cells").column("cell_key").to_pylist() == ["d"]


def test_a_file_with_no_recorded_sha256_is_read_back_instead(tmp_path):
    """A writer killed between its commit and its hashing leaves no record: verify reads the file's pages back, and
    a clean lake stays clean."""
    import shutil

    lake = delta_lake(tmp_path)
    lake.write("cells", rows(CELLS, [{"cell_key": "a", "model": "m", "i": 1}]), partition={"model": "m"})
    shutil.rmtree(tmp_path / "cells" / "_checksums")
    assert verify(Lake(tmp_path, layout=LAYOUT)) == []
    (only,) = lake.files("cells")
    only.write_bytes(b"PAR1" + bytes(only.stat().st_size - 8) + b"PAR1")  # same size, nothing readable
    assert [d.problem for d in verify(Lake(tmp_path, layout=LAYOUT))] == ["unreadable"]


def _race(root: str, offset: int, barrier) -> None:
    lake = Lake(root, layout=LAYOUT)
    barrier.wait()
    for round_ in range(4):
        keys = [f"k{round_}-{(offset + j) % 12}" for j in range(8)]
        lake.write("cells", rows(CELLS, [{"cell_key": k, "model": "m", "i": offset} for k in keys]),
                   partition={"model": "m"})


def test_writers_racing_through_the_lake_store_each_cell_once_with_no_lease(tmp_path):
    delta_lake(tmp_path)
    context = multiprocessing.get_context("spawn")
    barrier = context.Barrier(3)
    writers = [context.Process(target=_race, args=(str(tmp_path), 4 * i, barrier)) for i in range(3)]
    for w in writers:
        w.start()
    for w in writers:
        w.join(120)
    assert [w.exitcode for w in writers] == [0, 0, 0]
    keys = Lake(tmp_path, layout=LAYOUT).read("cells").column("cell_key").to_pylist()
    assert len(keys) == len(set(keys)) == 4 * 12  # every offered key, each once


def test_validate_says_before_a_run_that_the_lake_keeps_its_tables_otherwise(tmp_path, capsys):
    from dialogbench.cli import main

    repo = Path(__file__).resolve().parents[3]
    config = tmp_path / "delta.yaml"
    config.write_text((repo / "configs" / "demo.yaml").read_text() + "\nlake_tables: delta\n")
    folder = tmp_path / "lake"
    ensure_current(Lake(folder), tables="files")
    code = main(["validate", "--config", str(config), "--lake", str(folder)])
    err = capsys.readouterr().err
    assert code != 0 and "stores its tables as files, the config asks for delta" in err and "dialogbench convert" in err
    assert json.loads((folder / "lake.json").read_text()) == {"format": 5}  # nothing written
    delta_lake(tmp_path / "new")
    assert main(["validate", "--config", str(config), "--lake", str(tmp_path / "new")]) == 0


def test_converting_a_delta_lake_says_so_in_one_line_and_makes_no_target(tmp_path, capsys):
    from dialogbench.cli import main
    from dialogbench.run.registry import open_lake

    ensure_current(open_lake(tmp_path / "lake"))  # a new lake: Delta
    assert main(["convert", "--lake", str(tmp_path / "lake"), "--to", str(tmp_path / "copy")]) == 1
    err = capsys.readouterr().err
    assert err.strip() == f"error: {tmp_path / 'lake'}: its tables are Delta tables already; nothing to convert"
    assert not (tmp_path / "copy").exists()


def test_a_kept_file_list_gives_way_to_another_writer_s_next_commit(tmp_path):
    """A table's file list is kept while its log has no next version: another writer's commit (here another lake
    object, as another process) is read at once, and a read with no commit between uses the kept list."""
    mine, theirs = delta_lake(tmp_path), Lake(tmp_path, layout=LAYOUT)
    mine.write("cells", rows(CELLS, [{"cell_key": "a", "model": "m", "i": 1}]), partition={"model": "m"})
    assert len(mine.files("cells")) == 1
    theirs.write("cells", rows(CELLS, [{"cell_key": "b", "model": "m", "i": 2}]), partition={"model": "m"})
    assert len(mine.files("cells")) == 2
    delta = mine.delta("cells")
    opened = []
    real = delta.store.versioned_added
    delta.store.versioned_added = lambda table, **kw: opened.append(table) or real(table, **kw)
    assert len(mine.files("cells")) == 2 and opened == []  # nothing committed since: the log is not read again
