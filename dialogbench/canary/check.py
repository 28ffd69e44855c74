"""Whether a run's canary drifted: a (judge, stage) whose share of first-night answers fell below the threshold."""

from __future__ import annotations

import duckdb

from dialogbench.canary.tables import CANARY_TABLE
from dialogbench.lake import Lake


def agreement(lake: Lake, run_id: str) -> list[dict]:
    """Per (judge, stage) of the run: judgments, agree, the threshold."""
    sql = (f"select judge, stage, count(*) as judgments, count(*) filter (where agrees) as agree, "
           f"max(min_agreement) as min_agreement from {lake.relation_sql(CANARY_TABLE.name, CANARY_TABLE.schema)} "
           "where run_id = ? group by judge, stage order by judge, stage")
    with duckdb.connect() as con:
        relation = con.execute(sql, [run_id])
        columns = [d[0] for d in relation.description]
        return [dict(zip(columns, row)) for row in relation.fetchall()]


def drifted(config, lake: Lake, run_id: str) -> list[str]:
    """One line per (judge, stage) below ``canary.min_agreement`` in this run (what fails it)."""
    return [f"judge canary: {r['judge']} on {r['stage']} gave the first night's answer in {r['agree']} of "
            f"{r['judgments']} judgments ({r['agree'] / r['judgments']:.0%} < {r['min_agreement']:.0%}, "
            "canary.min_agreement): the judge drifted (see canary_judgments)"
            for r in agreement(lake, run_id) if r["agree"] / r["judgments"] < r["min_agreement"]]
