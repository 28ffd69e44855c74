"""Running a stage: plan → record the plan → anti-join → chunks; compute a chunk → rows, failures, report.
Orchestration-free: Prefect tasks (``tasks/stages.py``) and plain Python call the same three functions, with the lake
to read and write (one with its layout: ``registry.open_lake``; a stage may read the catalog)."""

from __future__ import annotations

import hashlib
import logging
import time

import pyarrow as pa

from dialogbench.run import progress_display, stopping
from dialogbench.backends import metering
from dialogbench.cells.cell import Chunk, chunked
from dialogbench.cells.shared_tables import BACKEND_CALLS_TABLE
from dialogbench.cells.missing import missing
from dialogbench.cells.records import record_plan
from dialogbench.cells.stage import Emit, Planned, Stage
from dialogbench.dispatch.units import parse_group
from dialogbench.lake import Lake
from dialogbench.lake.version import ensure_current
from dialogbench.run.runs import StageReport, record_stage, recorded_stage, sum_reports

log = logging.getLogger("dialogbench.stage")


def plan_stage(stage: Stage, config, run_id: str, *, lake: Lake,
               group: list[str] | None = None) -> tuple[list[Chunk], StageReport]:
    """The stage's missing cells in chunks, and its report so far (planned, cached, plan detail). With ``group`` (a
    dispatched unit's share of a stage split by the models its cells load, ``dialogbench/dispatch/units.py``): only the
    cells of exactly those models, and no plan recorded (the dispatching run recorded the whole stage's)."""
    start = time.perf_counter()
    stopping.check()  # a stopped run starts no stage
    stopping.progress.stage_started(stage.name)
    ensure_current(lake, tables=config.lake_tables, store=config.lake_store)  # an older lake is refused before anything is written to it
    planned = stage.plan(config, lake)
    if group is None:
        _record(stage, planned, config, run_id, lake)
    else:
        models, shard = parse_group(group)
        planned = of_group(planned, models)
        if shard is not None:
            planned = of_shard(planned, *shard)
    todo = planned.todo if planned.todo is not None else missing(lake, stage.table, planned.cells)
    chunks = chunked(stage.name, todo, stage.chunk_size)
    total, blocked = len(planned.cells) + planned.unplanned, planned.blocked + planned.unplanned
    cached = len(planned.cells) - len(todo) - planned.blocked
    log.info("%s: %d planned, %d cached, %d to compute in %d chunk(s)%s", stage.name, total, cached, len(todo),
             len(chunks), f", {blocked} blocked (an input they need is missing)" if blocked else "")
    progress_display.current().planned(stage.name, todo=len(todo), cached=cached)
    detail = dict(planned.detail) if group is None else {**planned.detail, "group": list(group)}
    return chunks, StageReport(stage.name, planned=total, cached=cached, blocked=blocked,
                               seconds=time.perf_counter() - start, detail=detail)


def of_group(planned: Planned, group: list[str]) -> Planned:
    """The part of a plan whose cells load exactly the models of ``group`` (a game's players). Blocked and unplanned
    cells belong to no group: a stage split in groups (GameEval's) has none."""
    keep = sorted(group)
    cells = [c for c in planned.cells if c.models == keep]
    todo = None if planned.todo is None else [c for c in planned.todo if c.models == keep]
    return Planned(cells, dict(planned.detail), todo)


def of_shard(planned: Planned, index: int, count: int) -> Planned:
    """Shard ``index`` of ``count`` of a plan (``dispatch.shards``): the cells whose key's digest falls in it, the same
    in every process, so the shards of a stage cover its cells exactly once."""
    def mine(cell) -> bool:
        return int.from_bytes(hashlib.sha256(cell.key.encode()).digest()[:8], "big") % count == index

    return Planned([c for c in planned.cells if mine(c)], dict(planned.detail),
                   None if planned.todo is None else [c for c in planned.todo if mine(c)])


def record_stage_plan(stage: Stage, config, run_id: str, *, lake: Lake) -> None:
    """Record the stage's plan and nothing else (a run that dispatches the stage in groups: each unit computes its
    group's cells and records none)."""
    _record(stage, stage.plan(config, lake), config, run_id, lake)


def _record(stage: Stage, planned: Planned, config, run_id: str, lake: Lake) -> None:
    if stage.records_plan:
        record_plan(lake, stage=stage.lake_name, cells=planned.cells, run_id=run_id, per_models=stage.plan_per_models,
                    board=config.board, file=stage.plan_file)


def run_chunk(stage: Stage, config, chunk: Chunk, run_id: str, *, lake: Lake,
              after: list | None = None) -> StageReport:
    """Compute one chunk; its rows and failures are written as the stage emits them, its backend calls (what they
    cost) when it ends, however it ends. ``after``: the models the run's later stages use (``pool.Schedule``), kept
    by a stage that releases engines midway. A stopped run starts no chunk; one it stops midway raises ``Stopped``
    with the chunk's report so far (``Stopped.report``: what it wrote stays)."""
    stopping.check()
    start = time.perf_counter()
    emit = Emit(lake, stage.lake_name, stage.table, run_id, after=list(after or []))
    with metering.collect(run_id=run_id, stage=stage.name, role=stage.role) as ledger:
        shown = progress_display.current().chunk_started(  # read as it draws: a long chunk shows its progress
            stage.name, cells=lambda: emit.computed + emit.failed,
            tokens=lambda: sum(c["completion_tokens"] for c in list(ledger.calls)))
        try:
            stage.compute(config, list(chunk.cells), emit)
        except stopping.Stopped:
            log.warning("%s: stopped midway: %d computed, %d failed kept (%.1fs)", chunk.name, emit.computed,
                        emit.failed, time.perf_counter() - start)
            raise stopping.Stopped(StageReport(stage.name, computed=emit.computed, failed=emit.failed,
                                               seconds=time.perf_counter() - start, detail=emit.detail,
                                               first_error=emit.first_error)) from None
        finally:
            shown.done()
            emit.tally()
            if ledger.calls and not stopping.escalating():  # an escalated stop writes nothing more
                lake.write(BACKEND_CALLS_TABLE.name, pa.Table.from_pylist(ledger.calls, schema=BACKEND_CALLS_TABLE.schema),
                           partition={"run_id": run_id})
    report = StageReport(stage.name, computed=emit.computed, failed=emit.failed,
                         seconds=time.perf_counter() - start, detail=emit.detail, first_error=emit.first_error)
    log.info("%s: %d computed, %d failed (%.1fs)", chunk.name, emit.computed, emit.failed, report.seconds)
    return report


def finish_stage(config, run_id: str, reports: list[StageReport], config_path: str, *, lake: Lake,
                 group: list[str] | None = None) -> StageReport:
    """The stage's report (the plan's counts plus every chunk's), recorded in ``runs`` (a group's of a stage
    dispatched in groups: a row of its own); one warning when cells failed, with the first error (redacted). A stage
    run again in the same run (judged while units still generated, then for the rest) records the run's total: what
    the earlier pass computed counts as computed (``StageReport.after``)."""
    report = sum_reports(reports)
    if (earlier := recorded_stage(lake, run_id=run_id, stage=report.stage, group=group)) is not None:
        report = report.after(earlier)
    record_stage(lake, run_id=run_id, report=report, config=config_path, board=config.board, group=group)
    stopping.progress.stage_done(report.stage)
    progress_display.current().stage_done(report.stage)
    warn_failures(report)
    return report


def warn_failures(report: StageReport) -> None:
    if report.failed:
        log.warning("%s: %d of %d cell(s) failed, first error: %s", report.stage, report.failed, report.attempted,
                    report.first_error)


def run_stage(stage: Stage, config, run_id: str, *, lake: Lake) -> StageReport:
    """Plan and compute every chunk here, in order (what the flow does, without an orchestrator)."""
    chunks, planned = plan_stage(stage, config, run_id, lake=lake)
    report = sum_reports([planned, *(run_chunk(stage, config, c, run_id, lake=lake) for c in chunks)])
    progress_display.current().stage_done(stage.name)
    warn_failures(report)
    return report
