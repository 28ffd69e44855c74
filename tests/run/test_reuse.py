"""``reuse.written_after``: whether anything wrote the lake's inputs after a run finished, on either kind of lake (a
folder lake's files by their mtimes; a Delta lake's commits by its tables' logs, where a compaction is no change)."""

from __future__ import annotations

import datetime as dt
import os
import time

import pyarrow as pa

from dialogbench.lake.schemas import FAILURES
from dialogbench.lake.version import ensure_current
from dialogbench.run.registry import open_lake
from dialogbench.run.reuse import recorded_fingerprint, written_after


def failure(run_id: str) -> pa.Table:
    return pa.Table.from_pylist([{"cell_key": "c", "stage": "s", "error": "e", "run_id": run_id}], schema=FAILURES)


def test_a_folder_lake_changed_after_a_moment_is_one_whose_input_file_is_newer(tmp_path):
    lake = open_lake(tmp_path / "lake")
    ensure_current(lake, tables="files")
    path = lake.write("failures", failure("r1"), partition={"stage": "s"})
    moment = dt.datetime.now(dt.timezone.utc)
    assert written_after(lake, moment) is None
    later = time.time() + 5
    os.utime(path, (later, later))
    assert written_after(lake, moment) == path


def test_a_delta_lake_changed_after_a_moment_is_one_with_a_later_commit_that_changed_rows(tmp_path):
    lake = open_lake(tmp_path / "lake")
    ensure_current(lake)
    lake.write("failures", failure("r1"), partition={"stage": "s"})
    lake.write("failures", failure("r2"), partition={"stage": "s"})
    time.sleep(0.01)
    moment = dt.datetime.now(dt.timezone.utc)
    time.sleep(0.01)
    assert written_after(lake, moment) is None
    lake.delta("failures").store.compact("failures")  # the same rows in fewer files
    assert written_after(lake, moment) is None
    lake.write("failures", failure("r3"), partition={"stage": "s"})
    assert written_after(lake, moment) == lake.root / "failures" / "_delta_log"


def test_the_recorded_config_is_read_through_the_lake(tmp_path):
    for tables in ("files", "delta"):
        lake = open_lake(tmp_path / tables)
        ensure_current(lake, tables=tables)
        assert recorded_fingerprint(lake, "r1") is None
        lake.write("run_configs", pa.table({"run_id": ["r1"], "config_fp": ["fp-1"]}), partition={"run_id": "r1"},
                   name="config.parquet")
        assert recorded_fingerprint(lake, "r1") == "fp-1", tables
