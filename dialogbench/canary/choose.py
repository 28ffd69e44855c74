"""Which judgments the canary repeats: the same ones every run. The set is what earlier canary runs repeated
(still planned and judged), topped up to ``size`` with the stage's other parsed verdicts in a fixed order (by the
fingerprint of their key), so it changes only when a judgment leaves the plan or ``size`` grows."""

from __future__ import annotations

import duckdb

from dialogbench.canary.tables import CANARY_TABLE
from dialogbench.cells import Cell
from dialogbench.cells.keys import fingerprint
from dialogbench.lake import Lake


def _rows(lake: Lake, sql: str, params: list) -> list[dict]:
    with duckdb.connect() as con:
        relation = con.execute(sql, params)
        columns = [d[0] for d in relation.description]
        return [dict(zip(columns, row)) for row in relation.fetchall()]


def baselines(lake: Lake, stage, keys: list[str]) -> dict[str, dict]:
    """The first verdict stored for each key (the first night's), by key."""
    if not keys:
        return {}
    table = stage.table
    rows = _rows(lake, f"select * from {lake.relation_sql(table.name, table.schema)} where cell_key in "
                       "(select unnest(?)) qualify row_number() over (partition by cell_key order by created_at) = 1",
                 [keys])
    return {r["cell_key"]: r for r in rows}


def repeated_before(lake: Lake, stage: str) -> list[str]:
    """The judgments earlier canary runs repeated for ``stage``, first repeated first."""
    rows = _rows(lake, f"select original_key, min(created_at) as first from "
                       f"{lake.relation_sql(CANARY_TABLE.name, CANARY_TABLE.schema)} where stage = ? "
                       "group by original_key order by first, original_key", [stage])
    return [r["original_key"] for r in rows]


def choose(lake: Lake, stage, planned: list[Cell], *, size: int) -> list[tuple[Cell, dict]]:
    """Up to ``size`` (cell, baseline verdict) of ``stage``'s planned cells that have a parsed verdict."""
    by_key = {c.key: c for c in planned}
    stored = {k: v for k, v in baselines(lake, stage, list(by_key)).items() if v["parsed"]}
    kept = [k for k in repeated_before(lake, stage.name) if k in stored][:size]
    taken = set(kept)
    fresh = sorted((k for k in stored if k not in taken), key=lambda k: fingerprint("canary-order", k))
    return [(by_key[k], stored[k]) for k in [*kept, *fresh][:size]]
