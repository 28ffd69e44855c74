"""``lake.delta.upkeep``: at a run's end, a Delta table with more files than ``compact_above_files`` is compacted and
the files no version needs, older than ``vacuum_after_hours``, are deleted; the rows never change, and a folder lake
is left alone."""

from __future__ import annotations


from dialogbench.lake.delta.upkeep import summary, upkeep
from dialogbench.lake.store import Lake
from dialogbench.lake.version import ensure_current
from tests.lake.delta.test_lake_tables import CELLS, LAYOUT, LOG, delta_lake, query, rows


def commits(lake: Lake, count: int) -> None:
    for i in range(count):
        lake.write("cells", rows(CELLS, [{"cell_key": f"c{i}", "model": "m", "i": i}]), partition={"model": "m"})
    lake.write("log", rows(LOG, [{"run_id": "r", "stage": "s", "n": 1}]), partition={"run_id": "r"})


def test_a_table_past_the_threshold_is_compacted_and_the_replaced_files_vacuumed(tmp_path):
    lake = delta_lake(tmp_path)
    commits(lake, 6)
    before = sorted(query(lake, lambda lake: f"SELECT cell_key, i FROM {lake.relation_sql('cells')}"))
    kept = upkeep(lake, compact_above_files=3, vacuum_after_hours=None)
    by = {d.table: d for d in kept}
    assert (by["cells"].files, by["cells"].compacted_from, by["cells"].compacted_to) == (6, 6, 1)
    assert by["log"].compacted_from == 0  # one file: under the threshold
    assert len(lake.files("cells")) == 1 and len(list((tmp_path / "cells").glob("*.parquet"))) == 7
    assert sorted(query(lake, lambda lake: f"SELECT cell_key, i FROM {lake.relation_sql('cells')}")) == before
    assert "compacted cells 6->1 file(s)" in summary(kept)
    # a week's retention keeps the replaced files (a reader of an older version may still read them); 0 h deletes them
    assert upkeep(lake, compact_above_files=3, vacuum_after_hours=168)[0].vacuumed == 0
    gone = {d.table: d.vacuumed for d in upkeep(lake, compact_above_files=3, vacuum_after_hours=0)}
    assert gone["cells"] == 6 and len(list((tmp_path / "cells").glob("*.parquet"))) == 1
    assert sorted(query(lake, lambda lake: f"SELECT cell_key, i FROM {lake.relation_sql('cells')}")) == before


def test_nothing_is_done_under_the_threshold_or_on_a_folder_lake(tmp_path):
    lake = delta_lake(tmp_path / "delta")
    commits(lake, 2)
    kept = upkeep(lake, compact_above_files=3, vacuum_after_hours=168)
    assert not any(d.changed for d in kept) and "none to compact or vacuum" in summary(kept)
    folder = Lake(tmp_path / "folder", layout=LAYOUT)
    ensure_current(folder, tables="files")
    commits(folder, 5)
    assert upkeep(folder, compact_above_files=1, vacuum_after_hours=0) == []
    assert len(folder.files("cells")) == 5
