"""``dialogbench catalog`` (dialogbench/commands/lake_writes.py): ``<lake>/catalog.duckdb`` is readable by plain
DuckDB, and its views read the lake's current Parquet files."""

from __future__ import annotations

import duckdb

from dialogbench.cli import main
from tests.conftest import chatbot


def test_catalog_is_readable_by_plain_duckdb(make_config, pipeline, capsys):
    config = make_config(limit=2, n=[4])
    pipeline(config)
    assert main(["catalog", "--lake", config.lake]) == 0
    path = capsys.readouterr().out.strip()
    assert path.endswith("catalog.duckdb")
    with duckdb.connect(path, read_only=True) as con:
        rows = con.execute("select model, n, dialogues from botchat_unieval order by model, n").fetchall()
        assert rows == [("bot-a", 3, 2), ("bot-a", 4, 2), ("bot-b", 3, 2), ("bot-b", 4, 2)]
        assert con.execute("select count(*) from seeds").fetchall() == [(547,)]
        assert con.execute("select count(*) from generations").fetchall() == [(4,)]


def test_a_folder_lake_s_catalog_reads_current_files(make_config, pipeline, capsys):
    """A folder lake's catalog views read its tables' folders, so it sees cells written after it was built."""
    config = make_config(limit=2, n=[4], tables="files")
    pipeline(config)
    assert main(["catalog", "--lake", config.lake]) == 0
    path = capsys.readouterr().out.strip()
    pipeline(make_config(limit=3, n=[4], tables="files"), "run-2")
    with duckdb.connect(path, read_only=True) as con:
        assert con.execute("select count(*) from generations").fetchall() == [(6,)]


def test_a_delta_lake_s_catalog_is_built_again_by_what_changes_its_files(make_config, pipeline, capsys):
    """A Delta lake's catalog names each table's files as of its build (plain DuckDB cannot read the Delta log
    offline): a run's end and `catalog` build it, and `compact` and `vacuum`, which replace and delete files, build an
    existing one again, so it never names a file that is gone."""
    config = make_config(limit=3, n=[4])
    pipeline(config)
    pipeline(make_config(limit=3, n=[4], models=[chatbot("bot-c")]), "run-2")  # a second commit: two files
    assert main(["catalog", "--lake", config.lake]) == 0
    path = capsys.readouterr().out.strip()
    assert main(["compact", "--lake", config.lake]) == 0
    assert main(["vacuum", "--lake", config.lake, "--retention-hours", "0"]) == 0
    assert "file(s) older than 0 h that no version needs deleted" in capsys.readouterr().out
    with duckdb.connect(path, read_only=True) as con:
        assert con.execute("select count(*) from generations").fetchall() == [(9,)]
