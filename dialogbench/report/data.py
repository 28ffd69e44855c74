"""Everything the report shows, read from the lake's views into plain dicts and lists (sorted, so the
same lake gives the same report): the judge-wide views and the run here, each family's through its
``Family.report``. A view that does not exist yet reads as ``None``."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from functools import partial

import duckdb

from dialogbench.run.config import ReportConfig
from dialogbench.run.family_spec import Family
from dialogbench.lake import Lake
from dialogbench.lake.catalog import connect
from dialogbench.history.changes import CHANGED_SQL
from dialogbench.judge_checks.check import board_findings, settings_from_yaml
from dialogbench.judge_checks.health import not_measured
from dialogbench.judge_checks.self_judging import identities_from_yaml
from dialogbench.report import ahead, changes, trends
from dialogbench.report.checks import settings_from_run
from dialogbench.report.section import Context, Rows

# What no family owns: every judge's output formats and reliability, the latest run (sql/core/report/report_*.sql),
# what changed since the previous run (sql/core/metrics/changes.sql), who is really ahead (report_pairwise and
# report_pairwise_tally, over pairwise) and the board's trends (report_trends, over metric_history)
QUERIES = {
    "reliability": "select * from judge_reliability order by judge, protocol",
    "judge_outputs": "select * from judge_outputs order by judge, protocol, backend, backend_version, output_format",
    "runs": "select * from report_latest_run order by started_at, stage",
    "header": "select * from report_header",
    "usage": "select * from report_run_usage",
    "coverage": "select * from report_plan_coverage order by stage, judge, model",
    "changes_summary": changes.SUMMARY_SQL,
    "changes": CHANGED_SQL,
    "pairwise": ahead.SQL,
    "pairwise_tally": ahead.TALLY_SQL,
    "trends": trends.SQL,
}


def reporting(*, families: Sequence[Family]) -> list[Family]:
    """Those of ``families`` (the run's) with a report section, in their order."""
    return [f for f in families if f.report is not None]


def _rows(con: duckdb.DuckDBPyConnection, sql: str, params: Sequence = ()) -> Rows:
    try:
        relation = con.execute(sql, list(params))
    except duckdb.CatalogException:  # the view is not defined (yet) in this checkout
        return None
    columns = [d[0] for d in relation.description]
    return [dict(zip(columns, row)) for row in relation.fetchall()]


def primary_judge(rows: list[dict]) -> str | None:
    """The judge with the most rows (ties: alphabetical)."""
    counts = Counter(r["judge"] for r in rows if r.get("judge"))
    return min(counts, key=lambda j: (-counts[j], j)) if counts else None


def collect(lake: Lake, *, families: Sequence[Family], examples_per_model: int = 3,
            settings: ReportConfig | None = None, board: str | None = None, judge_checks=None) -> dict:
    """The report's data for ``board`` (None: the lake's default board): the judge-wide views, the run, the header,
    the judge (and every judge seen), and under ``families`` each reporting family's data by name. A query's rows
    are None when its view is missing. ``settings`` (the config's ``report:``) and ``judge_checks`` (its
    ``judge_checks:``) default to those of the effective config the board's latest run recorded. ``families``: the
    run's, of which those with a report section are read."""
    families = reporting(families=families)
    with connect(lake, board=board) as con:
        read = partial(_rows, con)
        data: dict = {name: read(sql) for name, sql in QUERIES.items()}
        header = (data["header"] or [{}])[0]
        found, source = ((settings, "the config the report was rendered with") if settings is not None
                         else settings_from_run(header.get("run_config"), header.get("run_id")))
        data["settings"], data["settings_source"] = found, source
        rows = {f.name: {name: read(sql) for name, sql in f.report.queries.items()} for f in families}
        judged = [(f.name, key) for f in families for key in f.report.judged]
        candidates = [r for name, key in judged for r in rows[name][key] or []]
        data["judge"] = judge = primary_judge(candidates)
        data["judges"] = sorted({r["judge"] for r in candidates if r.get("judge")})
        for name, key in judged:
            if rows[name][key] is not None:
                rows[name][key] = [r for r in rows[name][key] if r["judge"] == judge]
        checks = judge_checks or settings_from_yaml(header.get("run_config"))
        data["not_measured"] = not_measured(board_findings(con, checks))
        context = Context(read=read, judge=judge, examples_per_model=examples_per_model,
                          min_cells=data["settings"].min_cells, judge_checks=checks, not_measured=data["not_measured"],
                          identities=identities_from_yaml(header.get("run_config")))
        data["families"] = {f.name: {**f.report.derive(rows[f.name], context), "min_cells": context.min_cells,
                                     "coverage": data["coverage"]} for f in families}
    return data
