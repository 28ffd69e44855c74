"""The canary stage: plan the run's judge stages again, keep a fixed set of their computed judgments, and ask
each judge again (every run: the plan's ``todo`` is all of it, so the cache is bypassed); the first night's
verdict, stored in the stage's table, is the baseline."""

from __future__ import annotations

import json
import logging
from collections import defaultdict
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone

import duckdb

from dialogbench.canary.choose import choose
from dialogbench.canary.tables import CANARY_TABLE
from dialogbench.cells import Cell, Emit, Stage
from dialogbench.cells.stage import Planned
from dialogbench.cells.judging import JudgeStage
from dialogbench.cells.keys import fingerprint
from dialogbench.lake import Lake
from dialogbench.run.runs import now

log = logging.getLogger("dialogbench.canary")
NAME = "judge_canary"


@dataclass(frozen=True)
class Repeat:
    """What a canary cell repeats: the judge stage, its cell (with payload) and the stored verdict."""

    stage: str
    cell: Cell
    baseline: dict


def judge_stages(config, families, only: list[str] | None) -> list[JudgeStage]:
    """The judge stages of ``families`` (the run's others, ``Family.stages_of``) whose tables name their answer
    (``only``: these names, or a name a stage had before: ``JudgeStage.formerly``)."""
    found = [s for f in families if f.enabled(config) for s in f.stages_of(config, families)
             if isinstance(s, JudgeStage) and s.table is not None and s.table.answer]
    return [s for s in found if only is None or {s.name, *s.formerly} & set(only)]


def answer_of(row: dict, columns: tuple[str, ...]) -> str:
    return json.dumps({c: row.get(c) for c in columns}, sort_keys=True, default=str)


class Capture(Emit):
    """An ``Emit`` that keeps a judge stage's rows and failures instead of writing them."""

    def __init__(self, stage: str, run_id: str) -> None:
        super().__init__(lake=None, stage=stage, table=None, run_id=run_id)
        self.rows: list[dict] = []
        self.failures: list[tuple] = []

    def __call__(self, rows, failures=(), *, computed=None, failed=None) -> None:
        self.rows.extend(rows)
        self.failures.extend(failures)


def today() -> date:
    """The UTC day a canary judgment counts for (``canary.every: night``)."""
    return datetime.now(timezone.utc).date()


def judged_on(lake: Lake, day: date) -> dict[str, str]:
    """judge → the latest run that judged its canary set again on UTC ``day`` (none when the table is empty)."""
    start = datetime(day.year, day.month, day.day, tzinfo=timezone.utc)
    sql = (f"select judge, max(run_id) from {lake.relation_sql(CANARY_TABLE.name, CANARY_TABLE.schema)} "
           "where judge is not null and created_at >= ? and created_at < ? group by judge")
    with duckdb.connect() as con:
        return dict(con.execute(sql, [start, start + timedelta(days=1)]).fetchall())


class JudgeCanary(Stage):
    name = NAME
    table = CANARY_TABLE
    records_plan = False
    retries = 2
    role = "judge"
    judges_inputs_so_far = False  # it repeats stored judgments once, outside the cache: once per run, at the end

    def __init__(self, config, others) -> None:
        self.settings = config.canary
        self.stages = judge_stages(config, others, self.settings.stages)

    def models(self, config):
        return list({m.name: m for s in self.stages for m in s.models(config)}.values())

    def tokens_per_cell(self, config) -> int:
        return max((s.tokens_per_cell(config) for s in self.stages), default=0)  # one verdict of its stages' judges

    def plan(self, config, lake: Lake) -> Planned:
        cells, detail = [], {}
        tonight = judged_on(lake, today()) if self.settings.every == "night" else {}
        for judge, run_id in sorted(tonight.items()):
            log.info("canary: %s was judged again today already (run %s): not again before tomorrow (UTC; "
                     "canary.every: run repeats it every run)", judge, run_id)
        for stage in self.stages:
            chosen = [(cell, baseline) for cell, baseline in
                      choose(lake, stage, stage.repeatable(config, lake), size=self.settings.size)
                      if cell.judge not in tonight]
            detail[stage.name] = len(chosen)
            cells += [Cell(fingerprint(NAME, cell.key), cell.item_id, cell.roles, judge=cell.judge, task=cell.task,
                           payload=Repeat(stage.name, cell, baseline)) for cell, baseline in chosen]
        log.info("canary: %d judgment(s) to judge again (%s)", len(cells),
                 ", ".join(f"{k}: {v}" for k, v in detail.items()) or "no judge stage")
        return Planned(cells, detail={"canary": detail}, todo=cells)

    def compute(self, config, cells: list[Cell], emit: Emit) -> None:
        by_stage: dict[str, list[Cell]] = defaultdict(list)
        for cell in cells:
            by_stage[cell.payload.stage].append(cell)
        stages = {s.name: s for s in self.stages}
        rows, failures = [], []
        for name, group in by_stage.items():
            stage, capture = stages[name], Capture(name, emit.run_id)
            stage.compute(config, [c.payload.cell for c in group], capture)
            judged = {r["cell_key"]: r for r in capture.rows}
            failed = {c.key: (error, model) for c, error, model in capture.failures}
            created = now()
            for cell in group:
                original, baseline = cell.payload.cell, cell.payload.baseline
                row = judged.get(original.key)
                if row is None:
                    error, model = failed.get(original.key, ("the judge stage returned no verdict", None))
                    failures.append((cell, error, model))
                    continue
                answer, expected = answer_of(row, stage.table.answer), answer_of(baseline, stage.table.answer)
                rows.append({"cell_key": cell.key, "original_key": original.key, "stage": name,
                             "item_id": original.item_id, "model": row.get("model"), "judge": row.get("judge"),
                             "judge_fp": row.get("judge_fp"), "answer": answer, "baseline": expected,
                             "baseline_run_id": baseline.get("run_id"), "agrees": answer == expected,
                             "parsed": row.get("parsed"), "raw_output": row.get("raw_output"),
                             "baseline_raw_output": baseline.get("raw_output"),
                             "min_agreement": self.settings.min_agreement, "run_id": emit.run_id,
                             "created_at": created})
        emit(rows, failures)
        agree = sum(r["agrees"] for r in rows)
        emit.detail = {"agree": emit.detail.get("agree", 0) + agree}
        log.info("canary: %d of %d judgment(s) agree with the first night", agree, len(rows))
