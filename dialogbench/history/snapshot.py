"""A run's snapshot: its effective config (``run_configs``) when it starts, and every metric of every enabled
family's leaderboards (``metric_snapshots``, with each headline number's bootstrap interval) and every pair of
models on each of them (``metric_pairs``: who is really ahead) once its stages are done, each row with the fingerprints a change
can be traced to (the row's models' configs, the judge's, the family's prompts and config section)."""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import TYPE_CHECKING

import duckdb
import pyarrow as pa
import yaml

from dialogbench.history.noise import change_rows, previous_units, tonight_units, unit_rows
from dialogbench.history.tables import (JUDGE_FINDINGS_TABLE, METRIC_CHANGES_TABLE, METRIC_PAIRS_TABLE,
                                        METRIC_SNAPSHOTS_TABLE, METRIC_UNITS_TABLE, RUN_CONFIGS_TABLE)
from dialogbench.cells.keys import fingerprint, model_fingerprint
from dialogbench.lake import Lake
from dialogbench.text.redact import redact, redact_tree
from dialogbench.run.runs import now
from dialogbench.stats.bootstrap import ROUNDS, Interval, rank_ranges
from dialogbench.stats.compare import compare
from dialogbench.stats.units import checked_interval, read_units

if TYPE_CHECKING:
    from dialogbench.run.config import Config
    from dialogbench.run.family_spec import Family

log = logging.getLogger("dialogbench.history")


# Config fields that change no number a run computes (where its results are also logged; whether an unchanged rerun
# is answered from the latest run): left out of the fingerprint, so setting them is no "config changed".
NOT_RESULTS = frozenset({"tracking", "reuse_unchanged_run"})


def config_fingerprint(config: "Config") -> str:
    return fingerprint(config.model_dump(mode="json", exclude=set(NOT_RESULTS)))


def record_config(lake: Lake, config: "Config", *, run_id: str, config_path: str) -> str:
    """One ``run_configs`` row (the effective config as YAML, secrets redacted: ``redact_tree``, so a token under
    an engine's ``hf_token`` or a password in a ``weights`` URL is ``[REDACTED]``); returns its fingerprint (of the
    config itself: a rotated token is a changed config)."""
    config_fp = config_fingerprint(config)
    text = redact(yaml.safe_dump(redact_tree(config.model_dump(mode="json")), sort_keys=False, allow_unicode=True))
    row = {"run_id": run_id, "created_at": now(), "config_path": redact(str(config_path)), "config_fp": config_fp,
           "config": text, "board": config.board}
    lake.write(RUN_CONFIGS_TABLE.name, pa.Table.from_pylist([row], schema=RUN_CONFIGS_TABLE.schema),
               partition={"run_id": run_id}, name="config.parquet")
    return config_fp


def _models_fp(config: "Config", names: list[str]) -> str | None:
    """The fingerprint of these models' configs; None when one is not in the config (a model of an earlier run)."""
    known = set(config.model_names())
    if not names or not set(names) <= known:
        return None
    return fingerprint([model_fingerprint(config.model(n)) for n in sorted(set(names))])


def coverage_rows(con: duckdb.DuckDBPyConnection) -> list[dict]:
    """report_plan_coverage: per (stage, judge, model) of the board's current plans, cells planned and missing."""
    try:
        relation = con.execute("select stage, judge, model, planned, computed, missing from report_plan_coverage "
                               "where missing > 0")
    except duckdb.CatalogException:
        return []
    columns = [d[0] for d in relation.description]
    return [dict(zip(columns, row)) for row in relation.fetchall()]


def short_of(coverage: list[dict], stages: tuple[str, ...], models: list[str], judge: str | None) -> str | None:
    """Why a value of ``models`` (and ``judge``) rests on part of its cells: the stages of ``stages`` with cells
    missing for one of them ("generate:a 10 of 12"), or None when none is."""
    short = [f"{r['stage']}{' (' + r['model'] + ')' if len(models) > 1 else ''} {r['computed']:,} of {r['planned']:,}"
             for r in coverage if r["model"] in models and r["stage"].startswith(stages)
             and (r["judge"] is None or judge is None or r["judge"] == judge)]
    return f"cells missing (computed of planned): {'; '.join(short)}" if short else None


def family_rows(con: duckdb.DuckDBPyConnection, config: "Config", family: "Family", *, run_id: str,
                created_at, config_fp: str, unmeasured: dict | None = None,
                coverage: list[dict] | None = None, rounds: int = ROUNDS) -> list[dict]:
    """The snapshot rows of one family's metrics (a view that does not exist yet gives none). ``unmeasured``: the
    (judge, protocol) pairs whose judge failed a judge check (their values are not measured); ``coverage``:
    report_plan_coverage's rows with missing cells (a value resting on them is not complete). A metric with units
    (``Metric.units``) gets its interval from the cluster bootstrap of ``rounds`` resamples; others keep the view's."""
    unmeasured, coverage = unmeasured or {}, coverage or []
    prompt_fp = fingerprint(family.prompts(config)) if family.prompts else None
    section = family.settings(config)
    section_fp = fingerprint(section.model_dump(mode="json")) if section is not None else None
    known = set(config.model_names())
    rows = []
    for metric in family.metrics:
        start = len(rows)
        try:
            found = con.execute(metric.select_sql()).fetchall()
        except duckdb.CatalogException:
            log.warning("history: view %s is not defined; metric %s left out", metric.view, metric.name)
            continue
        units = read_units(con, metric) if metric.units else None
        for model, key_values, value, low, high, n in found:
            if units is not None:  # the one bootstrap over the metric's independent units (dialogbench/stats)
                found_interval = checked_interval(units.get((model, tuple(key_values))), value, rounds=rounds)
                low, high = found_interval.low, found_interval.high
            keys = dict(zip(metric.keys, key_values))
            judge = keys.get("judge")
            players = [model, *(v for k, v in keys.items() if k != "judge" and v in known)]
            finding = unmeasured.get((judge, metric.protocol)) if metric.protocol else None
            short = short_of(coverage, metric.stages, players, judge) if metric.stages else None
            rows.append({"run_id": run_id, "created_at": created_at, "family": family.name, "board": config.board,
                         "leaderboard": metric.view, "measured": finding is None, "complete": short is None,
                         "note": "; ".join(filter(None, [finding.why if finding else None, short])) or None,
                         "metric": metric.name, "model": model,
                         "slice": ", ".join(f"{k}={v}" for k, v in keys.items()), "judge": judge, "value": value,
                         "ci_low": low, "ci_high": high, "n": n, "model_fp": _models_fp(config, players),
                         "judge_fp": _models_fp(config, [judge]) if judge else None, "prompt_fp": prompt_fp,
                         "section_fp": section_fp, "config_fp": config_fp})
        ranked(rows[start:], higher_is_better=metric.higher_is_better)
    return rows


def ranked(rows: list[dict], *, higher_is_better: bool) -> None:
    """Set each row's ``rank``, ``rank_low`` and ``rank_high`` within its slice (one metric's rows): the rank among the
    slice's measured values (1 = best; a tie shares the better rank) and the ranks its interval allows
    (``rank_ranges``: best 1 + the models wholly above, worst the count - those wholly below). A value not measured,
    or none, has no rank and is not counted."""
    sign = -1 if higher_is_better else 1
    by_slice: dict[str, list[dict]] = {}
    for row in rows:
        row.update(rank=None, rank_low=None, rank_high=None)
        if row["measured"] and row["value"] is not None:
            by_slice.setdefault(row["slice"], []).append(row)
    for found in by_slice.values():
        intervals = {i: Interval(value=r["value"], low=r["ci_low"], high=r["ci_high"], clusters=0, rounds=0)
                     for i, r in enumerate(found)}
        ranges = rank_ranges(intervals, higher_is_better=higher_is_better)
        for i, row in enumerate(found):
            row["rank"] = 1 + sum(sign * other["value"] < sign * row["value"] for other in found)
            low, high = ranges[i]  # a percentile interval can miss its own value: the range holds the rank
            row["rank_low"], row["rank_high"] = min(low, row["rank"]), max(high, row["rank"])


def snapshot_metrics(con: duckdb.DuckDBPyConnection, lake: Lake, config: "Config", *, run_id: str,
                     families: Sequence["Family"]) -> int:
    """Write the metrics of every family of ``families`` (the run's) the config enables, as the lake's views read
    now for the run's board (``con`` reads that board: ``catalog.connect(lake, board=config.board)``), as this run's
    snapshot (one file, so a rerun of the same run replaces it); returns the rows written."""
    from dialogbench.judge_checks.check import board_findings, settings_of
    from dialogbench.judge_checks.health import not_measured

    created_at, config_fp = now(), config_fingerprint(config)
    unmeasured, coverage = not_measured(board_findings(con, settings_of(config))), coverage_rows(con)
    measured = [family for family in families if family.enabled(config) and family.metrics]
    rows = [row for family in measured
            for row in family_rows(con, config, family, run_id=run_id, created_at=created_at, config_fp=config_fp,
                                   unmeasured=unmeasured, coverage=coverage)]
    pairs = [{"run_id": run_id, "created_at": created_at, "board": config.board, **found.row()}
             for found in compare(con, measured, unmeasured=unmeasured)]
    units = tonight_units(con, measured)
    changed = change_rows(units, previous_units(con, board=config.board, run_id=run_id), run_id=run_id)
    findings = [{"run_id": run_id, "created_at": created_at, "board": config.board, "judge": f.judge,
                 "protocol": f.protocol, "check": f.check, "reason": f.why} for f in unmeasured.values()]
    for table, found, name in ((METRIC_PAIRS_TABLE, pairs, "pairs"), (METRIC_UNITS_TABLE, unit_rows(
            units, run_id=run_id, board=config.board), "units"), (METRIC_CHANGES_TABLE, changed, "changes"),
            (JUDGE_FINDINGS_TABLE, findings, "findings")):
        lake.write(table.name, pa.Table.from_pylist(found, schema=table.schema), partition={"run_id": run_id},
                   name=f"{name}.parquet")
    lake.write(METRIC_SNAPSHOTS_TABLE.name, pa.Table.from_pylist(rows, schema=METRIC_SNAPSHOTS_TABLE.schema),
               partition={"run_id": run_id}, name="metrics.parquet")
    log.info("history: %d metric value(s) and %d paired comparison(s) of run %s recorded", len(rows), len(pairs),
             run_id)
    return len(rows)
