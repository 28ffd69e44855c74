"""Reading the ``changes`` view: the series of the latest run that moved, are new or changed within noise, most
notable first and those within noise last (what the run's changes artifact and the report's opening section list)."""

from __future__ import annotations

import duckdb

CHANGED_SQL = """
select * from changes
where status <> 'same'
order by status = 'within noise', outside_interval desc nulls last, status = 'new', abs(delta) desc nulls last, family, board, metric, model,
         slice
"""


def read_changes(con: duckdb.DuckDBPyConnection) -> list[dict]:
    relation = con.execute(CHANGED_SQL)
    columns = [d[0] for d in relation.description]
    return [dict(zip(columns, row)) for row in relation.fetchall()]

