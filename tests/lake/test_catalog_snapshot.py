"""``dialogbench.lake.catalog.Snapshot``: a reading connection computes each view once (stored, parents first, as a
temporary table of its name) and reads exactly what a connection that computes every view at each query reads."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from dialogbench.lake.catalog import Snapshot, connect, models
from dialogbench.run.registry import open_lake
from tests.conftest import chatbot
from tests.lake.test_catalog import write_sql


def stored(con) -> set[str]:
    return {name for (name,) in con.execute("select table_name from duckdb_tables() where temporary").fetchall()}


def test_every_view_reads_the_same_rows_as_a_live_connection(make_config, pipeline):
    """Every shipped view, on a lake a run wrote (BotChat with the Arena and GTEval), through a snapshot and through
    a connection that computes it from the files."""
    config = make_config(limit=2, n=[4], models=[chatbot("bot-a"), chatbot("bot-b")])
    pipeline(config, "run-1", record=True)
    lake = open_lake(Path(config.lake).resolve())
    names = [m.name for m in models(lake.layout.sql)]
    with connect(lake, board=config.board) as frozen, connect(lake, board=config.board, snapshot=False) as live:
        assert isinstance(frozen, Snapshot) and not isinstance(live, Snapshot)
        for name in names:
            want = sorted(map(repr, live.execute(f'select * from "{name}"').fetchall()))
            assert sorted(map(repr, frozen.execute(f'select * from "{name}"').fetchall())) == want, name
        assert stored(frozen) == set(names) and not stored(live)


def test_a_view_is_computed_once_with_the_views_it_reads(tmp_path):
    sql = write_sql(tmp_path / "sql", {"views/base.sql": "select 41 as x",
                                       "views/top.sql": "select x + 1 as y from {{ ref('base') }}",
                                       "views/other.sql": "select 7 as z"})
    lake = open_lake(tmp_path / "lake")
    with Snapshot.of(lake, sql) as con:
        assert con.execute("select x from base").fetchall() == [(41,)]
        assert stored(con) == {"base"}  # neither top nor other is read
        con.execute("update temp.base set x = 0")  # top, computed now, reads base's stored table, not its SQL
        assert con.sql("select y from top").fetchall() == [(1,)] and stored(con) == {"base", "top"}
        con.execute("update temp.base set x = 5")  # top was computed once: it is not computed again
        assert con.execute("select y from top").fetchall() == [(1,)]
        con.execute("SET VARIABLE board = 'another'")  # a variable the views read: computed again
        assert stored(con) == set() and con.execute("select y from top").fetchall() == [(42,)]


def test_a_view_that_fails_stays_a_view_and_fails_its_query(tmp_path):
    sql = write_sql(tmp_path / "sql", {"views/broken.sql": "select error('no such thing') as x",
                                       "views/fine.sql": "select 1 as x"})
    lake = open_lake(tmp_path / "lake")
    with Snapshot.of(lake, sql) as con:
        assert con.execute("select 'broken' as word, x from fine").fetchall() == [("broken", 1)]  # a word, not read
        assert stored(con) == {"fine"}
        with pytest.raises(duckdb.Error, match="no such thing"):
            con.execute("select * from broken").fetchall()


def test_a_view_that_does_not_bind_is_named_by_its_file_when_read(tmp_path):
    sql = write_sql(tmp_path / "sql", {"views/typo.sql": "select * from no_such_table",
                                       "views/fine.sql": "select 1 as x"})
    lake = open_lake(tmp_path / "lake")
    with Snapshot.of(lake, sql) as con:
        assert con.execute("select 'typo' as word, x from fine").fetchall() == [("typo", 1)]  # only a word here
        with pytest.raises(duckdb.Error, match=r"views/typo\.sql: .*no_such_table"):
            con.execute("select * from typo")
