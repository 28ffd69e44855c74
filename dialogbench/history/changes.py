"""Reading the ``changes`` view: the series of the latest run that moved or are new, most notable first."""

from __future__ import annotations

import duckdb

CHANGED_SQL = """
select * from changes
where status <> 'same'
order by outside_interval desc nulls last, status = 'new', abs(delta) desc nulls last, family, board, metric, model,
         slice
"""


def read_changes(con: duckdb.DuckDBPyConnection) -> list[dict]:
    relation = con.execute(CHANGED_SQL)
    columns = [d[0] for d in relation.description]
    return [dict(zip(columns, row)) for row in relation.fetchall()]


def summary(con: duckdb.DuckDBPyConnection) -> dict:
    """Counts over every series of the latest run: compared, moved, new, outside their interval, with a cause."""
    row = con.execute("""
        select count(*) as series, count(*) filter (where status = 'moved') as moved,
               count(*) filter (where status = 'new') as new, count(*) filter (where outside_interval) as outside,
               count(*) filter (where cause is not null) as with_cause, any_value(run_id) as run_id,
               any_value(previous_run_id) filter (where previous_run_id is not null) as previous_run_id
        from changes""").fetchone()
    return dict(zip(("series", "moved", "new", "outside", "with_cause", "run_id", "previous_run_id"), row))
