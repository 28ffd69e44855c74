"""DeltaCellStore on a folder and on S3 (moto): each key once, appends, reads of an old version after later writes
(snapshot isolation), a version's files read by DuckDB give its rows, compaction and vacuum keep the rows, and errors
name the location and the table."""

from __future__ import annotations

import duckdb
import pyarrow as pa
import pytest

from dialogbench.lake.delta import DeltaCellStore, DeltaStoreError, TableNotFound
from tests.lake.delta.objects import parquet_files, parquet_rows


def cells(keys: list[int], *, label: str = "x", model: str | None = None) -> pa.Table:
    """One row per key: the key ``k``, its ``model`` (``m<k % 2>`` unless given) and a ``value`` saying who wrote it."""
    return pa.table({"model": [model or f"m{k % 2}" for k in keys], "k": pa.array(keys, pa.int64()),
                     "value": [label] * len(keys)})


def keys_of(table: pa.Table) -> list[tuple[str, int]]:
    return sorted(zip(table.column("model").to_pylist(), table.column("k").to_pylist()))


def duckdb_count(store: DeltaCellStore, files: list[str]) -> int | None:
    """count(*) over the files with DuckDB's ``read_parquet``. For s3:// files DuckDB needs its httpfs extension,
    which is never downloaded here: None when it is not installed, else it is loaded and given the store's
    endpoint and credentials as a DuckDB secret."""
    con = duckdb.connect()
    if store.location.kind == "s3":
        installed = con.sql("select installed from duckdb_extensions() where extension_name = 'httpfs'").fetchall()
        if not (installed and installed[0][0]):
            return None
        options = store.options
        endpoint = options["AWS_ENDPOINT_URL"].split("://", 1)[1]
        con.sql("LOAD httpfs")
        con.sql(f"""CREATE SECRET s3 (TYPE s3, KEY_ID '{options["AWS_ACCESS_KEY_ID"]}',
                    SECRET '{options["AWS_SECRET_ACCESS_KEY"]}', REGION '{options["AWS_REGION"]}',
                    ENDPOINT '{endpoint}', URL_STYLE 'path', USE_SSL false)""")
    return con.sql(f"select count(*) from read_parquet({files!r})").fetchall()[0][0]


@pytest.mark.parametrize("partitioned", [False, True])
def test_insert_missing_twice_with_overlapping_keys_stores_each_key_once(location, partitioned):
    store = DeltaCellStore(location, writer="test")
    partition_by = ["model"] if partitioned else None
    assert store.insert_missing("cells", cells(list(range(10)), label="first"), keys=["model", "k"],
                                partition_by=partition_by) == 10
    assert store.insert_missing("cells", cells(list(range(5, 15)), label="second"), keys=["model", "k"]) == 5
    assert store.insert_missing("cells", cells([3, 3, 20, 20, 20], label="third"), keys=["model", "k"]) == 1
    table = store.read("cells")
    assert table.schema == cells([0]).schema  # the table's own types and order, whatever the engine gives
    assert keys_of(table) == sorted({(f"m{k % 2}", k) for k in [*range(15), 20]})
    values = dict(zip(table.column("k").to_pylist(), table.column("value").to_pylist()))
    assert values[4] == "first" and values[5] == "first" and values[14] == "second"  # a stored cell is never replaced
    merges = [c for c in store.history("cells") if c["operation"] == "MERGE"]
    assert sum(c["operationMetrics"]["num_target_rows_inserted"] for c in merges) == 16
    assert {c.get("dialogbench.writer") for c in merges} == {"test"}
    assert store.insert_missing("cells", cells([1, 2]), keys=["model", "k"]) == 0
    assert store.read("cells").num_rows == 16


def test_a_key_is_unique_across_partitions_when_the_partition_is_not_part_of_it(location):
    store = DeltaCellStore(location)
    store.insert_missing("cells", cells([1, 2], model="a"), keys=["k"], partition_by=["model"])
    assert store.insert_missing("cells", cells([2, 3], model="b"), keys=["k"]) == 1
    assert keys_of(store.read("cells")) == [("a", 1), ("a", 2), ("b", 3)]


def test_keys_are_checked_before_anything_is_written(location):
    store = DeltaCellStore(location)
    with pytest.raises(ValueError, match="key column 'k' holds 1 null"):
        store.insert_missing("cells", pa.table({"k": pa.array([1, None], pa.int64())}), keys=["k"])
    with pytest.raises(ValueError, match="'nope' is not a column"):
        store.insert_missing("cells", cells([1]), keys=["nope"])
    with pytest.raises(ValueError, match="list of column names"):
        store.insert_missing("cells", cells([1]), keys="k")
    assert store.tables() == [] and store.version("cells") is None


def test_append_adds_every_row(location):
    store = DeltaCellStore(location)
    assert store.append("log", cells([1, 2, 3])) == 3
    assert store.append("log", cells([1, 2])) == 2
    assert store.read("log").num_rows == 5
    assert store.append("log", cells([])) == 0


def test_a_version_read_after_later_writes_still_gives_its_rows(location):
    store = DeltaCellStore(location)
    store.insert_missing("cells", cells(list(range(5))), keys=["model", "k"], partition_by=["model"])
    store.append("other", cells([1]))
    snap = store.snapshot()
    assert snap == {"cells": store.version("cells"), "other": store.version("other")}
    old_files = store.files("cells", version=snap["cells"])
    store.insert_missing("cells", cells(list(range(5, 9))), keys=["model", "k"])
    store.append("other", cells([2, 3]))
    store.compact("cells")  # rewrites the latest version's files; the old version keeps its own
    assert store.version("cells") > snap["cells"]
    assert keys_of(store.read("cells", version=snap["cells"])) == keys_of(cells(list(range(5))))
    assert store.read("other", version=snap["other"]).num_rows == 1
    assert store.read("cells").num_rows == 9 and store.read("other").num_rows == 3
    assert store.files("cells", version=snap["cells"]) == old_files
    assert store.read("cells", version=snap["cells"], columns=["k"]).column_names == ["k"]
    only = store.read("cells", version=snap["cells"], filter='"k" >= 3')
    assert sorted(only.column("k").to_pylist()) == [3, 4]


def test_the_files_of_a_version_give_its_rows(location):
    store = DeltaCellStore(location)
    store.insert_missing("cells", cells(list(range(6))), keys=["model", "k"], partition_by=["model"])
    version = store.version("cells")
    store.insert_missing("cells", cells(list(range(6, 10))), keys=["model", "k"])
    old, new = store.files("cells", version=version), store.files("cells")
    prefix = f"{store.location.root}/cells/"
    assert old and all(f.startswith(prefix) and f.endswith(".parquet") for f in new)
    assert set(old) < set(new)
    assert parquet_rows(store, old) == 6 and parquet_rows(store, new) == 10
    counted = duckdb_count(store, old)
    if counted is not None:  # None: s3 files, and DuckDB has no httpfs here
        assert counted == 6 and duckdb_count(store, new) == 10
    if store.location.kind == "local":  # the partition column lives in the folder names
        assert duckdb.connect().sql(f"select count(distinct model) from read_parquet({new!r}, hive_partitioning = true)"
                                    ).fetchall()[0][0] == 2


def test_compact_then_vacuum_leaves_fewer_files_and_the_same_rows(location):
    store = DeltaCellStore(location)
    for start in range(0, 40, 5):  # eight commits, a file per partition each
        store.insert_missing("cells", cells(list(range(start, start + 5))), keys=["model", "k"],
                             partition_by=["model"])
    before, rows = store.files("cells"), keys_of(store.read("cells"))
    assert len(parquet_files(store, "cells")) == len(before) == 16
    metrics = store.compact("cells")
    after = store.files("cells")
    assert metrics["numFilesRemoved"] == 16 and len(after) == metrics["numFilesAdded"] == 2
    assert keys_of(store.read("cells")) == rows and len(parquet_files(store, "cells")) == 18
    assert len(store.vacuum("cells", retention_hours=0, dry_run=True)) == 16
    assert len(parquet_files(store, "cells")) == 18  # a dry run deletes nothing
    removed = store.vacuum("cells", retention_hours=0)
    assert sorted(removed) == sorted(before)
    assert len(parquet_files(store, "cells")) == 2 and set(store.files("cells")) == set(after)
    assert keys_of(store.read("cells")) == rows and parquet_rows(store, after) == 40
    with pytest.raises(DeltaStoreError, match="read failed"):  # the versions before the compaction lost their files
        store.read("cells", version=3)


def test_tables_and_errors_name_the_location_and_the_table(location):
    store = DeltaCellStore(location)
    assert store.tables() == [] and store.snapshot() == {}
    store.append("b_table", cells([1]))
    store.insert_missing("a_table", cells([1]), keys=["k"])
    assert store.tables() == ["a_table", "b_table"]
    with pytest.raises(TableNotFound, match=f"{location}/missing: no Delta table"):
        store.read("missing")
    with pytest.raises(DeltaStoreError, match=rf"{location}/a_table: read failed: ValueError: no such column: \['x'\]"):
        store.read("a_table", columns=["k", "x"])
    with pytest.raises(DeltaStoreError, match=f"{location}/a_table: open at version 99"):
        store.read("a_table", version=99)
    with pytest.raises(DeltaStoreError, match=f"{location}/a_table: partitioned by"):
        store.insert_missing("a_table", cells([2]), keys=["k"], partition_by=["model"])
    with pytest.raises(DeltaStoreError, match=f"{location}/a_table: insert_missing failed"):  # a type that won't cast
        store.insert_missing("a_table", cells([6]).set_column(1, "k", pa.array([[1]], pa.list_(pa.int64()))),
                             keys=["model"])
    assert store.read("a_table").num_rows == 1
    # a newer writer's column is added to the table (the older rows read it as null); one it lacks is written null
    store.insert_missing("a_table", pa.table({"k": pa.array([5], pa.int64()), "extra": [1.5]}), keys=["k"])
    got = store.read("a_table").sort_by("k").select(["k", "model", "value", "extra"]).to_pylist()
    assert got == [{"k": 1, "model": "m1", "value": "x", "extra": None},
                   {"k": 5, "model": None, "value": None, "extra": 1.5}]
