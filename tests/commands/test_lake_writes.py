"""``dialogbench catalog`` (dialogbench/commands/lake_writes.py): ``<lake>/catalog.duckdb`` is readable by plain
DuckDB, and its views read the lake's current Parquet files."""

from __future__ import annotations

import duckdb

from dialogbench.cli import main


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


def test_catalog_reads_current_files(make_config, pipeline, capsys):
    """The catalog's views read the Parquet files, so it sees cells written after it was built."""
    config = make_config(limit=2, n=[4])
    pipeline(config)
    assert main(["catalog", "--lake", config.lake]) == 0
    path = capsys.readouterr().out.strip()
    pipeline(make_config(limit=3, n=[4]), "run-2")
    with duckdb.connect(path, read_only=True) as con:
        assert con.execute("select count(*) from generations").fetchall() == [(6,)]
